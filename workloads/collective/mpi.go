package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/t3dmpi"
	"github.com/msgsim/msgsim/workloads"
)

// openMPI builds MPI on the T3D (stacks/t3dmpi) for every PE.
func openMPI(m *t3d.Machine, s workloads.Spec) ([]stacks.Comm, error) {
	params, err := t3dmpi.ParseParams(s.File, s.Stack.ParamsField("stack"), s.Stack.Params)
	if err != nil {
		return nil, err
	}
	w, err := t3dmpi.New(m, params)
	if err != nil {
		return nil, fmt.Errorf("%s: stack: %w", s.File, err)
	}
	comms := make([]stacks.Comm, m.Procs())
	for i := range comms {
		comms[i] = w.Rank(i)
	}
	return comms, nil
}

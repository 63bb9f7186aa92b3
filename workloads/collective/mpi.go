package collective

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/workloads"
)

// openMPI builds MPI on the T3D for every PE: stacks/mpich with the
// put-based device ch_t3d (stack params device: ch_t3d).
func openMPI(m *t3d.Machine, s workloads.Spec) ([]stacks.Comm, error) {
	field := s.Stack.ParamsField("stack")
	params, err := mpich.ParamsFromYAMLAt(s.File, field, s.Stack.Params)
	if err != nil {
		return nil, err
	}
	w, err := mpich.NewWorld(m, params)
	var missing *machines.MissingCapability
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("%s: %s: %w (on the T3D, mpich runs with device: %s)", s.File, field, err, mpich.DeviceT3D)
	case err != nil:
		return nil, fmt.Errorf("%s: %s: %w", s.File, field, err)
	}
	return w.Comms(), nil
}

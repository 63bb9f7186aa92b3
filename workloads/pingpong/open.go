package pingpong

import (
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/workloads"
)

// Open builds the spec's machine and stack with procs ranks in eng and
// returns each rank's communicator: stack mpich on machine sx4 (devices
// ch_shmem, ch_lfshmem) or t3d (device ch_t3d). A new stack adds one case
// here.
func Open(eng *sim.Engine, s workloads.Spec, procs int) ([]stacks.Comm, error) {
	switch s.Stack.Name {
	case mpich.Name:
		w, err := mpich.Open(eng, s.File, s.Machine.Name, s.Machine.Params, s.Stack.Params, procs)
		if err != nil {
			return nil, err
		}
		return w.Comms(), nil
	}
	return nil, fmt.Errorf("%s: workload %s has no stack %q (known: %s)", s.File, Name, s.Stack.Name, mpich.Name)
}

// Check decodes and validates a series' workload, stack and machine params
// without running it (simrun validate).
func Check(s workloads.Spec) error {
	params := DefaultParams()
	if err := strictyaml.DecodeAt(s.File, "workload.params", s.Workload.Params, &params); err != nil {
		return err
	}
	if err := params.validate(); err != nil {
		return fmt.Errorf("%s: workload.params: %w", s.File, err)
	}
	_, err := Open(sim.NewEngine(s.Seed), s, params.Ranks)
	return err
}

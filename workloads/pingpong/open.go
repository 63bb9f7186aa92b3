package pingpong

import (
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/aclmpl"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/workloads"
)

// Open builds the spec's machine and stack with procs ranks in eng and
// returns each rank's communicator:
//
//   - stack mpich on machine sx4 (devices ch_shmem, ch_lfshmem) or t3d
//     (device ch_t3d);
//   - stack aclmpl on any machine with one-sided puts (the t3d): its
//     synchronous protocol with workload mode sync, its asynchronous one
//     with mode async.
//
// A new stack adds one case here.
func Open(eng *sim.Engine, s workloads.Spec, procs int) ([]stacks.Comm, error) {
	switch s.Stack.Name {
	case mpich.Name:
		params, err := mpich.ParamsFromYAMLAt(s.File, s.Stack.ParamsField("stack"), s.Stack.Params)
		if err != nil {
			return nil, err
		}
		m, err := openMachine(eng, s, procs)
		if err != nil {
			return nil, err
		}
		w, err := mpich.NewWorld(m, params)
		if err != nil {
			return nil, machines.Locate(s.File, s.Stack.ParamsField("stack"), s.Stack.Params, err)
		}
		return w.Comms(), nil
	case aclmpl.Name:
		params, err := aclmpl.ParseParams(s.File, s.Stack.ParamsField("stack"), s.Stack.Params)
		if err != nil {
			return nil, err
		}
		m, err := openMachine(eng, s, procs)
		if err != nil {
			return nil, err
		}
		l, err := aclmpl.New(m, params)
		if err != nil {
			return nil, fmt.Errorf("%s: stack %s: %w", s.File, aclmpl.Name, err)
		}
		c := make([]stacks.Comm, l.Size())
		for i := range c {
			c[i] = l.PE(i)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%s: workload %s has no stack %q (known: %s, %s)", s.File, Name, s.Stack.Name, mpich.Name, aclmpl.Name)
}

// openMachine builds the spec's machine (for a stack that does not build
// its own) with procs processors.
func openMachine(eng *sim.Engine, s workloads.Spec, procs int) (machines.Machine, error) {
	field := s.Machine.ParamsField("machine")
	switch s.Machine.Name {
	case sx4.Name:
		return sx4.FromYAMLAt(eng, s.File, field, s.Machine.Params, procs)
	case t3d.Name:
		mp, err := t3d.ParseParams(s.File, field, s.Machine.Params)
		if err != nil {
			return nil, err
		}
		m, err := t3d.New(eng, procs, mp)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", s.File, field, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("%s: workload %s has no machine %q (known: %s, %s)", s.File, Name, s.Machine.Name, sx4.Name, t3d.Name)
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
	comms, err := Open(sim.NewEngine(s.Seed), s, params.Ranks)
	if err != nil {
		return err
	}
	// Each message size must fit the ranks' memory (each size runs in its
	// own engine: checking the largest is enough): a configuration error,
	// not a failed delivery at run time.
	i := 0
	for j, n := range params.Sizes {
		if n > params.Sizes[i] {
			i = j
		}
	}
	for rank := 0; rank < 2; rank++ {
		if _, err := comms[rank].Buffer(params.Sizes[i]); err != nil {
			field := fmt.Sprintf("sizes[%d]", i)
			at := strictyaml.Find(s.Workload.Params, field)
			if at == nil {
				at = s.Workload.Params
			}
			return strictyaml.Errorf(s.File, at, "workload.params."+field, "a %d-byte message buffer does not fit rank %d's memory: %v", params.Sizes[i], rank, err)
		}
	}
	return nil
}

package pingpong

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// commCapability is what the ping-pong needs of a stack.
const commCapability = "message passing (stacks.Comm)"

// Open opens the spec's stack on its machine with procs ranks in eng and
// returns each rank's communicator: any stack whose ranks offer
// stacks.Comm (mpich on the SX-4 or the T3D, ACLMPL on a machine with
// one-sided puts, ...); another gives a *machines.MissingCapability.
func Open(eng *sim.Engine, s workloads.Spec, procs int) ([]stacks.Comm, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	comms, err := stacks.As[stacks.Comm](w, "workload "+Name, commCapability)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return comms, nil
}

// parseParams decodes and validates the workload's params.
func parseParams(s workloads.Spec) (Params, error) {
	params := DefaultParams()
	field := s.Workload.ParamsField("workload")
	if err := strictyaml.DecodeAt(s.File, field, s.Workload.Params, &params); err != nil {
		return Params{}, err
	}
	if err := params.validate(); err != nil {
		var errs []error // one per problem, each naming the params
		for _, e := range strictyaml.Errors(err) {
			errs = append(errs, fmt.Errorf("%s: %s: %w", s.File, field, e))
		}
		return Params{}, errors.Join(errs...)
	}
	return params, nil
}

// Check decodes and validates a series' workload params and opens its
// stack with the workload's ranks, without running it (simrun validate).
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	var ranks []stacks.Rank
	if params.Mode == ModePut {
		var ones []Putter
		ones, err = OpenPutters(sim.NewEngine(s.Seed), s, params.Ranks)
		for _, x := range ones {
			ranks = append(ranks, x)
		}
	} else {
		var comms []stacks.Comm
		comms, err = Open(sim.NewEngine(s.Seed), s, params.Ranks)
		for _, x := range comms {
			ranks = append(ranks, x)
		}
	}
	var se *strictyaml.Error
	var mc *machines.MissingCapability
	switch {
	case err != nil && !errors.As(err, &se) && !errors.As(err, &mc):
		// The machine cannot be built with this many processes: the
		// workload's ranks are at fault, not the machine's params.
		why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), s.File+": "), "machine.params: ")
		return fmt.Errorf("%s: %s.ranks: %d ranks cannot run on this machine: %s", s.File, s.Workload.ParamsField("workload"), params.Ranks, why)
	case err != nil:
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
		if _, err := ranks[rank].Buffer(params.Sizes[i]); err != nil {
			field := fmt.Sprintf("sizes[%d]", i)
			at := strictyaml.Find(s.Workload.Params, field)
			if at == nil {
				at = s.Workload.Params
			}
			return strictyaml.Errorf(s.File, at, s.Workload.ParamsField("workload")+"."+field, "a %d-byte message buffer does not fit rank %d's memory: %v", params.Sizes[i], rank, err)
		}
	}
	return nil
}

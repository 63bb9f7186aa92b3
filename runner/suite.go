package runner

import (
	"io"
	"slices"

	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// Scenario is one scenario of a suite, loaded and resolved into the specs
// of its series.
type Scenario struct {
	Name     string
	Scenario *scenarios.Scenario
	Specs    []workloads.Spec
}

// Cost orders the scenarios of a suite, largest first: the declared cost
// (cost.wall_seconds), else the number of series (each at least a
// simulation), so that the long ones start first and the short ones fill
// the other workers' gaps.
func (x Scenario) Cost() float64 {
	if c := x.Scenario.Cost.WallSeconds; c > 0 {
		return c
	}
	return float64(len(x.Specs)) * 1e-3
}

// Suite runs every series of every scenario on one pool of jobs workers
// (Run), the scenarios largest first (Cost), each under its own watchdog
// (WallLimit), and returns each scenario's outcomes in series order: the
// same as a Run of it alone gives, whatever the order and the
// parallelism.
func Suite(all []Scenario, jobs int, progress io.Writer) ([][]Outcome, error) {
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, cb := all[a].Cost(), all[b].Cost()
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	groups := make([]Group, len(all))
	for k, i := range order {
		groups[k] = Group{Name: all[i].Name, Specs: all[i].Specs, Watchdog: WallLimit(all[i].Scenario)}
	}
	runs, err := Run(groups, jobs, progress)
	if err != nil {
		return nil, err
	}
	out := make([][]Outcome, len(all))
	for k, i := range order {
		out[i] = runs[k]
	}
	return out, nil
}

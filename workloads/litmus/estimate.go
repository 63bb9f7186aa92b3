package litmus

import (
	"github.com/msgsim/msgsim/litmus"
	"github.com/msgsim/msgsim/workloads"
)

// Estimate forecasts the series' events: runs times a run's events; an
// exhaustive exploration is bounded by its own state limit.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, _, err := Decode(s)
	if err != nil || p.Exhaustive {
		return workloads.Estimate{Param: "runs"}, err
	}
	return workloads.Estimate{Events: litmus.EstimateRuns(p.Runs), Param: "runs"}, nil
}

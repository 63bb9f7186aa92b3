package litmus

import "github.com/msgsim/msgsim/workloads"

// runEvents is about what one run of a test costs (TestSpeed: a few dozen
// events on a CPU model, a few hundred on a machine).
const runEvents = 300

// Estimate forecasts the series' events: runs times a run's events; an
// exhaustive exploration is bounded by its own state limit.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, _, err := Decode(s)
	if err != nil || p.Exhaustive {
		return workloads.Estimate{Param: "runs"}, err
	}
	return workloads.Estimate{Events: EstimateRuns(p.Runs), Param: "runs"}, nil
}

// EstimateRuns forecasts the events of runs sampled runs of a test (simrun
// litmus --runs checks it against --max-events as run does a series).
func EstimateRuns(runs int) float64 { return float64(runs) * runEvents }

package remotecopy

import "github.com/msgsim/msgsim/workloads"

// Estimate forecasts the series' events: each get moves a section of at
// most size x size doubles, a message a column at worst.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseParams(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	for _, n := range p.Sizes {
		ev += float64(p.Repetitions) * float64(max(n, p.Rows, 1)) * workloads.MessageEvents(8*n)
	}
	return workloads.Estimate{Events: ev, Param: "repetitions"}, nil
}

// EstimateContention forecasts acc-contention's events: every rank's
// accumulates and read-modify-writes at every machine size.
func EstimateContention(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseContention(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	for _, n := range p.Ranks {
		ev += float64(n) * float64(p.Rounds) * 2 * workloads.MessageEvents(8*p.Elems)
	}
	return workloads.Estimate{Events: ev, Param: "rounds"}, nil
}

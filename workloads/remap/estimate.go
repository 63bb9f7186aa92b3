package remap

import "github.com/msgsim/msgsim/workloads"

// Estimate forecasts the series' events: each remap moves every pair of
// ranks' share of the N x N array of doubles.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseParams(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	r := max(p.Ranks, 1)
	for _, n := range p.Sizes {
		ev += float64(p.Repetitions) * float64(r*r) * workloads.MessageEvents(n*n*8/(r*r))
	}
	return workloads.Estimate{Events: ev, Param: "repetitions"}, nil
}

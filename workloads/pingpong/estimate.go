package pingpong

import "github.com/msgsim/msgsim/workloads"

// Estimate forecasts the series' events: two messages a round trip, every
// repetition and warm-up of every size.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseParams(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	for _, n := range p.Sizes {
		ev += (float64(p.Repetitions) + float64(p.Warmup)) * 2 * workloads.MessageEvents(n)
	}
	return workloads.Estimate{Events: ev, Param: "repetitions", Procs: p.Ranks, ProcsParam: "ranks"}, nil
}

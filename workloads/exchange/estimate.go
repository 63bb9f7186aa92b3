package exchange

import "github.com/msgsim/msgsim/workloads"

// Estimate forecasts the series' events: one message from every rank to
// the next on the ring.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseParams(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	n := float64(p.Procs)
	return workloads.Estimate{Events: n * workloads.MessageEvents(p.Bytes), Param: "procs", Procs: p.Procs, ProcsParam: "procs"}, nil
}

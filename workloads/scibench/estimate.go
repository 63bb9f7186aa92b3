package scibench

import (
	"math"

	"github.com/msgsim/msgsim/workloads"
)

// Estimate returns the estimator of the benchmark kind (barrier,
// alltoall or random): its messages at every number of processes.
func Estimate(kind string) func(workloads.Spec) (workloads.Estimate, error) {
	return func(s workloads.Spec) (workloads.Estimate, error) {
		p, err := parse(s)
		if err != nil {
			return workloads.Estimate{}, err
		}
		ev, param := 0.0, "repetitions"
		for _, procs := range p.Procs {
			n := float64(procs)
			ops := float64(p.Repetitions + p.Warmup)
			switch kind {
			case "barrier":
				ev += ops * 2 * n * math.Max(1, math.Log2(n)) * workloads.MessageEvents(0)
			case "alltoall":
				ev += ops * n * (n - 1) * workloads.MessageEvents(p.BlockBytes)
			default:
				ev, param = ev+float64(p.Messages)*workloads.MessageEvents(p.BlockBytes), "messages"
			}
		}
		e := workloads.Estimate{Events: ev, Param: param, ProcsParam: "procs"}
		for _, n := range p.Procs {
			e.Procs = max(e.Procs, n)
		}
		if kind == "random" {
			e.Sizes = randomSizes
		} else if kind == "alltoall" {
			e.Sizes = []int{p.BlockBytes}
		}
		return e, nil
	}
}

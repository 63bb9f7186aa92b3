package commdup

import "github.com/msgsim/msgsim/workloads"

// Estimate forecasts the series' events: each MPI_Comm_dup of each thread
// is an allreduce over the processes.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	p, err := parseParams(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	for _, n := range p.Procs {
		ev += float64(p.Dups) * float64(p.Threads) * 2 * float64(n) * workloads.MessageEvents(8)
	}
	return workloads.Estimate{Events: ev, Param: "dups"}, nil
}

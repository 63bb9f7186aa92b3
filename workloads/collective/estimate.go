package collective

import "github.com/msgsim/msgsim/workloads"

// Estimate returns the estimator of the workload of kind: the messages
// of one operation at every partition size and message length.
func Estimate(kind string) func(workloads.Spec) (workloads.Estimate, error) {
	return func(s workloads.Spec) (workloads.Estimate, error) {
		p, err := parseParams(s, kind)
		if err != nil {
			return workloads.Estimate{}, err
		}
		ev, most := 0.0, 0
		for _, pes := range p.PEs {
			most = max(most, pes)
			n := float64(pes)
			msgs := n - 1 // one-to-all, all-to-one, the latency ring
			switch kind {
			case "alltoall":
				msgs = n * (n - 1)
			case "table":
				msgs = 4 * n * n // every pattern, all-to-all the largest
			case "bcast", "reduce":
				msgs = 2 * (n - 1) // a tree's n-1 messages, each with its handshake
			}
			for _, b := range p.Bytes {
				ev += msgs * workloads.MessageEvents(b)
			}
		}
		return workloads.Estimate{Events: ev, Param: "pes", Procs: most, ProcsParam: "pes"}, nil
	}
}

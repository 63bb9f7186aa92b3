// Package all is the registry of every built-in: registry.Default's
// machines, stacks and litmus adapters, and the built-in workloads. The
// workloads are registered here rather than in package registry because
// their own tests resolve machines and stacks through registry.Default.
// Adding a workload is a new package and one line in Workloads.
//
// Layer: imports registry and every built-in workload; commands and tests
// that want every built-in import it.
package all

import (
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/workloads/collective"
	"github.com/msgsim/msgsim/workloads/commdup"
	"github.com/msgsim/msgsim/workloads/exchange"
	"github.com/msgsim/msgsim/workloads/explore"
	"github.com/msgsim/msgsim/workloads/litmus"
	"github.com/msgsim/msgsim/workloads/pingpong"
	"github.com/msgsim/msgsim/workloads/remap"
	"github.com/msgsim/msgsim/workloads/remotecopy"
	"github.com/msgsim/msgsim/workloads/scibench"
)

// Default is registry.Default with the built-in workloads.
func Default() *registry.Registry {
	r := registry.Default()
	for _, e := range Workloads() {
		if err := r.AddWorkload(e); err != nil {
			panic(err) // two built-ins with one name: a bug, found by every test
		}
	}
	return r
}

// Workloads are the built-in workloads: each a scenario's workload name,
// the function that runs it and the one that checks its params.
func Workloads() []registry.WorkloadEntry {
	w := registry.Workload
	return []registry.WorkloadEntry{
		w("litmus", litmus.Run, litmus.Check),
		w("pingpong", pingpong.Run, pingpong.Check),
		w("onetoall", collective.RunOneToAll, collective.Check("onetoall")),
		w("alltoone", collective.RunAllToOne, collective.Check("alltoone")),
		w("alltoall", collective.RunAllToAll, collective.Check("alltoall")),
		w("bcast", collective.RunBcast, collective.Check("bcast")),
		w("reduce", collective.RunReduce, collective.Check("reduce")),
		w("word-latency", collective.RunLatency, collective.Check("latency")),
		w("pattern-table", collective.RunTable, collective.Check("table")),
		w(remotecopy.Name, remotecopy.Run, remotecopy.Check),
		w(remotecopy.ContentionName, remotecopy.RunContention, remotecopy.CheckContention),
		w(remap.Name, remap.Run, remap.Check),
		w(commdup.Name, commdup.Run, commdup.Check),
		w(exchange.Name, exchange.Run, exchange.Check),
		w(explore.Name, explore.Run, explore.Check),
		w("barrier-time", scibench.RunBarrier, scibench.Check),
		w("alltoall-mbps", scibench.RunAlltoall, scibench.Check),
		w("random-messages", scibench.RunRandom, scibench.Check),
	}
}

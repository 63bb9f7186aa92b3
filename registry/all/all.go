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
	"github.com/msgsim/msgsim/workloads/trace"
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
	w, est := registry.Workload, registry.Estimates
	coll := func(kind string) registry.WorkloadOption {
		return registry.Params(func() collective.Params { return collective.DefaultParams(kind) })
	}
	return []registry.WorkloadEntry{
		w("litmus", litmus.Run, litmus.Check, registry.Params(litmus.DefaultParams), est(litmus.Estimate)),
		w("pingpong", pingpong.Run, pingpong.Check, registry.Params(pingpong.DefaultParams), est(pingpong.Estimate)),
		w("onetoall", collective.RunOneToAll, collective.Check("onetoall"), coll("onetoall"), est(collective.Estimate("onetoall"))),
		w("alltoone", collective.RunAllToOne, collective.Check("alltoone"), coll("alltoone"), est(collective.Estimate("alltoone"))),
		w("alltoall", collective.RunAllToAll, collective.Check("alltoall"), coll("alltoall"), est(collective.Estimate("alltoall"))),
		w("bcast", collective.RunBcast, collective.Check("bcast"), coll("bcast"), est(collective.Estimate("bcast"))),
		w("reduce", collective.RunReduce, collective.Check("reduce"), coll("reduce"), est(collective.Estimate("reduce"))),
		w("word-latency", collective.RunLatency, collective.Check("latency"), coll("latency"), est(collective.Estimate("latency"))),
		w("pattern-table", collective.RunTable, collective.Check("table"), coll("table"), est(collective.Estimate("table"))),
		w(remotecopy.Name, remotecopy.Run, remotecopy.Check, registry.Params(remotecopy.DefaultParams), est(remotecopy.Estimate)),
		w(remotecopy.ContentionName, remotecopy.RunContention, remotecopy.CheckContention, registry.Params(remotecopy.DefaultContentionParams), est(remotecopy.EstimateContention)),
		w(remap.Name, remap.Run, remap.Check, registry.Params(remap.DefaultParams), est(remap.Estimate)),
		w(commdup.Name, commdup.Run, commdup.Check, registry.Params(commdup.DefaultParams), est(commdup.Estimate)),
		w(exchange.Name, exchange.Run, exchange.Check, registry.Params(exchange.DefaultParams), est(exchange.Estimate)),
		w(explore.Name, explore.Run, explore.Check, registry.Params(explore.DefaultParams)),
		w("barrier-time", scibench.RunBarrier, scibench.Check, registry.Params(scibench.DefaultParams), est(scibench.Estimate("barrier"))),
		w("alltoall-mbps", scibench.RunAlltoall, scibench.Check, registry.Params(scibench.DefaultParams), est(scibench.Estimate("alltoall"))),
		w("random-messages", scibench.RunRandom, scibench.Check, registry.Params(scibench.DefaultParams), est(scibench.Estimate("random"))),
		w(trace.Name, trace.Run, trace.Check, registry.Params(trace.DefaultParams), est(trace.Estimate)),
	}
}

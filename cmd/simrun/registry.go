package main

import (
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/collective"
	"github.com/msgsim/msgsim/workloads/commdup"
	"github.com/msgsim/msgsim/workloads/explore"
	"github.com/msgsim/msgsim/workloads/litmus"
	"github.com/msgsim/msgsim/workloads/pingpong"
	"github.com/msgsim/msgsim/workloads/remap"
	"github.com/msgsim/msgsim/workloads/remotecopy"
	"github.com/msgsim/msgsim/workloads/scibench"
)

// runners maps a scenario's workload name to the function that runs it. Add
// one line per workload.
func runners() map[string]workloads.Runner {
	return map[string]workloads.Runner{
		"litmus":                  litmus.Run,
		"pingpong":                pingpong.Run,
		"onetoall":                collective.RunOneToAll,
		"alltoone":                collective.RunAllToOne,
		"alltoall":                collective.RunAllToAll,
		"bcast":                   collective.RunBcast,
		"reduce":                  collective.RunReduce,
		"word-latency":            collective.RunLatency,
		"pattern-table":           collective.RunTable,
		remotecopy.Name:           remotecopy.Run,
		remotecopy.ContentionName: remotecopy.RunContention,
		remap.Name:                remap.Run,
		commdup.Name:              commdup.Run,
		explore.Name:              explore.Run,
		"barrier-time":            scibench.RunBarrier,
		"alltoall-mbps":           scibench.RunAlltoall,
		"random-messages":         scibench.RunRandom,
	}
}

// checkers optionally maps a workload name to a function that decodes and
// checks a series' params (machine, stack and workload) without running it;
// simrun validate calls it. Add one line per workload that has one.
func checkers() map[string]func(workloads.Spec) error {
	return map[string]func(workloads.Spec) error{
		"litmus":                  litmus.Check,
		"pingpong":                pingpong.Check,
		"onetoall":                collective.Check("onetoall"),
		"alltoone":                collective.Check("alltoone"),
		"alltoall":                collective.Check("alltoall"),
		"bcast":                   collective.Check("bcast"),
		"reduce":                  collective.Check("reduce"),
		"word-latency":            collective.Check("latency"),
		"pattern-table":           collective.Check("table"),
		remotecopy.Name:           remotecopy.Check,
		remotecopy.ContentionName: remotecopy.CheckContention,
		remap.Name:                remap.Check,
		commdup.Name:              commdup.Check,
		explore.Name:              explore.Check,
		"barrier-time":            scibench.Check,
		"alltoall-mbps":           scibench.Check,
		"random-messages":         scibench.Check,
	}
}

package main

import (
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/litmus"
	"github.com/msgsim/msgsim/workloads/pingpong"
)

// runners maps a scenario's workload name to the function that runs it. Add
// one line per workload.
func runners() map[string]workloads.Runner {
	return map[string]workloads.Runner{
		"litmus":   litmus.Run,
		"pingpong": pingpong.Run,
	}
}

// checkers optionally maps a workload name to a function that decodes and
// checks a series' params (machine, stack and workload) without running it;
// simrun validate calls it. Add one line per workload that has one.
func checkers() map[string]func(workloads.Spec) error {
	return map[string]func(workloads.Spec) error{
		"litmus":   litmus.Check,
		"pingpong": pingpong.Check,
	}
}

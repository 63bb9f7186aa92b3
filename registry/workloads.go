package registry

import (
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/workloads"
)

// WorkloadEntry is a registered workload: what a scenario's workload name
// runs.
type WorkloadEntry struct {
	Name string
	Run  workloads.Runner
	// Check decodes and checks a series' params (machine, stack and
	// workload) without running it, for simrun validate; nil: none.
	Check func(workloads.Spec) error
	// Defaults returns the workload's default params (for simrun
	// params); nil: not listed.
	Defaults func() any
	// Estimate forecasts a series' events before it runs (simrun
	// validate and run refuse a scenario above their limit); nil: none.
	Estimate func(workloads.Spec) (workloads.Estimate, error)
}

// Estimates gives the workload's estimator of a series' events.
func Estimates(f func(workloads.Spec) (workloads.Estimate, error)) WorkloadOption {
	return func(e *WorkloadEntry) { e.Estimate = f }
}

// WorkloadOption sets an optional part of a WorkloadEntry.
type WorkloadOption func(*WorkloadEntry)

// Params gives the workload's default params, for listings.
func Params[P any](defaults func() P) WorkloadOption {
	return func(e *WorkloadEntry) { e.Defaults = func() any { return defaults() } }
}

// Workload is the entry of workload name, run by run and checked by check
// (nil: run checks its params when it runs).
func Workload(name string, run workloads.Runner, check func(workloads.Spec) error, opts ...WorkloadOption) WorkloadEntry {
	e := WorkloadEntry{Name: name, Run: run, Check: check}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// AddWorkload registers a workload; its name must be new.
func (r *Registry) AddWorkload(e WorkloadEntry) error {
	if e.Name == "" || e.Run == nil || slices.ContainsFunc(r.workloads, func(x WorkloadEntry) bool { return x.Name == e.Name }) {
		return fmt.Errorf("registry: workload %q has no name or runner, or its name is taken", e.Name)
	}
	r.workloads = append(r.workloads, e)
	return nil
}

// Workloads are the registered workloads, in registration order.
func (r *Registry) Workloads() []WorkloadEntry { return slices.Clone(r.workloads) }

// LookupWorkload finds a workload by name.
func (r *Registry) LookupWorkload(name string) (WorkloadEntry, bool) {
	i := slices.IndexFunc(r.workloads, func(x WorkloadEntry) bool { return x.Name == name })
	if i < 0 {
		return WorkloadEntry{}, false
	}
	return r.workloads[i], true
}

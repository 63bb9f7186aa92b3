package all_test

import (
	"fmt"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// A built-in workload run by name, as simrun runs a scenario's series:
// resolve the machine and stack, look the workload up, and call its runner
// with the spec (params as YAML, defaults for the rest).
func ExampleDefault() {
	reg := all.Default()
	open, err := reg.Resolve("example.yaml", registry.Ref{Name: "t3d"}, registry.Ref{Name: "shmem"})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, ok := reg.LookupWorkload("pingpong")
	if !ok {
		fmt.Println("no pingpong workload")
		return
	}
	var params yaml.Node
	if err := yaml.Unmarshal([]byte("{sizes: [8, 1024], mode: put}"), &params); err != nil {
		fmt.Println(err)
		return
	}
	spec := workloads.Spec{
		Scenario: "example", Series: "shmem-t3d", File: "example.yaml", Seed: 1,
		Limits:  sim.Limits{MaxEvents: 1_000_000},
		Machine: "t3d", Stack: "shmem", Open: open, Run: w.Run,
		Workload: workloads.Component{Name: w.Name, Params: &params},
	}
	if w.Check != nil {
		if err := w.Check(spec); err != nil {
			fmt.Println(err)
			return
		}
	}
	res, err := spec.Run(spec)
	if err != nil || len(res.Failures) > 0 {
		fmt.Println(err, res.Failures)
		return
	}
	for _, r := range res.Rows {
		fmt.Printf("%s %s=%g: %s %.4g %s\n", r.Series, r.XName, r.X, r.Metric, r.Value, r.Unit)
	}
	// Output:
	// shmem-t3d bytes=8: latency_us 3.181 us
	// shmem-t3d bytes=8: bandwidth_MBps 2.515 MB/s
	// shmem-t3d bytes=1024: latency_us 12.82 us
	// shmem-t3d bytes=1024: bandwidth_MBps 79.9 MB/s
}

// The built-in workloads, by the name a scenario's workload.name gives.
func ExampleWorkloads() {
	for _, w := range all.Workloads() {
		fmt.Println(w.Name)
	}
	// Output:
	// litmus
	// pingpong
	// onetoall
	// alltoone
	// alltoall
	// bcast
	// reduce
	// word-latency
	// pattern-table
	// remote-get
	// acc-contention
	// remap
	// comm-dup
	// exchange
	// explore
	// barrier-time
	// alltoall-mbps
	// random-messages
	// trace
}

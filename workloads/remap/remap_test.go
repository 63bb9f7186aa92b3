package remap

import (
	"testing"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestRemapBothStacks: the remap is exact through ARMCI (shared-memory
// port) and through MPICH's ch_lfshmem on the SX-4, and through ARMCI on
// the SP and the T3D (the same program on every port).
func TestRemapBothStacks(t *testing.T) {
	for _, c := range []struct{ machine, stack, params string }{
		{"sx4", "armci", "{}"}, {"sx4", "mpich", "{device: ch_lfshmem}"}, {"sp", "armci", "{}"}, {"t3d", "armci", "{}"},
	} {
		open, err := registry.Default().Resolve("t.yaml", registry.Ref{Name: c.machine}, registry.Ref{Name: c.stack, Params: node(t, c.params)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(workloads.Spec{Scenario: "t", Series: "s", File: "t.yaml", Seed: 1, Limits: sim.Limits{MaxEvents: 20_000_000},
			Machine: c.machine, Stack: c.stack, Open: open, Workload: workloads.Component{Name: Name, Params: node(t, "{sizes: [12, 40], ranks: 4, repetitions: 1}")}})
		if err != nil {
			t.Fatalf("%s/%s: %v", c.machine, c.stack, err)
		}
		if len(res.Failures) > 0 || len(res.Rows) != 2 {
			t.Fatalf("%s/%s: %v %v", c.machine, c.stack, res.Failures, res.Rows)
		}
		t.Logf("%s/%s: %v", c.machine, c.stack, res.Rows)
	}
}

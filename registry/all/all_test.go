package all

import "testing"

// TestDefault: the built-ins register without a clash, each workload with
// a runner and a check.
func TestDefault(t *testing.T) {
	r := Default()
	if len(r.Workloads()) != len(Workloads()) || len(r.Machines()) == 0 || len(r.Stacks()) == 0 || len(r.LitmusMachines()) != len(r.Machines()) {
		t.Fatalf("%d workloads, %d machines, %d stacks, %d litmus adapters", len(r.Workloads()), len(r.Machines()), len(r.Stacks()), len(r.LitmusMachines()))
	}
	for _, w := range r.Workloads() {
		if w.Run == nil || w.Check == nil {
			t.Errorf("workload %s: runner or check missing", w.Name)
		}
	}
}

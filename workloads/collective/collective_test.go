package collective

import (
	"testing"

	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

func node(t testing.TB, s string) *yaml.Node {
	t.Helper()
	if s == "" {
		return nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

func spec(t testing.TB, stack, workload string) workloads.Spec {
	return workloads.Spec{
		Scenario: "test", Series: stack + " " + workload, File: "test.yaml", Seed: 1,
		Machine:  workloads.Component{Name: "t3d"},
		Stack:    workloads.Component{Name: stack},
		Workload: workloads.Component{Name: "x", Params: node(t, workload)},
	}
}

// value runs one case and returns its only row's value.
func value(t testing.TB, run workloads.Runner, stack, workload string) float64 {
	t.Helper()
	res, err := run(spec(t, stack, workload))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		t.Errorf("%s %s: %v", stack, workload, f)
	}
	if len(res.Rows) != 1 {
		t.Fatalf("%s %s: %d rows, notes %v", stack, workload, len(res.Rows), res.Notes)
	}
	return res.Rows[0].Value
}

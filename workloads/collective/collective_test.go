package collective

import (
	"testing"

	"github.com/msgsim/msgsim/registry"
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

// resolve is the spec of a series of stack (with its params) on machine,
// resolved through the built-in registry as simrun does.
func resolve(t testing.TB, machine, stack, stackParams, workload string) (workloads.Spec, error) {
	t.Helper()
	open, err := registry.Default().Resolve("test.yaml",
		registry.Ref{Name: machine}, registry.Ref{Name: stack, Params: node(t, stackParams)})
	return workloads.Spec{
		Scenario: "test", Series: stack + " " + workload, File: "test.yaml", Seed: 1,
		Machine: machine, Stack: stack, Open: open,
		Workload: workloads.Component{Name: "x", Params: node(t, workload)},
	}, err
}

// specOn is the resolved spec of a series on machine.
func specOn(t testing.TB, machine, stack, stackParams, workload string) workloads.Spec {
	t.Helper()
	s, err := resolve(t, machine, stack, stackParams, workload)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// spec is the resolved spec of a series on the T3D (mpich with its device
// ch_t3d).
func spec(t testing.TB, stack, workload string) workloads.Spec {
	t.Helper()
	params := ""
	if stack == "mpich" {
		params = "{device: ch_t3d}"
	}
	return specOn(t, "t3d", stack, params, workload)
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

package litmus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

func spec(t *testing.T, file, params string) workloads.Spec {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
		t.Fatal(err)
	}
	return workloads.Spec{Scenario: "s", Series: "s", File: file, Seed: 1,
		Workload: workloads.Component{Name: "litmus", Params: doc.Content[0], Field: "workload"}}
}

func TestRunner(t *testing.T) {
	res, err := Run(spec(t, "x.yaml", "{test: MP, model: pso, runs: 1000}"))
	if err != nil {
		t.Fatal(err)
	}
	var observed, pos, states float64
	for _, r := range res.Rows {
		switch r.Metric {
		case "observed":
			observed = r.Value
		case "positive":
			pos = r.Value
		case "count":
			states += r.Value
		}
	}
	if observed != 1 || pos == 0 || states != 1000 {
		t.Fatalf("rows %+v", res.Rows)
	}
	if res.Events == 0 || len(res.Notes) == 0 || !strings.HasPrefix(res.Notes[len(res.Notes)-1], "s: Observation MP Sometimes") {
		t.Fatalf("notes %q", res.Notes)
	}
}

// TestRunnerExhaustive: params.exhaustive lists every reachable state once.
func TestRunnerExhaustive(t *testing.T) {
	res, err := Run(spec(t, "x.yaml", "{test: MP, model: pso, exhaustive: true}"))
	if err != nil {
		t.Fatal(err)
	}
	var states, pos float64
	for _, r := range res.Rows {
		switch r.Metric {
		case "count":
			states += r.Value
		case "positive":
			pos = r.Value
		}
	}
	if states != 4 || pos != 1 || !strings.HasSuffix(res.Notes[len(res.Notes)-1], "Observation MP Sometimes 1 3") {
		t.Fatalf("rows %+v notes %q", res.Rows, res.Notes)
	}
	_, err = Run(spec(t, "x.yaml", "{test: MP+spin, model: noncoherent, exhaustive: true}"))
	if err == nil || !sim.IsLivelock(err) || !strings.Contains(err.Error(), "paths cannot finish") || !strings.Contains(err.Error(), "stale copy") {
		t.Fatalf("got %v", err)
	}
}

// TestRunnerLivelock: when every run livelocks, the histogram has one bar
// (the runs with no final state, so the counts sum to the runs) and the
// observation says no run finished, not "Never".
func TestRunnerLivelock(t *testing.T) {
	res, err := Run(spec(t, "x.yaml", "{test: MP+spin, model: noncoherent, runs: 10}"))
	if !sim.IsLivelock(err) || !strings.Contains(err.Error(), "10 of 10 runs failed") {
		t.Fatalf("got %v", err)
	}
	var counts []report.Row
	for _, r := range res.Rows {
		if r.Metric == "count" {
			counts = append(counts, r)
		}
	}
	if len(counts) != 1 || counts[0].X != report.NoFinalState || counts[0].Value != 10 || counts[0].XName != "state_r0r1" {
		t.Errorf("count rows %+v, want one at x %d: 10 runs", counts, report.NoFinalState)
	}
	if last := res.Notes[len(res.Notes)-1]; !strings.HasSuffix(last, "Observation MP+spin None 0 0 (no run finished)") {
		t.Errorf("last line %q", last)
	}
}

func TestRunnerErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("base: tso\nstore_buffer:\n  order: random\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("base: tso\nstore_buffer: {order: reordered}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "s.yaml")
	for _, c := range []struct{ params, want string }{
		{"{test: MP, runz: 3}", `s.yaml:1:12: field workload.params.runz: unknown field "runz" (did you mean "runs"?)`},
		{"{test: XX}", "s.yaml:1:8: field workload.params.test: unknown litmus test"},
		{"{test: MP, runs: 0}", "field workload.params.runs: must be positive"},
		{"{model: sc}", `field workload.params.test: missing required field "test"`},
		{"{test: MP, model: nosuch}", "neither a built-in model"},
		{"{test: MP, model: bad.yaml}", "bad.yaml:3:10: field store_buffer.order: store_buffer.order must be"},
	} {
		_, err := Run(spec(t, scen, c.params))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.params, err, c.want)
		}
	}
	// A model file relative to the scenario's directory, reordering stores.
	res, err := Run(spec(t, scen, "{test: MP, model: good.yaml, runs: 1000}"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "Observation MP Sometimes") {
		t.Fatalf("custom pso-like model did not show MP:\n%s", strings.Join(res.Notes, "\n"))
	}
}

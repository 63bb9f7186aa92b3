package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"gopkg.in/yaml.v3"
)

const full = `name: demo
title: Demo
seed: 7
machine:
  name: sx4
  params:
    semop_us: 40
    cache: {lines: 128, coherent: false}
stack:
  name: mpich
  params: {device: ch_shmem, eager_bytes: 16384}
workload:
  name: pingpong
  params: {sizes: [0, 1024, 65536], iterations: 100}
series:
  - name: ch_shmem
  - name: ch_lfshmem
    stack:
      params: {device: ch_lfshmem}
    machine:
      params:
        cache: {coherent: true}
  - name: on-t3d
    machine: {name: t3d}
figures:
  - file: fig4.png
    title: Latency
    panels:
      - metric: latency_us
        x_scale: log
        y_scale: log
        series: [ch_shmem, ch_lfshmem]
references:
  - {series: ch_lfshmem, metric: latency_us, x: 0, value: 3.5, unit: us, source: "mpich-sx4.txt", held_out: true}
expect:
  failure: corruption
  why: no fence
limits: {max_events: 1e7, max_sim_time_us: 1000, max_wall_seconds: 10}
`

func TestParseFull(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || s.Seed != 7 || s.File != "demo.yaml" || s.Limits.MaxEvents != 1e7 || s.Expect.Failure != FailureCorruption {
		t.Errorf("parsed %+v", s)
	}
	p := s.Figures[0].Panels[0]
	if p.X != "bytes" || p.XScale != ScaleLog || len(p.Series) != 2 {
		t.Errorf("panel %+v", p)
	}
	if !s.References[0].HeldOut || s.References[0].Value != 3.5 {
		t.Errorf("reference %+v", s.References[0])
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse("d.yaml", []byte("name: d\nworkload: {name: w}\nfigures: [{file: f.svg, panels: [{metric: m}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Figures[0].Panels[0]
	if s.Seed != 1 || p.X != "bytes" || p.XScale != ScaleLinear || p.YScale != ScaleLinear {
		t.Errorf("defaults: seed %d, panel %+v", s.Seed, p)
	}
	r := s.Resolved()
	if len(r) != 1 || r[0].Name != "d" || r[0].Index != -1 || r[0].Workload.Name != "w" || r[0].Machine.HasParams() {
		t.Errorf("resolved %+v", r)
	}
}

type machineParams struct {
	SemopUS float64 `yaml:"semop_us"`
	Cache   struct {
		Lines    int  `yaml:"lines"`
		Coherent bool `yaml:"coherent"`
	} `yaml:"cache"`
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
}

func TestResolved(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	r := s.Resolved()
	if len(r) != 3 || r[0].Name != "ch_shmem" || r[1].Name != "ch_lfshmem" || r[2].Name != "on-t3d" {
		t.Fatalf("resolved %+v", r)
	}
	decode := func(c Component) machineParams {
		t.Helper()
		p := machineParams{MemcpyMBps: 2500} // default kept
		if err := c.DecodeParams(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := decode(r[0].Machine); p.SemopUS != 40 || p.Cache.Lines != 128 || p.Cache.Coherent || p.MemcpyMBps != 2500 {
		t.Errorf("series 0 machine %+v", p)
	}
	if p := decode(r[1].Machine); p.SemopUS != 40 || p.Cache.Lines != 128 || !p.Cache.Coherent {
		t.Errorf("series 1 machine %+v", p)
	}
	if r[2].Machine.Name != "t3d" || r[1].Machine.Name != "sx4" {
		t.Errorf("machine names %q %q", r[1].Machine.Name, r[2].Machine.Name)
	}
	var st struct {
		Device     string `yaml:"device"`
		EagerBytes int    `yaml:"eager_bytes"`
	}
	if err := r[1].Stack.DecodeParams(&st); err != nil || st.Device != "ch_lfshmem" || st.EagerBytes != 16384 {
		t.Errorf("series 1 stack %+v %v", st, err)
	}
	// Merged values keep their lines: the override at line 19, the base at 11.
	if n := strictyaml.Find(&r[1].Stack.Params, "device"); n == nil || n.Line != 19 {
		t.Errorf("device node %+v", n)
	}
	if n := strictyaml.Find(&r[1].Stack.Params, "eager_bytes"); n == nil || n.Line != 11 {
		t.Errorf("eager_bytes node %+v", n)
	}
	// The top-level params are untouched by the merge.
	var top struct {
		Device     string `yaml:"device"`
		EagerBytes int    `yaml:"eager_bytes"`
	}
	if err := s.Stack.DecodeParams(&top); err != nil || top.Device != "ch_shmem" {
		t.Errorf("top stack %+v %v", top, err)
	}
	// A bad param in a series override is reported at its line, with a path.
	bad := strings.Replace(full, "cache: {coherent: true}", "cache: {coherent: maybe}", 1)
	s, err = Parse("bad.yaml", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	var p machineParams
	err = s.Resolved()[1].Machine.DecodeParams(&p)
	want := `bad.yaml:22:27: field series[1].machine.params.cache.coherent: expected true or false, got "maybe"`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = s.Resolved()[0].Machine.DecodeParams(&struct{}{})
	want = "bad.yaml:7:5: field machine.params.semop_us: unknown field \"semop_us\"; no fields are allowed here\n" +
		"bad.yaml:8:5: field machine.params.cache: unknown field \"cache\"; no fields are allowed here" // every problem at once
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestErrors(t *testing.T) {
	const base = "name: x\nworkload: {name: w}\n"
	tests := []struct {
		name, yaml string
		want       string // exact error text (first error when joined)
	}{
		{"unknown field", base + "seeds: 3\n", `t.yaml:3:1: field seeds: unknown field "seeds" (did you mean "seed"?); valid fields: name, title, description, seed, machine, stack, workload, series, figures, references, claims, expect, limits, cost, calibration, measured_on`},
		{"unknown component field", "name: x\nworkload: {name: w, param: {}}\n", `t.yaml:2:21: field workload.param: unknown field "param" (did you mean "params"?); valid fields: name, params`},
		{"wrong type", base + "seed: abc\n", `t.yaml:3:7: field seed: expected a non-negative integer, got "abc"`},
		{"wrong type limits", base + "limits:\n  max_wall_seconds: soon\n", `t.yaml:4:21: field limits.max_wall_seconds: expected a number, got "soon"`},
		{"missing name", "workload: {name: w}\n", `t.yaml:1:1: field name: missing required field "name"`},
		{"missing workload", "name: x\n", `t.yaml:1:1: field workload: missing required field "workload"`},
		{"missing series name", base + "series:\n  - stack: {name: s}\n", `t.yaml:4:5: field series[0].name: missing required field "name"`},
		{"missing reference value", base + "references:\n  - {series: x, metric: m, x: 1}\n", `t.yaml:4:5: field references[0].value: missing required field "value"`},
		{"missing panel metric", base + "figures:\n  - file: f.png\n    panels:\n      - title: t\n", `t.yaml:6:9: field figures[0].panels[0].metric: missing required field "metric"`},
		{"bad expect", base + "expect:\n  failure: crash\n", `t.yaml:4:12: field expect.failure: "crash" is not a failure kind; expected one of corruption, loss, livelock, deadlock`},
		{"bad scale", base + "figures:\n  - file: f.png\n    panels:\n      - {metric: m, y_scale: semilog}\n", `t.yaml:6:30: field figures[0].panels[0].y_scale: "semilog" is not a scale; expected "linear" or "log"`},
		{"unknown reference series", base + "series: [{name: a}, {name: b}]\nreferences:\n  - {series: c, metric: m, x: 1, value: 2}\n", `t.yaml:5:14: field references[0].series: unknown series "c" (series: a, b)`},
		{"reference without series", base + "references:\n  - {series: c, metric: m, x: 1, value: 2}\n", `t.yaml:4:14: field references[0].series: unknown series "c" (the scenario has no series; use its name "x")`},
		{"other system on a simulated series", base + "series: [{name: a}]\nreferences:\n  - {series: a, system: O2K, metric: m, x: 1, value: 2}\n", `t.yaml:5:14: field references[0].series: "a": a reference of another system (system: O2K) needs a series name of its own, not a simulated series (series: a)`},
		{"unknown panel series", base + "series: [{name: a}]\nfigures:\n  - file: f.png\n    panels: [{metric: m, series: [a, z]}]\n", `t.yaml:6:38: field figures[0].panels[0].series[1]: unknown series "z" (series: a)`},
		{"duplicate series", base + "series:\n  - name: a\n  - name: a\n", `t.yaml:5:11: field series[1].name: series "a" is already defined (series[0])`},
		{"empty workload name", "name: x\nworkload: {params: {a: 1}}\n", `t.yaml:2:11: field workload.name: workload: a name is required for the scenario`},
		{"params not a mapping", "name: x\nworkload: {name: w, params: [1]}\n", `t.yaml:2:29: field workload.params: expected a mapping of parameter names to values`},
		{"bad name", "name: a b\nworkload: {name: w}\n", `t.yaml:1:7: field name: "a b": use letters, digits, '.', '_' and '-' only (it names output files)`},
		{"figure path", base + "figures: [{file: ../x.png}]\n", `t.yaml:3:18: field figures[0].file: "../x.png" must be a relative path inside the output directory`},
		{"negative limit", base + "limits: {max_sim_time_us: -1}\n", `t.yaml:3:27: field limits.max_sim_time_us: must be a finite number ≥ 0 (0 means the default), got -1`},
		{"negative cost", base + "cost: {wall_seconds: 5, memory_gb: -1}\n", `t.yaml:3:36: field cost.memory_gb: must be a finite number ≥ 0 (an approximate cost; 0: small), got -1`},
		{"duplicate key", base + "title: a\ntitle: b\n", `t.yaml:4:1: field title: duplicate key "title" (first given at line 3)`},
		{"claim unknown series", base + "series: [{name: a}, {name: b}]\nclaims:\n  - name: c1\n    kind: above\n    quote: q\n    section: s\n    metric: m\n    series: a\n    other: z\n", `t.yaml:11:12: field claims[0].other: unknown series "z" (series: a, b)`},
		{"claim others unknown series", base + "series: [{name: a}, {name: b}]\nclaims:\n  - {name: c1, kind: above, quote: q, section: s, metric: m, series: a, others: [b, z], best: highest}\n", `t.yaml:5:85: field claims[0].others[1]: unknown series "z" (series: a, b)`},
		{"claim others and other", base + "series: [{name: a}, {name: b}, {name: c}]\nclaims:\n  - {name: c1, kind: above, quote: q, section: s, metric: m, series: a, other: b, others: [b, c], best: highest}\n", `t.yaml:5:91: field claims[0].others: give either other (one series) or others (the best of several), not both`},
		{"claim others without best", base + "series: [{name: a}, {name: b}, {name: c}]\nclaims:\n  - {name: c1, kind: crossover, quote: q, section: s, metric: m, series: a, others: [b, c]}\n", `t.yaml:5:5: field claims[0].best: others needs best: "highest" or "lowest" (which value of m is the best)`},
		{"claim one other in others", base + "series: [{name: a}, {name: b}]\nclaims:\n  - {name: c1, kind: above, quote: q, section: s, metric: m, series: a, others: [b], best: highest}\n", `t.yaml:5:81: field claims[0].others: lists 1 series; the best of several needs at least 2 (else use other)`},
		{"claim missing quote", base + "claims:\n  - {name: c1, kind: band, section: s, metric: m, series: x, min: 1}\n", `t.yaml:4:5: field claims[0].quote: missing required field "quote"`},
		{"claim bad kind", base + "claims:\n  - {name: c1, kind: bigger, quote: q, section: s, metric: m, series: x}\n", `t.yaml:4:22: field claims[0].kind: "bigger" is not a claim kind; expected one of ratio, above, below, monotone, fit, crossover, band`},
		{"claim field of another kind", base + "claims:\n  - {name: c1, kind: band, quote: q, section: s, metric: m, series: x, min: 1, model: log}\n", `t.yaml:4:87: field claims[0].model: does not apply to a band claim (it uses min, max, stat)`},
		{"claim ratio without bounds", base + "claims:\n  - {name: c1, kind: ratio, quote: q, section: s, metric: m, series: x, other_at: 8}\n", `t.yaml:4:5: field claims[0].min: a ratio needs min, max or both`},
		{"claim fit without r2", base + "claims:\n  - {name: c1, kind: fit, quote: q, section: s, metric: m, series: x, model: log}\n", `t.yaml:4:5: field claims[0].min_r2: must be in (0, 1], got 0`},
		{"claim monotone direction", base + "claims:\n  - {name: c1, kind: monotone, quote: q, section: s, metric: m, series: x, direction: up}\n", `t.yaml:4:87: field claims[0].direction: "up": expected "increasing" or "decreasing"`},
		{"claim at and range", base + "claims:\n  - {name: c1, kind: band, quote: q, section: s, metric: m, series: x, min: 1, at: [1], x_min: 0}\n", `t.yaml:4:84: field claims[0].at: give either at (the x values) or x_min/x_max (a range), not both`},
		{"claim duplicate name", base + "claims:\n  - {name: c1, kind: band, quote: q, section: s, metric: m, series: x, min: 1}\n  - {name: c1, kind: band, quote: q, section: s, metric: m, series: x, min: 1}\n", `t.yaml:5:12: field claims[1].name: claim "c1" is already defined (claims[0])`},
		{"malformed", base + "title: [a\n", `t.yaml:3: malformed YAML: did not find expected ',' or ']'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			var e *strictyaml.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *strictyaml.Error", err, err)
			}
			if e.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", e, tc.want)
			}
		})
	}
}

func TestValidateJoinsAll(t *testing.T) {
	_, err := Parse("t.yaml", []byte("name: x\nworkload: {name: w}\nexpect: {failure: boom}\nlimits: {max_wall_seconds: -2}\n"))
	if err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("want two errors, got %v", err)
	}
}

func TestBuiltins(t *testing.T) {
	names, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no built-in scenarios")
	}
	for _, name := range names {
		s, err := LoadBuiltin(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s.Name != name {
			t.Errorf("builtin/%s.yaml: name is %q, want the file name %q", name, s.Name, name)
		}
		if s.File != "builtin/"+name+".yaml" {
			t.Errorf("%s: File = %q", name, s.File)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(s.Resolved()) == 0 {
			t.Errorf("%s: nothing to run", name)
		}
	}
}

func TestLookup(t *testing.T) {
	s, err := Lookup("litmus-mp")
	if err != nil || s.Name != "litmus-mp" || s.File != "builtin/litmus-mp.yaml" {
		t.Fatalf("Lookup(litmus-mp) = %+v, %v", s, err)
	}
	_, err = Lookup("no-such-thing")
	if err == nil || !strings.Contains(err.Error(), "built-ins: ") || !strings.Contains(err.Error(), "litmus-mp") {
		t.Errorf("unknown built-in: %v", err)
	}
	_, err = Lookup("missing.yaml")
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mine")
	if err := os.WriteFile(file, []byte("name: mine\nworkload: {name: w}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Lookup(file); err != nil || s.Name != "mine" || s.File != file {
		t.Errorf("Lookup(file) = %+v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("name: b\nworkload: {name: w}\nseed: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":3:7: field seed:") {
		t.Errorf("Lookup(bad) = %v", err)
	}
	if _, err := LoadBuiltin("../builtin/litmus-mp"); err == nil {
		t.Error("LoadBuiltin with a path should fail")
	}
}

func TestHasParams(t *testing.T) {
	var c Component
	if c.HasParams() {
		t.Error("zero component has params")
	}
	c.Params = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	if c.HasParams() {
		t.Error("null params counted")
	}
}

// TestReadmeExample keeps the documented example valid.
func TestReadmeExample(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```yaml\n")
	if len(blocks) < 3 {
		t.Fatal("README.md: expected two yaml blocks")
	}
	example := strings.SplitN(blocks[1], "```", 2)[0]
	expect := strings.SplitN(blocks[2], "```", 2)[0]
	s, err := Parse("README.md", []byte(example+expect))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resolved()) != 3 || s.Expect == nil {
		t.Errorf("README example: %+v", s)
	}
	// The merge rule on the SX-4's params (cmd/simrun's TestDocsYAML
	// validates the example against the real machine).
	var p struct {
		SemopUS float64 `yaml:"semop_us"`
		CacheKB int     `yaml:"cache_kb"`
	}
	if err := s.Resolved()[2].Machine.DecodeParams(&p); err != nil || p.SemopUS != 40 || p.CacheKB != 1024 {
		t.Errorf("README merge example: %+v %v", p, err)
	}
}

// TestWhatIfScenarios: the what-if scenarios outside the built-in set
// (scenarios/whatif, docs/scale.md) load and validate, and declare their
// cost so that tools picking fast scenarios skip them.
func TestWhatIfScenarios(t *testing.T) {
	files, err := filepath.Glob("whatif/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no what-if scenarios: %v", err)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s.Cost.WallSeconds == 0 || s.Cost.MemoryGB == 0 {
			t.Errorf("%s: no cost declared", f)
		}
	}
}

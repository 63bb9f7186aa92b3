package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// simrun runs the CLI in-process and returns its exit status and outputs.
func simrun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli(args, &out, &errb)
	return code, out.String(), errb.String()
}

// builtinRuns holds the outputs of simrun run NAME --out DIR --quiet for
// the built-ins that several tests read (TestGoldenScenarios pins them,
// TestBuiltinClaims evaluates their claims, others check their summary):
// each runs once per test binary, in a directory TestMain removes.
var builtinRuns = struct {
	mu   sync.Mutex
	dir  string
	runs map[string]*builtinRun
}{runs: map[string]*builtinRun{}}

// builtinRun is one run of builtinRuns: its output directory, exit status
// and outputs.
type builtinRun struct {
	once           sync.Once
	dir            string
	code           int
	stdout, stderr string
}

// runBuiltin returns the outputs of simrun run name --out DIR --quiet,
// running it the first time it is asked for. The caller must not change
// DIR.
func runBuiltin(t *testing.T, name string) *builtinRun {
	t.Helper()
	builtinRuns.mu.Lock()
	r, ok := builtinRuns.runs[name]
	if !ok {
		r = &builtinRun{dir: filepath.Join(builtinRuns.dir, name)}
		builtinRuns.runs[name] = r
	}
	builtinRuns.mu.Unlock()
	r.once.Do(func() {
		var out, errb bytes.Buffer
		r.code = cli([]string{"run", name, "--out", r.dir, "--quiet"}, &out, &errb)
		r.stdout, r.stderr = out.String(), errb.String()
	})
	return r
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "simrun-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	builtinRuns.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGoldenLitmusMP: run litmus-mp writes its results, summary and
// state histograms, and its summary gives the observations (its
// results.csv and summary.txt are pinned by TestGoldenScenarios).
func TestGoldenLitmusMP(t *testing.T) {
	r := runBuiltin(t, "litmus-mp")
	dir, code, stdout, stderr := r.dir, r.code, r.stdout, r.stderr
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"results.json", "summary.txt", "litmus-mp-states.png", "litmus-mp-states.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "Observation MP Sometimes") || !strings.Contains(stdout, "Observation MP+fences Never") || !strings.Contains(stdout, "Result: ok") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// TestDeterministic: same scenario and seed give byte-identical results,
// summary and trace; another seed gives other results.
func TestDeterministic(t *testing.T) {
	var dirs []string
	for i, seed := range []string{"5", "5", "6"} {
		d := t.TempDir()
		dirs = append(dirs, d)
		if code, out, errs := simrun(t, "run", "litmus-sb-tso", "--out", d, "--seed", seed, "--quiet"); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s%s", i, code, out, errs)
		}
		if code, out, errs := simrun(t, "trace", "litmus-sb-tso", "--out", filepath.Join(d, "trace.json"), "--seed", seed); code != exitOK {
			t.Fatalf("trace %d: exit %d\n%s%s", i, code, out, errs)
		}
	}
	for _, f := range []string{"results.csv", "results.json", "summary.txt", "trace.json", "litmus-sb-states.svg"} {
		a, b := read(t, filepath.Join(dirs[0], f)), read(t, filepath.Join(dirs[1], f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	if bytes.Equal(read(t, filepath.Join(dirs[0], "results.csv")), read(t, filepath.Join(dirs[2], "results.csv"))) {
		t.Error("seeds 5 and 6 gave identical results")
	}
	if !bytes.Contains(read(t, filepath.Join(dirs[0], "results.json")), []byte(`"seed": 5`)) {
		t.Error("results.json does not record the seed")
	}
}

// TestExitCodes: an expected failure exits 0; the same failure unexpected,
// or an expected failure that does not happen, exits 1.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	unexpected := write(t, dir, "unexpected.yaml", `name: spin
workload:
  name: litmus
  params: {test: MP+spin, model: noncoherent, runs: 10}
`)
	missing := write(t, dir, "missing.yaml", `name: nospin
workload:
  name: litmus
  params: {test: MP+spin, model: pso, runs: 10}
expect: {failure: livelock, why: "it will not"}
`)
	for _, c := range []struct {
		scenario string
		code     int
		want     string
	}{
		{"litmus-mp-spin-noncoherent", exitOK, "expected failure: livelock — the reader polls its stale cached copy"},
		{unexpected, exitFailed, "FAILED: 1 failure(s)"},
		{missing, exitFailed, "FAILED: the scenario expects a livelock (it will not), which did not happen"},
	} {
		code, out, errs := simrun(t, "run", c.scenario, "--out", t.TempDir(), "--quiet")
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", c.scenario, code, c.code, c.want, out, errs)
		}
	}
	code, out, _ := simrun(t, "run", unexpected, "--out", t.TempDir(), "--quiet")
	if code != exitFailed || !strings.Contains(out, "P1 spinning") || !strings.Contains(out, "non-coherent cache whose copy is stale") {
		t.Errorf("livelock report missing from the summary:\n%s", out)
	}
}

// TestBadInput: bad scenarios and arguments name file, line and field and
// exit 2 (validate too), never panic.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	badParam := write(t, dir, "badparam.yaml", "name: x\nworkload:\n  name: litmus\n  params: {test: MP, modle: pso}\n")
	badTop := write(t, dir, "badtop.yaml", "name: x\nseeds: 3\nworkload: {name: litmus}\n")
	badWork := write(t, dir, "badwork.yaml", "name: x\nworkload: {name: nosuch}\n")
	write(t, dir, "model.yaml", "base: pso\ncache: {ways: 0}\n")
	useModel := write(t, dir, "usemodel.yaml", "name: x\nworkload:\n  name: litmus\n  params: {test: MP, model: model.yaml}\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", badParam}, exitUsage, "badparam.yaml:4:22: field workload.params.modle: unknown field \"modle\" (did you mean \"model\"?)"},
		{[]string{"validate", badParam}, exitUsage, "badparam.yaml:4:22: field workload.params.modle"},
		{[]string{"validate", badTop}, exitUsage, "badtop.yaml:2:1: field seeds: unknown field \"seeds\""},
		{[]string{"validate", badWork}, exitUsage, "field workload.name: unknown workload \"nosuch\""},
		{[]string{"validate", "no-such-scenario"}, exitUsage, "no such built-in scenario"},
		{[]string{"validate"}, exitUsage, "expected 1 argument(s), got 0"},
		{[]string{"run", badWork}, exitUsage, "field workload.name: unknown workload \"nosuch\"; workloads: "},
		{[]string{"validate", useModel}, exitUsage, "model.yaml:2:15: field cache.ways: cache.ways must be positive"},
		{[]string{"run", "no-such-scenario"}, exitUsage, "no such built-in scenario; built-ins: aclmpl-exchange-livelock, armci-2x100"},
		{[]string{"run"}, exitUsage, "expected 1 argument(s), got 0"},
		{[]string{"run", "litmus-mp", "--seed", "abc"}, exitUsage, "invalid value \"abc\" for flag -seed"},
		{[]string{"frobnicate"}, exitUsage, "unknown command \"frobnicate\""},
		{[]string{"litmus", "XYZ"}, exitUsage, "unknown litmus test \"XYZ\""},
		{[]string{"litmus", "MP", "--model", "nosuch"}, exitUsage, "neither a built-in model"},
		{[]string{"show", "nosuch"}, exitUsage, "no built-in scenario nosuch; built-ins: aclmpl-exchange-livelock, armci-2x100, "},
		{[]string{"show", badParam}, exitUsage, "no built-in scenario"},
	} {
		code, out, errs := simrun(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("simrun %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
	if code, out, _ := simrun(t, "validate", "litmus-mp"); code != exitOK || !strings.Contains(out, "ok (3 series, about ") {
		t.Errorf("validate litmus-mp: %d %s", code, out)
	}
}

func TestLitmusCommand(t *testing.T) {
	code, out, _ := simrun(t, "litmus", "SB", "--model", "tso", "--runs", "2000", "--seed", "1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || !strings.HasPrefix(lines[len(lines)-1], "Observation SB Sometimes ") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = simrun(t, "litmus", "MP+spin", "--model", "noncoherent", "--runs", "10")
	if code != exitFailed || !strings.Contains(out, "Failed runs: 10") || !strings.HasSuffix(out, "Observation MP+spin None 0 0 (no run finished)\n") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = simrun(t, "litmus", "--list")
	if code != exitOK || !strings.Contains(out, "2+2W+fences") || !strings.Contains(out, "noncoherent") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestHelpAndList(t *testing.T) {
	code, out, _ := simrun(t, "--help")
	if code != exitOK || !strings.Contains(out, "simrun run litmus-mp") {
		t.Fatalf("help: %d\n%s", code, out)
	}
	for _, c := range commands() {
		code, out, _ := simrun(t, c.name, "--help")
		if code != exitOK || !strings.Contains(out, "Usage: simrun "+c.name) || !strings.Contains(out, "simrun "+c.name) {
			t.Errorf("%s --help: %d\n%s", c.name, code, out)
		}
	}
	code, out, _ = simrun(t, "list")
	if code != exitOK || !strings.Contains(out, "litmus-mp-spin-noncoherent") || !strings.Contains(out, "[expects livelock]") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	code, out, _ = simrun(t, "show", "litmus-mp")
	if code != exitOK || !strings.HasPrefix(out, "name: litmus-mp\n") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	if code, out, _ := simrun(t, "bench", "-n", "10000"); code != exitOK || !strings.Contains(out, "switches/s") {
		t.Fatalf("bench: %d\n%s", code, out)
	}
}

// TestErrorsOnce: a misspelt top-level param inherited by every series is
// reported once, at the top-level field; a series' own typo keeps its
// series field; run and validate agree.
func TestErrorsOnce(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "typo.yaml", `name: typo
workload:
  name: litmus
  params: {test: MP, mdoe: pso, runs: 10}
series:
  - name: a
  - name: b
    workload: {params: {test: SB}}
  - name: c
    workload: {params: {model: tso, runz: 3}}
  - name: d
    workload: {params: {runs: 20}}
`)
	for _, cmd := range []string{"validate", "run"} {
		code, out, errs := simrun(t, cmd, f, "--out", filepath.Join(dir, "out"))
		if cmd == "validate" {
			code, out, errs = simrun(t, cmd, f)
		}
		want := "typo.yaml:4:22: field workload.params.mdoe: unknown field \"mdoe\""
		own := "typo.yaml:10:37: field series[2].workload.params.runz: unknown field \"runz\""
		if code != exitUsage || strings.Count(errs, "\n") != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, own) {
			t.Errorf("%s: exit %d, want %d and once %q; got:\n%s%s", cmd, code, exitUsage, want, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("run wrote outputs for a scenario that does not validate")
	}
	// A typo in one series only is that series' error.
	g := write(t, dir, "typo2.yaml", "name: t2\nworkload: {name: litmus, params: {test: MP}}\nseries:\n  - name: a\n  - name: b\n    workload: {params: {modle: tso}}\n")
	code, _, errs := simrun(t, "validate", g)
	if code != exitUsage || !strings.HasSuffix(strings.TrimSpace(errs), `/typo2.yaml:6:25: field series[1].workload.params.modle: unknown field "modle" (did you mean "model"?); valid fields: test, model, runs, start_jitter_cycles, op_jitter_cycles, drain_jitter_cycles, warm, exhaustive`) {
		t.Errorf("exit %d:\n%s", code, errs)
	}
}

// TestSeriesNamedOnce: the CLI names the series of a run error unless the
// workload already did.
func TestSeriesNamedOnce(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"litmus MP on pso, run 3: livelock", "series s1: litmus MP on pso, run 3: livelock"},
		{"x.yaml: series s1: latency on 4 PEs, 8 bytes: deadlock", "x.yaml: series s1: latency on 4 PEs, 8 bytes: deadlock"},
		{"s1: deadlock", "s1: deadlock"},
	} {
		if got := seriesError("s1", errors.New(c.msg)); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// TestNonFinite: a NaN or infinite result is not written but reported as a
// failure naming series, metric and x, and the run exits 1.
func TestNonFinite(t *testing.T) {
	runs := []seriesRun{{spec: workloads.Spec{Series: "s1"}, res: workloads.Result{Rows: []report.Row{
		{Series: "s1", XName: "bytes", X: 8, Metric: "latency_us", Value: 1.5, Unit: "us"},
		{Series: "s1", XName: "bytes", X: 0, Metric: "bandwidth_mbps", Value: math.Inf(1), Unit: "MB/s"},
		{Series: "s1", XName: "bytes", X: 16, Metric: "latency_us", Value: math.NaN(), Unit: "us"},
	}}}}
	dropNonFinite(runs)
	if len(runs[0].res.Rows) != 1 || len(runs[0].res.Failures) != 2 {
		t.Fatalf("rows %v failures %v", runs[0].res.Rows, runs[0].res.Failures)
	}
	v := judge(&scenarios.Scenario{Name: "x"}, runs)
	if v.code != exitFailed || !strings.Contains(v.failures[0], "s1: non-finite result: metric bandwidth_mbps at bytes=0 is +Inf MB/s") {
		t.Fatalf("exit %d: %q", v.code, v.failures)
	}
	dir := t.TempDir()
	if _, err := writeOutputs(dir, &scenarios.Scenario{Name: "x"}, runs, v, io.Discard); err != nil {
		t.Fatalf("outputs with the non-finite rows dropped: %v", err)
	}
}

// TestGoldenScenarios pins the results.csv and summary.txt of every
// built-in scenario (expected failures included: their summary names the
// failure), so that any change to a model, a stack or a workload that
// moves a number shows up as a reviewed diff (go test ./cmd/simrun -run
// TestGoldenScenarios -update rewrites testdata/golden/). The fast
// built-ins run as they are, through simrun run; the slow ones run at the
// reduced size of goldenReduced (testdata/golden/NAME.reduced.*), every
// series of theirs still run. A built-in in neither list fails the test.
func TestGoldenScenarios(t *testing.T) {
	t.Parallel() // with TestBuiltinClaims, after the tests that change the directory or the registry
	covered := map[string]bool{}
	for _, name := range goldenFull {
		covered[name] = true
		t.Run(name, func(t *testing.T) {
			r := runBuiltin(t, name)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			checkGolden(t, r.dir, name)
			checkDocFigure(t, r.dir, name)
		})
	}
	for _, r := range goldenReduced {
		covered[r.name] = true
		t.Run(r.name+"-reduced", func(t *testing.T) {
			dir := t.TempDir()
			runReduced(t, r, dir)
			checkGolden(t, dir, r.name+".reduced")
		})
	}
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !covered[n] {
			t.Errorf("built-in %s has no golden: add it to TestGoldenScenarios (or to goldenReduced if it is slow)", n)
		}
	}
}

// goldenFull are the built-ins TestGoldenScenarios runs as they are
// (runBuiltin: TestBuiltinClaims evaluates the claims of the same runs).
var goldenFull = []string{
	"aclmpl-exchange-livelock",
	"armci-2x100", "armci-acc", "armci-fig4", "armci-fig5", "armci-fig6", "armci-fig6-sx4", "armci-polling-sleeping",
	"litmus-mp", "litmus-mp-spin-noncoherent", "litmus-sb-tso",
	"sci-faults", "sci-fig1-3", "sci-index-bytewise", "sci-no-crc", "sci-no-membarrier", "sci-pingpong", "sci-table1-1",
	"sx4-collectives", "sx4-fig1", "sx4-fig4", "sx4-fig5", "sx4-fig6", "sx4-fig7", "sx4-lockfree-nofence", "sx4-spin-cached",
	"t3d-fig3", "t3d-fig7", "t3d-table1", "t3d-table2",
	"threads-fig1", "threads-fig2", "threads-fig3", "threads-fig4", "threads-fig4-sx4", "threads-fig1-shm",
	"whatif-stacks", "whatif-flow-bcast", "whatif-trace",
}

// reduction is how the golden test shrinks a slow built-in.
type reduction struct {
	name     string
	workload string            // YAML mapping merged over workload.params
	series   map[string]string // series name -> YAML mapping merged over its workload.params
}

// goldenReduced are the built-ins too slow for a test at full size (tens
// of seconds of CPU each: 128 T3D PEs, 96 SCI nodes) and how the golden
// test shrinks them: workload holds params merged over the scenario's
// workload params, series the params merged over a series' own workload
// params (where the series sets the same keys). Claims and references at
// sizes no longer run are reported as such in the pinned summary.
var goldenReduced = []reduction{
	// 16 PEs instead of 128; 4 sizes up to 64 KB instead of 11 up to 1 MB.
	{name: "t3d-fig4", workload: "{pes: [16], bytes: [1, 256, 4096, 65536]}",
		series: map[string]string{"async-aclmpl": "{bytes: [1, 256, 4096, 65536]}", "pvm": "{bytes: [1, 256, 1024, 4096, 16384]}"}},
	// 32 PEs instead of 128; 5 sizes up to 1 MB instead of 13 up to 10 MB.
	{name: "t3d-fig5", workload: "{pes: [32], bytes: [1, 256, 4096, 65536, 1048576]}",
		series: map[string]string{"async-aclmpl": "{bytes: [1, 256, 4096, 65536]}", "pvm": "{bytes: [1, 256, 4096, 65536]}"}},
	{name: "t3d-fig6", workload: "{pes: [32], bytes: [1, 256, 4096, 65536, 1048576]}",
		series: map[string]string{"pvm": "{bytes: [1, 256, 1024, 4096, 65536]}", "pvm-all-to-one": "{bytes: [1024, 4096]}"}},
	{name: "t3d-fig8", workload: "{pes: [32], bytes: [1, 256, 4096, 65536, 1048576]}",
		series: map[string]string{"pvm": "{bytes: [1, 256, 4096, 16384, 65536]}"}},
	// 32 PEs instead of 128; 4 sizes up to 256 KB instead of 11 up to 4 MB.
	{name: "t3d-fig9", workload: "{pes: [32], bytes: [8, 1024, 16384, 262144]}",
		series: map[string]string{"pvm": "{bytes: [8, 64, 1024, 16384, 65536]}"}},
	// Partitions of 2 to 16 PEs instead of 2 to 128.
	{name: "t3d-partitions-alltoall", workload: "{pes: [2, 4, 8, 16]}"},
	{name: "t3d-partitions-bcast", workload: "{pes: [2, 4, 8, 16]}"},
	// 2 to 16 nodes instead of 2 to 96 (the two processes on one PC unchanged).
	{name: "sci-table1-2", workload: "{procs: [2, 4, 8, 16]}"},
	// 16 PEs instead of 1,024 and 4,096 (the flow network model).
	{name: "whatif-flow-alltoall", workload: "{pes: [16]}"},
}

// runReduced runs built-in r.name with its sweep reduced as r says,
// through what simrun run calls (loadAll with an adjustment, as --seed
// does; execute; judge; writeOutputs), and writes its outputs to dir.
// Every series must still give rows.
func runReduced(t *testing.T, r reduction, dir string) {
	t.Helper()
	var adjustErrs []error
	merge := func(c *yaml.Node, over string) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(over), &doc); err != nil {
			adjustErrs = append(adjustErrs, fmt.Errorf("%s: %q: %w", r.name, over, err))
			return
		}
		if n := strictyaml.Merge(c, doc.Content[0]); n != nil {
			*c = *n
		}
	}
	adjust := func(s *scenarios.Scenario) {
		// The pinned summary says what ran.
		s.Title += " [reduced by the golden test: workload.params " + r.workload
		for _, n := range slices.Sorted(maps.Keys(r.series)) {
			s.Title += ", series " + n + " " + r.series[n]
		}
		s.Title += "]"
		merge(&s.Workload.Params, r.workload)
		seen := map[string]bool{}
		for i := range s.Series {
			se := &s.Series[i]
			if over, ok := r.series[se.Name]; ok {
				seen[se.Name] = true
				if se.Workload == nil || !se.Workload.HasParams() {
					adjustErrs = append(adjustErrs, fmt.Errorf("%s: series %s sets no workload params to reduce", r.name, se.Name))
					continue
				}
				merge(&se.Workload.Params, over)
			}
		}
		for n := range r.series {
			if !seen[n] {
				adjustErrs = append(adjustErrs, fmt.Errorf("%s: no series %s", r.name, n))
			}
		}
	}
	s, sp, errs := runner.Load(builtins(), r.name, runner.LoadOptions{Adjust: adjust})
	if errs = append(errs, adjustErrs...); len(errs) > 0 {
		t.Fatalf("loading %s reduced:\n%s", r.name, joinLines(errs))
	}
	runs, err := execute(sp, 0, nil, runner.WallLimit(s))
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	if errs := runInputErrors(s, runs); len(errs) > 0 {
		t.Fatalf("%s:\n%s", r.name, joinLines(errs))
	}
	dropNonFinite(runs)
	v := judge(s, runs)
	if v.code != exitOK {
		t.Errorf("%s reduced: exit %d: %s", r.name, v.code, v.message)
	}
	for _, run := range runs {
		if len(run.res.Rows) == 0 {
			t.Errorf("%s reduced: series %s gave no rows", r.name, run.spec.Series)
		}
	}
	if _, err := writeOutputs(dir, s, runs, v, io.Discard); err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
}

// checkGolden compares dir's results.csv and summary.txt with
// testdata/golden/base.*, or rewrites those with -update.
func checkGolden(t *testing.T, dir, base string) {
	t.Helper()
	for _, f := range []string{"results.csv", "summary.txt"} {
		got := read(t, filepath.Join(dir, f))
		golden := filepath.Join("testdata", "golden", base+"."+f)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if want := read(t, golden); !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run go test ./cmd/simrun -run TestGoldenScenarios -update and review the diff)", f, golden)
		}
	}
}

// docFigures are the figures the docs show, by the built-in that draws
// them: the file the run writes and the docs' copy.
var docFigures = map[string][2]string{
	"sx4-fig7":     {"fig7.png", "../../docs/sx4-fig7.png"},
	"whatif-trace": {"whatif-trace.png", "../../docs/whatif-trace.png"},
}

// checkDocFigure compares the figures of built-in name drawn in dir with
// their copies in the docs (the README's figure cannot go stale), and
// rewrites the copies with -update.
func checkDocFigure(t *testing.T, dir, name string) {
	t.Helper()
	f, ok := docFigures[name]
	if !ok {
		return
	}
	got := read(t, filepath.Join(dir, f[0]))
	if *update {
		if err := os.WriteFile(f[1], got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, read(t, f[1])) {
		t.Errorf("%s differs from simrun run %s's %s (run go test ./cmd/simrun -run TestGoldenScenarios/%s -update and look at it)", f[1], name, f[0], name)
	}
}

// TestGCPolicy: GOGC wins; GOMEMLIMIT alone turns percent-based collection
// off (the limit paces it); neither: gcPercent.
func TestGCPolicy(t *testing.T) {
	for _, c := range []struct {
		gogc, limit string
		want        int
		set         bool
	}{
		{"", "", gcPercent, true},
		{"50", "", 0, false},
		{"", "8GiB", -1, true},
		{"100", "8GiB", 0, false},
	} {
		env := map[string]string{"GOGC": c.gogc, "GOMEMLIMIT": c.limit}
		got, set := gcPolicy(func(k string) string { return env[k] })
		if got != c.want || set != c.set {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: gcPolicy = %d, %v; want %d, %v", c.gogc, c.limit, got, set, c.want, c.set)
		}
	}
}

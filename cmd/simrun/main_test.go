package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// simrun runs the CLI in-process and returns its exit status and outputs.
func simrun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli(args, &out, &errb)
	return code, out.String(), errb.String()
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

// TestGoldenLitmusMP compares run litmus-mp's results.csv with
// testdata/litmus-mp.results.csv (regenerate with go test -update).
func TestGoldenLitmusMP(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := simrun(t, "run", "litmus-mp", "--out", dir, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := read(t, filepath.Join(dir, "results.csv"))
	golden := filepath.Join("testdata", "litmus-mp.results.csv")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := read(t, golden); !bytes.Equal(got, want) {
		t.Fatalf("results.csv differs from %s (run go test -update and review the diff):\n%s", golden, got)
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
// exit 2 (validate: 1), never panic.
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
		{[]string{"validate", badParam}, exitFailed, "badparam.yaml:4:22: field workload.params.modle"},
		{[]string{"validate", badTop}, exitFailed, "badtop.yaml:2:1: field seeds: unknown field \"seeds\""},
		{[]string{"run", badWork}, exitUsage, "field workload.name: unknown workload \"nosuch\"; workloads: "},
		{[]string{"validate", useModel}, exitFailed, "model.yaml:2:15: field cache.ways: cache.ways must be positive"},
		{[]string{"run", "no-such-scenario"}, exitUsage, "no such built-in scenario; built-ins: litmus-mp"},
		{[]string{"run"}, exitUsage, "expected 1 argument(s), got 0"},
		{[]string{"run", "litmus-mp", "--seed", "abc"}, exitUsage, "invalid value \"abc\" for flag -seed"},
		{[]string{"frobnicate"}, exitUsage, "unknown command \"frobnicate\""},
		{[]string{"litmus", "XYZ"}, exitUsage, "unknown litmus test \"XYZ\""},
		{[]string{"litmus", "MP", "--model", "nosuch"}, exitUsage, "neither a built-in model"},
		{[]string{"show", "nosuch"}, exitUsage, "no such built-in scenario"},
	} {
		code, out, errs := simrun(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("simrun %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
	if code, out, _ := simrun(t, "validate", "litmus-mp"); code != exitOK || !strings.Contains(out, "ok (3 series)") {
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
	if code != exitFailed || !strings.Contains(out, "Failed runs: 10") || !strings.HasSuffix(out, "Observation MP+spin Never 0 0\n") {
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

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/scenarios"
)

// topMachine matches a scenario's top-level machine name as simrun show
// prints it.
var topMachine = regexp.MustCompile(`(?m)^machine:\n  name: ([a-z0-9]+)$`)

// TestCopiedBuiltinJudgesNothingForeign copies every built-in with
// references or claims (simrun show) onto another machine: the copy says
// which system they were measured on, leaves out every reference and
// claim of a series that now runs elsewhere, and says so in one line.
func TestCopiedBuiltinJudgesNothingForeign(t *testing.T) {
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var machines []string
	for _, m := range builtins().Machines() {
		machines = append(machines, m.Name)
	}
	copied := 0
	for _, name := range names {
		code, out, errs := simrun(t, "show", name)
		if code != exitOK {
			t.Fatalf("show %s: %s", name, errs)
		}
		orig, err := scenarios.Parse(name, []byte(out))
		if err != nil {
			t.Fatalf("show %s does not parse: %v", name, err)
		}
		judged := len(orig.Claims) > 0
		for _, r := range orig.References {
			judged = judged || r.System == ""
		}
		if !judged {
			continue
		}
		if orig.MeasuredOn == nil || orig.MeasuredOn.Machine != orig.Machine.Name || orig.MeasuredOn.Stack != orig.Stack.Name || orig.LeftOut != "" {
			t.Errorf("show %s: measured_on %v, want the scenario's own system (%s, %s), nothing left out", name, orig.MeasuredOn, orig.Machine.Name, orig.Stack.Name)
			continue
		}
		m := topMachine.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("show %s: no top-level machine name", name)
			continue
		}
		other := machines[0]
		if other == m[1] {
			other = machines[1]
		}
		cp, err := scenarios.Parse("copy.yaml", []byte(strings.Replace(out, m[0], "machine:\n  name: "+other, 1)))
		if cp == nil {
			t.Fatalf("%s on %s: %v", name, other, err)
		}
		copied++
		ownMachine := map[string]bool{}
		for _, se := range cp.Series {
			ownMachine[se.Name] = se.Machine != nil && se.Machine.Name != ""
		}
		for _, r := range cp.References {
			if r.System == "" && !ownMachine[r.Series] {
				t.Errorf("%s on %s: the reference %s %s at %g (measured on %s) is still judged", name, other, r.Series, r.Metric, r.X, orig.Machine.Name)
			}
		}
		for _, c := range cp.Claims {
			if !ownMachine[c.Series] || (c.Other != "" && !ownMachine[c.Other]) {
				t.Errorf("%s on %s: the claim %s (measured on %s) is still judged", name, other, c.Name, orig.Machine.Name)
			}
		}
		if want := "were measured on " + orig.MeasuredOn.String() + "; this copy runs them on " + other; !strings.Contains(cp.LeftOut, want) || strings.Contains(cp.LeftOut, "\n") {
			t.Errorf("%s on %s: the line left out is %q, want one line containing %q", name, other, cp.LeftOut, want)
		}
	}
	if copied < 25 {
		t.Errorf("only %d built-ins with references or claims copied", copied)
	}
}

// TestCopiedBuiltinRunSaysWhatIsLeftOut runs sx4-fig1 copied onto the
// Power Challenge: its summary lists no paper value and no claim, and one
// note says why.
func TestCopiedBuiltinRunSaysWhatIsLeftOut(t *testing.T) {
	_, out, _ := simrun(t, "show", "sx4-fig1")
	dir := t.TempDir()
	f := write(t, dir, "mine.yaml", strings.Replace(out, "machine:\n  name: sx4", "machine:\n  name: challenge", 1))
	code, stdout, stderr := simrun(t, "run", f, "--out", filepath.Join(dir, "out"), "-j", "1", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	summary, err := os.ReadFile(filepath.Join(dir, "out", "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(summary), stdout} {
		if strings.Contains(s, "holds") || strings.Contains(s, "FAILS") || strings.Contains(s, "paper ") {
			t.Errorf("the copy on challenge still judges sx4's paper:\n%s", s)
		}
		if n := strings.Count(s, "were measured on sx4 with mpich; this copy runs them on challenge with mpich, so they are left out"); n != 1 {
			t.Errorf("the line that says what is left out appears %d times:\n%s", n, s)
		}
	}
}

// TestSeriesStylesMeanOneThing: within every built-in, a colour is one
// series name, or on a scenario across machines one stack (whatif-stacks:
// "sx4 armci" and "t3d armci" alike), never two; and a colour and mark
// together are one series name, or one variant of a stack.
func TestSeriesStylesMeanOneThing(t *testing.T) {
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		s, err := scenarios.LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		styles := seriesStyles(s)
		machines := map[string]bool{}
		for _, r := range s.Resolved() {
			machines[r.Machine.Name] = true
		}
		colour := map[int]string{}
		both := map[report.Style]string{}
		for _, r := range s.Resolved() {
			c, key := r.Name, r.Name
			if len(machines) > 1 {
				c, key = r.Stack.Name, r.Stack.Name+"/"+variantName(r.Name, r.Machine.Name)
			}
			st, ok := styles[r.Name]
			if !ok {
				t.Errorf("%s: series %s has no style", name, r.Name)
				continue
			}
			if m, ok := colour[st.Color%report.Colors]; ok && m != c {
				t.Errorf("%s: colour %d means %q and %q", name, st.Color, m, c)
			}
			colour[st.Color%report.Colors] = c
			if m, ok := both[st]; ok && m != key {
				t.Errorf("%s: style %v means %q and %q", name, st, m, key)
			}
			both[st] = key
		}
	}
	s, _ := scenarios.LoadBuiltin("whatif-stacks")
	st := seriesStyles(s)
	if st["sx4 armci"] != st["t3d armci"] || st["sx4 mpich"] != st["sp mpich"] || st["t3d armci"] == st["t3d aclmpl"] ||
		st["t3d aclmpl"].Color != st["t3d aclmpl async"].Color || st["t3d aclmpl"] == st["t3d aclmpl async"] {
		t.Errorf("whatif-stacks: styles %v: a stack's style differs between machines, two stacks share one, or a variant is not told apart", st)
	}
}

// TestCopiedSeriesMovedJudgesNothingForeign: a copy of t3d-table1 whose
// series sync-mpi runs ScaMPI instead of MPI leaves out that series'
// paper values and claims, keeps the others', and says so in one line.
func TestCopiedSeriesMovedJudgesNothingForeign(t *testing.T) {
	_, out, _ := simrun(t, "show", "t3d-table1")
	old := "  - name: sync-mpi\n    stack: {name: mpich, params: {device: ch_t3d}}\n"
	if !strings.Contains(out, old) {
		t.Fatalf("t3d-table1 no longer has %q", old)
	}
	cp, err := scenarios.Parse("copy.yaml", []byte(strings.Replace(out, old, "  - name: sync-mpi\n    stack: {name: scampi}\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, c := range cp.Claims {
		if c.Series == "sync-mpi" || c.Other == "sync-mpi" {
			t.Errorf("claim %s of the moved series is still judged", c.Name)
		}
		kept[c.Name] = true
	}
	if !kept["sync-aclmpl-4.5us"] || !kept["async-mpi-significant-overhead"] {
		t.Errorf("claims of the series that did not move were left out: kept %v", kept)
	}
	if !strings.Contains(cp.LeftOut, "claims (1) of series sync-mpi were measured on another machine or stack than this copy runs them on") {
		t.Errorf("left out: %q", cp.LeftOut)
	}
}

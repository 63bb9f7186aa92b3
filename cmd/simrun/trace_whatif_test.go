package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/trace"
	"gopkg.in/yaml.v3"
)

// TestWhatifTracePairings: whatif-trace runs the Jacobi trace on every
// registered machine and stack that can run it, and its description lists
// every other pairing ("machine/stack") with the verb the refusal names.
func TestWhatifTracePairings(t *testing.T) {
	s, err := scenarios.LoadBuiltin("whatif-trace")
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, r := range s.Resolved() {
		ran[r.Machine.Name+"/"+r.Stack.Name] = true
	}
	desc := strings.Join(strings.Fields(s.Description), " ")
	reg := all.Default()
	var params yaml.Node
	if err := yaml.Unmarshal([]byte("{index: jacobi/16/jacobi.txt}"), &params); err != nil {
		t.Fatal(err)
	}
	for _, m := range reg.Machines() {
		for _, st := range reg.Stacks() {
			pair := m.Name + "/" + st.Name
			if ran[pair] {
				continue
			}
			open, err := reg.Resolve("builtin/x.yaml", registry.Ref{Name: m.Name}, registry.Ref{Name: st.Name})
			if err == nil {
				err = trace.Check(workloads.Spec{File: "builtin/x.yaml", Open: open, Workload: workloads.Component{Name: trace.Name, Params: &params}})
			}
			var mc *machines.MissingCapability
			if err == nil || (!errors.As(err, &mc) && !strings.Contains(err.Error(), "cannot run on machine")) {
				t.Errorf("%s runs the trace (or fails otherwise: %v) but is not a series of whatif-trace", pair, err)
				continue
			}
			i := strings.Index(desc, pair+",")
			if i < 0 {
				i = strings.Index(desc, pair+":")
			}
			if i < 0 {
				t.Errorf("%s is refused (%v) but whatif-trace's description does not list it", pair, err)
				continue
			}
			why := desc[i:]
			why = why[strings.Index(why, ":")+1:]
			if j := strings.IndexAny(why, ",;."); j >= 0 {
				why = why[:j]
			}
			if why = strings.TrimSpace(why); !strings.Contains(err.Error(), why) {
				t.Errorf("%s: the description says %q, the refusal is %v", pair, why, err)
			}
		}
	}
}

// TestTraceDoc runs docs/trace.md: its YAML blocks that start with a
// "# FILE" comment are written to FILE, its "cp -r bench/traces/..." lines
// copy the checked-in trace, and its "go run ./cmd/simrun" lines run and
// must exit 0; the outputs the page describes must exist.
func TestTraceDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs docs/trace.md's commands (seconds)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, "docs", "trace.md")
	yamls, _ := fenced(t, doc, "yaml")
	shs, _ := fenced(t, doc, "sh")
	t.Chdir(t.TempDir())
	files := 0
	for _, y := range yamls {
		first, _, _ := strings.Cut(y, "\n")
		if name, ok := strings.CutPrefix(first, "# "); ok && strings.HasSuffix(name, ".yaml") {
			if err := os.WriteFile(name, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			files++
		}
	}
	n := 0
	for _, b := range shs {
		for _, line := range strings.Split(b, "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			f := strings.Fields(cmd)
			switch {
			case len(f) == 4 && f[0] == "cp" && f[1] == "-r" && strings.HasPrefix(f[2], "bench/traces/"):
				if err := os.CopyFS(f[3], os.DirFS(filepath.Join(root, f[2]))); err != nil {
					t.Fatal(err)
				}
			case len(f) >= 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/simrun":
				args := f[3:]
				var code int
				var out, errs string
				if len(args) == 4 && args[0] == "run" && args[2] == "--out" && slices.Contains(goldenFull, args[1]) {
					r := runBuiltin(t, args[1])
					code, out, errs = r.code, r.stdout, r.stderr
				} else {
					code, out, errs = simrun(t, args...)
				}
				if code != exitOK {
					t.Errorf("docs/trace.md: simrun %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
				n++
			}
		}
	}
	if n < 6 || files < 2 {
		t.Fatalf("found %d simrun commands and %d scenario files in docs/trace.md", n, files)
	}
	for _, want := range []string{"results/my-jacobi/summary.txt", "results/my-jacobi/mpich-comm-matrix.csv", "results/my-jacobi/aclmpl-comm-matrix.png", "results/my-ring/my-ring-comm-matrix.csv", "trace.json"} {
		if _, err := os.Stat(want); err != nil {
			t.Errorf("docs/trace.md's commands did not write %s: %v", want, err)
		}
	}
}

// TestTraceReplayDeterministic: a replay's outputs (results, summary,
// figures, communication matrices) are byte-identical across runs and
// across -j.
func TestTraceReplayDeterministic(t *testing.T) {
	dir := t.TempDir()
	index, err := filepath.Abs(filepath.Join("..", "..", "bench", "traces", "jacobi", "4", "jacobi.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f := write(t, dir, "jac.yaml", `name: jac
machine: {name: t3d}
stack: {name: mpich}
workload:
  name: trace
  params: {index: `+index+`}
series:
  - name: mpich
    stack: {name: mpich, params: {device: ch_t3d}}
  - name: aclmpl
    stack: {name: aclmpl}
  - name: scampi
    machine: {name: sci}
    stack: {name: scampi}
`)
	var outs []map[string][]byte
	for _, j := range []string{"1", "2", "1"} {
		out := filepath.Join(dir, "out"+j+strconv.Itoa(len(outs)))
		if code, o, e := simrun(t, "run", f, "--out", out, "-j", j, "--quiet"); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, o, e)
		}
		got := map[string][]byte{}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			got[e.Name()] = read(t, filepath.Join(out, e.Name()))
		}
		outs = append(outs, got)
	}
	if len(outs[0]) < 10 {
		t.Fatalf("%d files", len(outs[0]))
	}
	for i := 1; i < len(outs); i++ {
		for name, b := range outs[0] {
			if !bytes.Equal(b, outs[i][name]) {
				t.Errorf("%s differs between run 1 (-j 1) and run %d", name, i+1)
			}
		}
	}
}

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

// TestTraceMalformedExit2: 20 malformed traces are bad input: simrun run
// exits 2 before anything runs, with the error located at file, line and
// column (or at the index's line), never a panic or a hang.
func TestTraceMalformedExit2(t *testing.T) {
	for i, tc := range []struct{ index, r0, r1, want string }{
		{"r0.txt\nr1.txt\n", "0 init\n0 frob", "1 init", "r0.txt:2:3: unknown action \"frob\""},
		{"r0.txt\nr1.txt\n", "0 send 1 0", "1 recv 0 0 1", "r0.txt:1:11: action send: 2 arguments, at least 3"},
		{"r0.txt\nr1.txt\n", "0 send 2 0 1", "1 recv 0 0 1", "r0.txt:1:8: action send: destination must be a rank from 0 to 1, got 2"},
		{"r0.txt\nr1.txt\n", "0 send 1 t 1", "1 recv 0 0 1", "r0.txt:1:10: action send: tag must be an integer"},
		{"r0.txt\nr1.txt\n", "0 send 1 0 -1", "1 recv 0 0 1", "r0.txt:1:12: action send: count must be between"},
		{"r0.txt\nr1.txt\n", "0 send 1 0 1 77", "1 recv 0 0 1", "r0.txt:1:14: action send: datatype 77 is not one of MPI's predefined"},
		{"r0.txt\nr1.txt\n", "0 init", "0 init", "r1.txt:1:1: the line's rank is \"0\", but this is rank 1's file"},
		{"r0.txt\nr1.txt\n", "0 compute x", "1 init", "r0.txt:1:11: action compute: flops must be a non-negative number"},
		{"r0.txt\nr1.txt\n", "0 sleep -2", "1 init", "r0.txt:1:9: action sleep: seconds must be a non-negative number"},
		{"r0.txt\nr1.txt\n", "0 bcast 4 3", "1 bcast 4 3", "r0.txt:1:11: action bcast: root must be a rank from 0 to 1, got 3"},
		{"r0.txt\nr1.txt\n", "0 bcast 4 0", "1 barrier", "r1.txt:1:3: action barrier: rank 1's collective number 1 is barrier"},
		{"r0.txt\nr1.txt\n", "0 bcast 4 0", "1 bcast 4 1", "r1.txt:1:3: action bcast: rank 1's root is 1"},
		{"r0.txt\nr1.txt\n", "0 allreduce 2 0 0", "1 allreduce 3 0 0", "r1.txt:1:3: action allreduce: rank 1's 24 bytes differ"},
		{"r0.txt\nr1.txt\n", "0 barrier\n0 barrier", "1 barrier", "rank 1 calls 1 collectives, rank 0 calls 2"},
		{"r0.txt\nr1.txt\n", "0 wait 0 1 3", "1 init", "r0.txt:1:3: action wait: rank 0 posted no isend or irecv"},
		{"r0.txt\nr1.txt\n", "0 gatherv 2 2 2", "1 gatherv 2 2 2 0", "r0.txt:1:16: action gatherv: 3 arguments, at least 4"},
		{"r0.txt\nr1.txt\n", "0 alltoallv 4 1 2 3 1 2", "1 alltoallv 3 2 1 3 2 1", "r0.txt:1:13: action alltoallv: send total 4 is not the sum"},
		{"r0.txt\nmissing.txt\n", "0 init", "1 init", "idx.txt:2:1: rank 1's file missing.txt"},
		{"\n\n", "0 init", "1 init", "idx.txt:1:1: the index lists no rank's file"},
		{" r0.txt\nr1.txt\n", "0 init", "1 init", "idx.txt:1:1: a rank's file name has leading or trailing blanks"},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "idx.txt", tc.index)
			write(t, dir, "r0.txt", tc.r0)
			write(t, dir, "r1.txt", tc.r1)
			f := write(t, dir, "bad.yaml", "name: bad\nmachine: {name: t3d}\nstack: {name: aclmpl}\nworkload: {name: trace, params: {index: idx.txt}}\n")
			code, _, errs := simrun(t, "run", f, "--out", filepath.Join(dir, "out"), "--quiet")
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, exitUsage, tc.want)
			}
		})
	}
}

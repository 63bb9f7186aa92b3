package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLitmusFiles: simrun litmus reads herd7 files, explores exhaustively,
// runs on a machine's own model, and names file:line:column of a bad file.
func TestLitmusFiles(t *testing.T) {
	td := filepath.Join("..", "..", "litmus", "testdata")
	bad := filepath.Join(t.TempDir(), "bad.litmus")
	if err := os.WriteFile(bad, []byte("X86 B\n{}\n P0 ;\n MOV [x],[y] ;\nexists (x=1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code      int
		out, errs string
	}
	ran := map[string]result{}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"litmus", filepath.Join(td, "R.litmus"), "--model", "tso", "--exhaustive"}, exitOK, "States 4\n"},
		{[]string{"litmus", filepath.Join(td, "R.litmus"), "--model", "tso", "--exhaustive"}, exitOK, "Observation R Sometimes 1 3\n"},
		{[]string{"litmus", filepath.Join(td, "R+mfences.litmus"), "--model", "tso", "--exhaustive"}, exitOK, "Observation R+mfences Never 0 3\n"},
		{[]string{"litmus", filepath.Join(td, "IRIW.litmus"), "--model", "nmca", "--exhaustive"}, exitOK, "Observation IRIW Sometimes 1 15\n"},
		{[]string{"litmus", filepath.Join(td, "MP+wmb+rmb.litmus"), "--model", "nmca", "--runs", "500"}, exitOK, "Observation MP+wmb+rmb Never 0 500\n"},
		{[]string{"litmus", filepath.Join(td, "R.litmus"), "--model", "tso", "--drain-jitter-cycles", "16"}, exitOK, "Observation R Sometimes"},
		{[]string{"litmus", "MP", "--machine", "sx4", "--exhaustive"}, exitOK, "on model sx4 (exhaustive"},
		{[]string{"litmus", "MP+spin", "--machine", "sx4", "--exhaustive"}, exitFailed, "P1 spinning since 0ps: at r0=y until 1 (its non-coherent cache holds y=0, memory 1: a stale copy)"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--runs", "100"}, exitOK, "% T3D: P0 on PE 0, P1 on PE 1, x on PE 1, y on PE 1\n"},
		{[]string{"litmus", "SB+fences", "--machine", "t3d", "--runs", "100", "--home", "x=0,y=0"}, exitOK, "Observation SB+fences Never 0 100\n"},
		{[]string{"litmus", "MP+spin", "--machine", "t3d", "--runs", "100", "--cold"}, exitFailed, "non-coherent cache whose copy is stale"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--exhaustive"}, exitUsage, "--machine t3d is sampled only"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--home", "z=1"}, exitUsage, `--home "z=1": want LOCATION=PE with a location of the test (x, y)`},
		{[]string{"litmus", "MP", "--home", "x=1"}, exitUsage, "--home applies to --machine t3d, sp and sci only"},
		{[]string{"litmus", "MP", "--machine", "ksr1"}, exitUsage, `unknown machine "ksr1" (machines: sx4, t3d, sp, sci, challenge, tcpcluster)`},
		{[]string{"litmus", "MP+spin", "--machine", "sp", "--runs", "500"}, exitOK, "% SP, LAPI in interrupt mode, switch_jitter_us 40: P0 on node 0, P1 on node 1, x on node 1, y on node 1\n"},
		{[]string{"litmus", "MP+spin", "--machine", "sp", "--runs", "500"}, exitOK, "Observation MP+spin Sometimes"},
		{[]string{"litmus", "MP+spin+fences", "--machine", "sp", "--runs", "500"}, exitOK, "Observation MP+spin+fences Never 0 500\n"},
		{[]string{"litmus", "2+2W", "--machine", "sp", "--switch-jitter-us", "0", "--runs", "300"}, exitOK, "Observation 2+2W Never 0 300\n"},
		{[]string{"litmus", "MP", "--machine", "sp", "--switch-jitter-us", "-1"}, exitUsage, "switch_jitter_us"},
		{[]string{"litmus", "MP", "--machine", "sci", "--switch-jitter-us", "10"}, exitUsage, "--switch-jitter-us applies to --machine sp only"},
		{[]string{"litmus", "MP", "--machine", "sp", "--exhaustive"}, exitUsage, "--machine sp is sampled only"},
		{[]string{"litmus", "MP+spin", "--machine", "sp", "--progress", "polling", "--runs", "5"}, exitFailed, "waiting for y=1 (LAPI in polling mode"},
		{[]string{"litmus", "MP", "--machine", "sp", "--progress", "sometimes"}, exitUsage, `unknown progress mode "sometimes"`},
		{[]string{"litmus", "MP", "--machine", "t3d", "--progress", "polling"}, exitUsage, "--progress applies to --machine sp only"},
		{[]string{"litmus", "--list"}, exitOK, "sp           thread i on node i of an IBM SP"},
		{[]string{"litmus", "MP+spin", "--machine", "sp", "--place", "P0=node5,P1=node2", "--runs", "100"}, exitOK, "P0 on node 5, P1 on node 2, x on node 2, y on node 2"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--place", "P1=pe63", "--runs", "100"}, exitOK, "P0 on PE 0, P1 on PE 63, x on PE 63, y on PE 63"},
		{[]string{"litmus", "MP", "--machine", "sci", "--place", "P0=3", "--runs", "100"}, exitOK, "P0 on process 3, P1 on process 1, x on node 1, y on node 1"},
		{[]string{"litmus", "MP", "--machine", "sx4", "--place", "P0=cpu7", "--runs", "100"}, exitOK, "% SX-4: P0 on CPU 7, P1 on CPU 1"},
		{[]string{"litmus", "MP", "--machine", "sp", "--place", "P0=1"}, exitUsage, `--place "P0=1": litmus MP on sp: P0 and P1 both on node 1: one thread per node`},
		{[]string{"litmus", "MP", "--machine", "t3d", "--place", "P1=pe9000"}, exitUsage, `--place "P1=pe9000": litmus MP on t3d: P1 on PE 9000: t3d has PEs 0..2047`},
		{[]string{"litmus", "MP", "--machine", "sx4", "--place", "P1=cpu32"}, exitUsage, `--place "P1=cpu32": litmus MP on sx4: P1 on CPU 32: sx4 has CPUs 0..31`},
		{[]string{"litmus", "MP", "--machine", "sp", "--home", "x=5"}, exitUsage, `--home "x=5": x on node 5, but the test's threads run on nodes 0..1 (see --place)`},
		{[]string{"litmus", "MP", "--machine", "sp", "--home", "x=5", "--place", "P0=5", "--runs", "10"}, exitOK, "P0 on node 5, P1 on node 1, x on node 5, y on node 1"},
		{[]string{"litmus", "MP", "--machine", "sp", "--place", "P2=1"}, exitUsage, `--place "P2=1": "P2" is not a thread of MP (P0..P1)`},
		{[]string{"litmus", "MP", "--model", "tso", "--place", "P1=1"}, exitUsage, `--place "P1=1": placement needs a --machine`},
		// --model with --machine is refused, never ignored.
		{[]string{"litmus", "MP", "--machine", "sci", "--model", "tso"}, exitUsage, "--model tso and --machine: give one"},
		{[]string{"litmus", "MP", "--model", "tsoo"}, exitUsage, "(noncoherent, pso, sc, tso, nmca)"},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "3000", "--runs", "3000"}, exitOK, "% SCI, reorder_ns 3000: P0 on process 0, P1 on process 1, x on node 1, y on node 1\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "3000", "--runs", "3000"}, exitOK, "Observation MP Sometimes"},
		// litmus's TestSCI runs MP+fences 3000 times, as many as MP needs to show.
		{[]string{"litmus", "MP+fences", "--machine", "sci", "--reorder-ns", "3000", "--runs", "300"}, exitOK, "Observation MP+fences Never 0 300\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--home", "x=0,y=1", "--runs", "500"}, exitOK, "Observation MP Never 0 500\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--exhaustive"}, exitUsage, "--machine sci is sampled only"},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "-1"}, exitUsage, "reorder_ns"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--reorder-ns", "10"}, exitUsage, "--reorder-ns applies to --machine sci only"},
		{[]string{"litmus", "--list"}, exitOK, "sci          thread i on node i"},
		{[]string{"litmus", bad}, exitUsage, "bad.litmus:4:2: unsupported operands for MOV"},
		{[]string{"litmus", "--list"}, exitOK, "nmca"},
	} {
		// Rows with the same command line check different parts of one output.
		key := strings.Join(c.args, "\x00")
		r, ok := ran[key]
		if !ok {
			r.code, r.out, r.errs = simrun(t, c.args...)
			ran[key] = r
		}
		code, out, errs := r.code, r.out, r.errs
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("simrun %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
}

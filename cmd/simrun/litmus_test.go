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
	td := filepath.Join("..", "..", "workloads", "litmus", "testdata")
	bad := filepath.Join(t.TempDir(), "bad.litmus")
	if err := os.WriteFile(bad, []byte("X86 B\n{}\n P0 ;\n MOV [x],[y] ;\nexists (x=1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
		{[]string{"litmus", "MP", "--machine", "t3d", "--runs", "100"}, exitOK, "% T3D: thread i on PE i; x on PE 1, y on PE 1\n"},
		{[]string{"litmus", "SB+fences", "--machine", "t3d", "--runs", "100", "--home", "x=0,y=0"}, exitOK, "Observation SB+fences Never 0 100\n"},
		{[]string{"litmus", "MP+spin", "--machine", "t3d", "--runs", "100", "--cold"}, exitFailed, "non-coherent cache whose copy is stale"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--exhaustive"}, exitUsage, "--machine t3d is sampled only"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--home", "z=1"}, exitUsage, `--home "z=1": want LOCATION=PE with a location of the test (x, y)`},
		{[]string{"litmus", "MP", "--home", "x=1"}, exitUsage, "--home applies to --machine t3d and sci only"},
		{[]string{"litmus", "MP", "--machine", "sp"}, exitUsage, `unknown machine "sp" (machines: sx4, t3d, sci)`},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "3000", "--runs", "3000"}, exitOK, "% SCI: thread i on node i, reorder_ns 3000; x on node 1, y on node 1\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "3000", "--runs", "3000"}, exitOK, "Observation MP Sometimes"},
		{[]string{"litmus", "MP+fences", "--machine", "sci", "--reorder-ns", "3000", "--runs", "3000"}, exitOK, "Observation MP+fences Never 0 3000\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--home", "x=0,y=1", "--runs", "500"}, exitOK, "Observation MP Never 0 500\n"},
		{[]string{"litmus", "MP", "--machine", "sci", "--exhaustive"}, exitUsage, "--machine sci is sampled only"},
		{[]string{"litmus", "MP", "--machine", "sci", "--reorder-ns", "-1"}, exitUsage, "reorder_ns"},
		{[]string{"litmus", "MP", "--machine", "t3d", "--reorder-ns", "10"}, exitUsage, "--reorder-ns applies to --machine sci only"},
		{[]string{"litmus", "--list"}, exitOK, "sci          thread i on node i"},
		{[]string{"litmus", bad}, exitUsage, "bad.litmus:4:2: unsupported operands for MOV"},
		{[]string{"litmus", "--list"}, exitOK, "nmca"},
	} {
		code, out, errs := simrun(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("simrun %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
}

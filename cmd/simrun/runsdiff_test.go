package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareRuns: a run compared with itself (a directory and the
// scenario run again) exits 0; with one series' parameter changed it
// exits 1, names that series and only that one, and draws the overlay.
func TestCompareRuns(t *testing.T) {
	dir := t.TempDir()
	const base = `name: two
machine: {name: sx4}
stack: {name: mpich, params: {device: ch_shmem, lock: sysv}}
workload: {name: pingpong, params: {sizes: [8, 1024, 65536], repetitions: 2}}
series:
  - name: same
  - name: moved
`
	a := write(t, dir, "a.yaml", base)
	b := write(t, dir, "b.yaml", base+"    machine: {params: {semop_us: 60}}\n")
	runA := filepath.Join(dir, "runA")
	if code, _, errs := simrun(t, "run", a, "--out", runA, "--quiet", "-j", "1"); code != exitOK {
		t.Fatalf("run: %s", errs)
	}

	code, out, errs := simrun(t, "compare", runA, a, "--out", filepath.Join(dir, "self"), "-j", "1")
	if code != exitOK || !strings.Contains(out, "same within a relative tolerance of 0") {
		t.Errorf("compare with itself: exit %d, want 0:\n%s%s", code, out, errs)
	}

	code, out, errs = simrun(t, "compare", runA, b, "--out", filepath.Join(dir, "moved"), "-j", "1")
	if code != exitFailed {
		t.Errorf("compare with semop_us changed: exit %d, want 1:\n%s%s", code, out, errs)
	}
	for _, want := range []string{"series same: 6 points, none differs", "series moved: 6 of 6 points differ", "latency_us bytes=8", "differ: moved\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "moved", "compare.png")); err != nil {
		t.Errorf("no overlay figure: %v", err)
	}

	// A tolerance above the change accepts it.
	if code, out, _ := simrun(t, "compare", runA, b, "--tolerance", "1e9", "--out", filepath.Join(dir, "tol"), "-j", "1"); code != exitOK {
		t.Errorf("compare --tolerance 1e9: exit %d, want 0:\n%s", code, out)
	}
	// Bad input.
	for _, args := range [][]string{{"compare", runA}, {"compare", runA, dir}, {"compare", runA, a, "--tolerance", "-1"}} {
		if code, _, _ := simrun(t, args...); code != exitUsage {
			t.Errorf("simrun %s: exit %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
}

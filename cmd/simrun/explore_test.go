package main

import (
	"strings"
	"testing"
)

// TestExploreCommand: simrun explore runs an explore scenario (the
// Figure 2 hang under a lock per call is shown with its schedule) and
// refuses a scenario of another workload.
func TestExploreCommand(t *testing.T) {
	code, stdout, stderr := simrun(t, "explore", "threads-fig2", "--out", t.TempDir(), "--quiet")
	if code != exitOK || !strings.Contains(stdout, "lock-per-call: 15 schedules, 60 scheduling points, 8 failing") || !strings.Contains(stdout, "mutex rank0.mpi held by rank0.t0") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = simrun(t, "explore", "threads-fig1", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "runs workload pingpong, not explore") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

package main

import (
	"strings"
	"testing"
)

// TestExploreCommand: simrun explore runs an explore scenario (the
// Figure 2 deadlock under a lock per call is shown with its schedule and
// the lock held across the wait) and
// refuses a scenario of another workload.
func TestExploreCommand(t *testing.T) {
	code, stdout, stderr := simrun(t, "explore", "threads-fig2", "--out", t.TempDir(), "--quiet")
	if code != exitOK || !strings.Contains(stdout, "lock-per-call: 116 schedules (721 pruned), 1598 states, 18586 choice points, 29 failing") ||
		!strings.Contains(stdout, "deadlock at") || !strings.Contains(stdout, "rank0.t1 waits for mutex rank0.mpi, held by rank0.t0, which waits: poll(): rank0 sleeping in the kernel") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = simrun(t, "explore", "threads-fig1", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "runs workload pingpong, not explore") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

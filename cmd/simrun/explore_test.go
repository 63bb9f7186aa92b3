package main

import (
	"fmt"
	"os"
	"regexp"
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

// TestExploreReplay: the schedule a failing exploration prints, given to
// --schedule with its series, replays the failure (the same deadlock at
// the same time); a schedule without a series of a scenario of several,
// a bad schedule and an unknown series are refused with exit 2.
func TestExploreReplay(t *testing.T) {
	code, stdout, stderr := simrun(t, "explore", "threads-fig3", "--series", "naive-lock", "--out", t.TempDir(), "--quiet")
	m := regexp.MustCompile(`shortest failing schedule "([0-9a-z]+)":`).FindStringSubmatch(stdout)
	dl := regexp.MustCompile(`deadlock at [^:]*:`).FindString(stdout)
	blocked := regexp.MustCompile(`rank\d\.t\d blocked since [^:]*: mutex rank\d\.ctxid held by rank\d\.t\d`).FindString(stdout)
	if code != exitOK || m == nil || dl == "" || blocked == "" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, replay, stderr := simrun(t, "explore", "threads-fig3", "--series", "naive-lock", "--schedule", m[1], "--out", t.TempDir(), "--quiet")
	if code != exitOK || !strings.Contains(replay, fmt.Sprintf("naive-lock: schedule %q:", m[1])) || !strings.Contains(replay, dl) ||
		!strings.Contains(replay, blocked) {
		t.Fatalf("replaying %q: exit %d\n%s\n%s", m[1], code, replay, stderr)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--schedule", m[1]}},
		{[]string{"--schedule", "01-", "--series", "naive-lock"}},
		{[]string{"--series", "nosuch"}},
	} {
		code, _, stderr := simrun(t, append([]string{"explore", "threads-fig3", "--out", t.TempDir()}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, "simrun explore") {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
}

// TestExploreEmptyScheduleReplays: threads-fig2's shortest failing
// schedule is the engine's own order, printed "0" with the command that
// replays it, and that command, run without --out, writes beside the full
// run (results/threads-fig2-lock-per-call-schedule), not over it.
func TestExploreEmptyScheduleReplays(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := simrun(t, "explore", "threads-fig2", "--quiet")
	cmd := regexp.MustCompile(`lock-per-call: replay: simrun (explore threads-fig2 --series lock-per-call --schedule 0)\n`).FindStringSubmatch(stdout)
	if code != exitOK || !strings.Contains(stdout, `shortest failing schedule "0":`) || cmd == nil {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	dl := regexp.MustCompile(`deadlock at [^:]*:`).FindString(stdout)
	code, replay, stderr := simrun(t, append(strings.Fields(cmd[1]), "--quiet")...)
	if code != exitOK || !strings.Contains(replay, `lock-per-call: schedule "0":`) || dl == "" || !strings.Contains(replay, dl) {
		t.Fatalf("replaying: exit %d\n%s\n%s", code, replay, stderr)
	}
	for _, f := range []string{"results/threads-fig2/summary.txt", "results/threads-fig2-lock-per-call-schedule/summary.txt"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	full, _ := os.ReadFile("results/threads-fig2/summary.txt")
	if !strings.Contains(string(full), "progress-lock") {
		t.Error("the replay overwrote the full run's summary")
	}
}

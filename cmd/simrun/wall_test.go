package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/litmus"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
)

// slowPingPong takes a few hundred milliseconds of CPU: far more than the
// nanosecond wall-time limit of TestWallLimitAbandonsRun.
const slowPingPong = `name: slow
title: a ping-pong far longer than its wall-time limit
seed: 1
machine: {name: sci}
stack: {name: scampi}
workload:
  name: pingpong
  params: {sizes: [8, 1048576], repetitions: 8}
limits: {max_wall_seconds: 1e-9}
`

// TestWallLimitAbandonsRun: a run that exceeds limits.max_wall_seconds is
// abandoned with an error naming the limit, the series and what to change,
// exit 1, and writes no results (never a shorter or different file).
func TestWallLimitAbandonsRun(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "slow.yaml", slowPingPong)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := simrun(t, "run", file, "--out", out, "--quiet")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	for _, want := range []string{
		"simrun run: slow: the wall-time limit (limits.max_wall_seconds) of 1e-09 s reached at series slow",
		"nothing was written",
		"raise limits.max_wall_seconds or run with fewer -j",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, f := range []string{"results.csv", "results.json", "summary.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); !os.IsNotExist(err) {
			t.Errorf("%s written by an abandoned run (err %v)", f, err)
		}
	}
}

// TestNoWallLimitInEngines: no engine simrun runs for a built-in scenario
// is bounded in wall time (a limit an engine hits becomes a failure or a
// missing row of the results, which must not depend on the machine's
// load): limits.max_wall_seconds is the run's watchdog only.
func TestNoWallLimitInEngines(t *testing.T) {
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		s, err := scenarios.LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := runner.Specs(builtins(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range sp {
			if x.Limits.MaxWall != 0 {
				t.Errorf("%s: series %s: engine wall limit %v", name, x.Series, x.Limits.MaxWall)
			}
		}
	}
	if w := litmus.DefaultLimits().MaxWall; w != 0 {
		t.Errorf("litmus.DefaultLimits has a wall limit %v: a run hitting it would be counted as an outcome", w)
	}
}

// TestSuiteMatchesRun: simrun suite writes for each scenario the files
// simrun run writes for it alone, byte for byte, whatever -j.
func TestSuiteMatchesRun(t *testing.T) {
	const pick = "^(sci-no-crc|sci-table1-1|sx4-lockfree-nofence|litmus-sb-tso|t3d-table1)$"
	dir := t.TempDir()
	code, stdout, stderr := simrun(t, "suite", pick, "--out", filepath.Join(dir, "suite"), "-j", "3", "--quiet")
	if code != exitOK {
		t.Fatalf("suite: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "suite: 5 scenarios") {
		t.Errorf("suite summary:\n%s", stdout)
	}
	for _, name := range []string{"sci-no-crc", "sci-table1-1", "sx4-lockfree-nofence", "litmus-sb-tso", "t3d-table1"} {
		// simrun run with the default -j: the run TestGoldenScenarios pins
		// (TestShardsMergeByteIdentical: -j 1 gives the same bytes).
		r := runBuiltin(t, name)
		if r.code != exitOK {
			t.Fatalf("run %s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		alone := r.dir
		for _, f := range []string{"results.csv", "results.json", "summary.txt"} {
			if a, b := read(t, filepath.Join(dir, "suite", name, f)), read(t, filepath.Join(alone, f)); string(a) != string(b) {
				t.Errorf("%s: %s of the suite differs from simrun run's", name, f)
			}
		}
	}
}

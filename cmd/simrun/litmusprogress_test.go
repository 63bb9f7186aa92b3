package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/msgsim/msgsim/litmus"
)

// TestLitmusProgress: a long run prints how far it is every interval of
// wall time (a fake clock here), never after the last run.
func TestLitmusProgress(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	p := litmusProgress(&buf, 100, clock, 2*time.Second)
	for i := 1; i <= 100; i++ {
		now = now.Add(100 * time.Millisecond)
		p(i)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || lines[0] != "simrun litmus: 20 of 100 runs (20 %), 2 s" {
		t.Errorf("progress lines %q, want 4 from 20 of 100 runs at 2 s", lines)
	}
}

// TestLitmusOneStateNote: a machine whose every run ends in one state
// says why and how to vary it; a model, or a run with two states, does
// not.
func TestLitmusOneStateNote(t *testing.T) {
	code, _, errs := simrun(t, "litmus", "SB", "--machine", "sx4", "--runs", "50")
	if code != exitOK || !strings.Contains(errs, "all 50 runs ended in one final state: machine sx4") || !strings.Contains(errs, "--start-jitter-cycles") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	one := &litmus.Outcome{States: []litmus.State{{Text: "a", Count: 9}}}
	two := &litmus.Outcome{States: []litmus.State{{Text: "a", Count: 5}, {Text: "b", Count: 4}}}
	if oneStateNote(one, "", 9, litmus.Options{}) != "" || oneStateNote(two, "t3d", 9, litmus.Options{}) != "" || oneStateNote(one, "t3d", 9, litmus.Options{}) == "" {
		t.Error("the note is given where it should not be, or missing")
	}
}

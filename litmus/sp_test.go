package litmus

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/sim"
)

// spOf is the SP litmus machine of params.
func spOf(params sp.Params) Machine {
	return on("sp", func(eng *sim.Engine, procs int) (machines.Machine, error) { return sp.New(eng, procs, params) })
}

// runSP is RunMachine on an SP of params with the default jitters.
func runSP(t *testing.T, tt Test, params sp.Params, homes []int, runs int, place []int) (*Outcome, error) {
	t.Helper()
	mc := spOf(params)
	j, err := mc.JitterCycles()
	if err != nil || j <= 0 {
		t.Fatalf("jitter %g, %v", j, err)
	}
	op, err := mc.OpJitter(j)
	if err != nil {
		t.Fatal(err)
	}
	if homes == nil {
		homes = DefaultHomes(tt, place)
	}
	return RunMachine(tt, mc, homes, Options{Runs: runs, Seed: 1, Warm: true, StartJitterCycles: j, OpJitterCycles: op, Place: place})
}

// TestSP is the verdict table of the classic tests on the IBM SP, one
// thread per node, under a switch that reorders packets by up to 40 us
// (simrun litmus --machine sp's default), and on a quiet switch.
func TestSP(t *testing.T) {
	// Runs: 300 where the unfenced test shows in one run in eleven or more
	// (SB, MP+spin), so a broken fence would show dozens of times.
	for _, c := range []struct {
		test     string
		jitter   float64
		homes    []int // nil: DefaultHomes
		observed bool
		runs     int // 0: 1000
	}{
		// Both locations at the reader: the flag's put overtakes the data's.
		// Rare: the reader's two loads must fall between the two puts'
		// dispatches, and the interrupt-driven dispatcher preempts the
		// reader on its node's one processor while it writes.
		{test: "MP", jitter: 40, observed: true, runs: 6000},
		// LAPI_Fence (a wait on the completion counter) between the puts.
		{test: "MP+fences", jitter: 40},
		// A quiet switch delivers in order, and one node's dispatcher
		// handles its messages in arrival order: MP is not seen.
		{test: "MP", jitter: 0},
		// Each thread's put to the other's node is in flight while it
		// loads its own location.
		{test: "SB", jitter: 40, observed: true, runs: 300},
		{test: "SB", jitter: 0, observed: true, runs: 300},
		{test: "SB+fences", jitter: 40, runs: 300},
		// P1's two puts to node 0 reorder.
		{test: "2+2W", jitter: 40, observed: true, runs: 6000},
		{test: "2+2W", jitter: 0},
		{test: "2+2W+fences", jitter: 40},
		// A load waits for its data, each location has one home memory:
		// no load buffering, and multi-copy atomic.
		{test: "LB", jitter: 40},
		{test: "IRIW", jitter: 40},
		{test: "WRC", jitter: 40},
		{test: "LB+fences", jitter: 40},
		{test: "IRIW+fences", jitter: 40},
		{test: "WRC+fences", jitter: 40},
		// The reader spins on its own memory (the interrupt-driven
		// dispatcher writes it): the spin ends, the data may be late.
		{test: "MP+spin", jitter: 40, observed: true, runs: 300},
		{test: "MP+spin+fences", jitter: 40, runs: 300},
		// Data at the writer: the reader's get of x comes after y landed.
		{test: "MP", jitter: 40, homes: []int{0, 1}},
	} {
		t.Run(fmt.Sprintf("%s/%gus/%v", c.test, c.jitter, c.homes), func(t *testing.T) {
			tt, err := Lookup(c.test)
			if err != nil {
				t.Fatal(err)
			}
			params := sp.DefaultParams()
			params.SwitchJitterUs = c.jitter
			runs := c.runs
			if runs == 0 {
				runs = 1000
			}
			o, err := runSP(t, tt, params, c.homes, runs, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkObserved(t, o, c.observed)
		})
	}
}

// TestSPPolling: in polling mode a reader spinning on its own memory never
// enters LAPI, so the writer's puts are never dispatched there: every run
// hangs, and the engine says who waits on what.
func TestSPPolling(t *testing.T) {
	tt, _ := Lookup("MP+spin")
	params := sp.DefaultParams()
	params.Progress = "polling"
	o, err := runSP(t, tt, params, nil, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ll *sim.LivelockError
	var dl *sim.DeadlockError
	if o.Failed != 3 || !errors.As(o.FirstFailure, &ll) && !errors.As(o.FirstFailure, &dl) || !strings.Contains(o.FirstFailure.Error(), "y=1 (LAPI in polling mode") {
		t.Errorf("%d of 3 runs failed, first %v; want each to hang with the reader waiting for y=1", o.Failed, o.FirstFailure)
	}
}

func TestSPErrors(t *testing.T) {
	mp, _ := Lookup("MP")
	params := sp.DefaultParams()
	mc := spOf(params)
	opts := Options{Runs: 1, Seed: 1}
	if _, err := RunMachine(mp, mc, []int{0, 2}, opts); err == nil || !strings.Contains(err.Error(), "location y on node 2") {
		t.Errorf("bad home: %v", err)
	}
	xchg := parseFile(t, filepath.Join("testdata", "SB+xchgs.litmus"))
	if _, err := RunMachine(xchg, mc, DefaultHomes(xchg, nil), opts); err == nil || !strings.Contains(err.Error(), "LAPI_Rmw") {
		t.Errorf("atomic: %v", err)
	}
}

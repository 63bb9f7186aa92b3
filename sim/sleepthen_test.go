package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sleepThenRun runs procs processes that each, rounds times, sleep and
// then block while a callback they start at the sleep's end (plants at a
// random delay) wakes them: by SleepBlockThen, or step by step
// (Sleep then BlockThen). Callbacks at the same instants, planted from
// inside the callbacks and the processes, make ties everywhere. It
// returns what ran, in order, the events and the resumptions.
func sleepThenRun(seed uint64, procs, rounds int, stepByStep bool) ([]string, uint64, uint64) {
	e := NewEngine(seed)
	e.SetStepByStep(stepByStep)
	rng := rand.New(rand.NewPCG(seed, 7))
	var log []string
	note := func(format string, args ...any) {
		log = append(log, fmt.Sprintf("%v ", e.Now())+fmt.Sprintf(format, args...))
	}
	type plan struct{ sleep, wake, tie Time }
	plans := make([][]plan, procs)
	for i := range plans {
		for range rounds {
			plans[i] = append(plans[i], plan{Time(rng.IntN(4)), Time(rng.IntN(3)), Time(rng.IntN(3))})
		}
	}
	for i := range procs {
		i := i
		e.Spawn(fmt.Sprint("p", i), func(p *Proc) {
			for r, pl := range plans[i] {
				note("p%d round %d starts", i, r)
				// A callback at the instant the sleep ends, planted
				// before it: it runs ahead of the process's start.
				e.After(pl.sleep, func() { note("p%d round %d: planted at the sleep's end", i, r) })
				p.SleepBlockThen(pl.sleep, "waiting", func() {
					note("p%d round %d: sent, blocked %v", i, r, p.Blocked())
					e.After(pl.wake, func() {
						note("p%d round %d: wake %v", i, r, p.Wake())
					})
					e.After(pl.tie, func() { note("p%d round %d: tie", i, r) })
				})
				note("p%d round %d resumed", i, r)
			}
		})
	}
	if err := e.Run(); err != nil {
		log = append(log, err.Error())
	}
	return log, e.Events(), e.resumes
}

// TestSleepBlockThenMatchesStepByStep: SleepBlockThen runs the same
// events in the same order, at the same times, as Sleep then BlockThen,
// with fewer coroutine resumptions.
func TestSleepBlockThenMatchesStepByStep(t *testing.T) {
	var resOne, resMerged uint64
	for seed := range uint64(60) {
		procs := 1 + int(seed%4)
		one, evOne, r1 := sleepThenRun(seed, procs, 8, true)
		merged, evMerged, rN := sleepThenRun(seed, procs, 8, false)
		resOne, resMerged = resOne+r1, resMerged+rN
		if !slices.Equal(one, merged) {
			for i := range min(len(one), len(merged)) {
				if one[i] != merged[i] {
					t.Fatalf("seed %d, entry %d: step by step %q, merged %q", seed, i, one[i], merged[i])
				}
			}
			t.Fatalf("seed %d: %d entries against %d", seed, len(one), len(merged))
		}
		if evOne != evMerged {
			t.Errorf("seed %d: events step by step %d, merged %d", seed, evOne, evMerged)
		}
	}
	if resMerged >= resOne {
		t.Errorf("resumptions: step by step %d, merged %d", resOne, resMerged)
	}
	t.Logf("resumptions: step by step %d, merged %d", resOne, resMerged)
}

// TestSleepBlockThenWakeWhileSleeping: a Wake during the sleep does
// nothing (the process is not blocked yet), either way.
func TestSleepBlockThenWakeWhileSleeping(t *testing.T) {
	for _, sbs := range []bool{false, true} {
		e := NewEngine(1)
		e.SetStepByStep(sbs)
		var woke []bool
		var resumed Time
		p := e.Spawn("p", func(p *Proc) {
			p.SleepBlockThen(10, "waiting", func() {
				e.After(5, func() { woke = append(woke, p.Wake()) })
			})
			resumed = p.Now()
		})
		e.After(3, func() { woke = append(woke, p.Wake()) })
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(woke, []bool{false, true}) || resumed != 15 {
			t.Errorf("step by step %v: wakes %v, resumed at %v; want [false true], 15", sbs, woke, resumed)
		}
	}
}

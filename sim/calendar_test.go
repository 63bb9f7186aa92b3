package sim

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestCalendarOrderWithCancels: events scheduled at random times (some at
// the current time, in the lane), some cancelled or moved, run in (time,
// scheduling order) and the cancelled ones never run nor count.
func TestCalendarOrderWithCancels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := NewEngine(1)
	type ev struct {
		at  Time
		seq int
	}
	var want, got []ev
	seq := 0
	var handles []Handle
	var ids []int
	var spawnSome func()
	spawnSome = func() {
		for range 3 {
			if seq >= 3000 {
				return
			}
			seq++
			id, at := seq, e.Now()+Time(r.IntN(4)*r.IntN(50))
			h := e.At(at, func() {
				got = append(got, ev{e.Now(), id})
				spawnSome()
			})
			handles, ids = append(handles, h), append(ids, id)
			want = append(want, ev{at, id})
		}
		// Cancel a random pending one.
		if k := r.IntN(len(handles)); e.Cancel(handles[k]) {
			cancelled := ids[k]
			want = slices.DeleteFunc(want, func(x ev) bool { return x.seq == cancelled })
		}
	}
	e.At(0, spawnSome)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(want, func(a, b ev) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.seq - b.seq
	})
	if !slices.Equal(got, want) {
		t.Fatalf("ran %d events, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if e.Events() != uint64(len(got)+1) {
		t.Errorf("events = %d, want %d (cancelled events do not count)", e.Events(), len(got)+1)
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestEngineSteadyStateAllocatesNothing: callbacks scheduling callbacks at
// spread-out times, processes sleeping, yielding and waiting with a
// time-out that a wake cuts short (a cancelled event) allocate nothing per
// event once the calendar's arrays are as large as the run needs.
func TestEngineSteadyStateAllocatesNothing(t *testing.T) {
	run := func(rounds int) uint64 {
		e := NewEngine(1)
		r := e.Rand()
		n := 0
		var hop func()
		hop = func() {
			if n++; n < rounds*100 {
				e.After(Time(1+r.IntN(1<<uint(r.IntN(30)))), hop)
			}
		}
		for range 100 {
			e.After(Time(r.IntN(1000)), hop)
		}
		var waiter *Proc
		waiter = e.Spawn("waiter", func(p *Proc) {
			wake := func() { p.Wake() } // a time-out, dropped by an earlier wake
			for range rounds {
				h := e.After(20, wake)
				p.Block("test: a wake or the time-out")
				e.Cancel(h)
			}
		})
		for i := range 4 {
			e.Spawn("worker", func(p *Proc) {
				for j := range rounds {
					p.Sleep(Time(1 + (i+j)%7))
					p.Yield()
					waiter.Wake()
				}
			})
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	run(2000) // warm up
	small := run(2000)
	large := run(20000)
	// Arrays grow to the largest set of pending items the run reaches; with
	// delays spread over 30 bits a new record is rarer as the run goes on
	// (about a dozen more allocations for 10 times the rounds, not 10 times
	// as many; 1,000 to 200,000 rounds: 171, 184, 195, 197).
	if large > small+25 {
		t.Errorf("20,000 rounds allocated %d times, 2,000 rounds %d", large, small)
	}
}

// TestAfterForeverNeverRuns: a delay that overflows the current time plus
// it is the end of time, not a negative time: the event never runs before
// the others, and the calendar stays in order.
func TestAfterForeverNeverRuns(t *testing.T) {
	e := NewEngine(1)
	var got []int
	e.After(5, func() {
		e.After(Forever, func() { got = append(got, 0) })
		e.After(3, func() { got = append(got, 2) })
	})
	e.After(7, func() { got = append(got, 1) })
	e.SetLimits(Limits{MaxTime: Second})
	err := e.Run()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "simulated time" {
		t.Fatalf("Run = %v, want the simulated-time limit", err)
	}
	if !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("ran %v, want [1 2]", got)
	}
}

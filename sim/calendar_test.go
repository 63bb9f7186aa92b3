package sim

import (
	"cmp"
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

// TestCalendarAgainstSort drives the calendar directly as the engine does
// (peeks, pops, time moved forward without a pop as Sleep's fast path
// does, cancels, moves, times spread over many bit widths) and checks
// every event comes out in (time, sequence) order, against a sorted list.
func TestCalendarAgainstSort(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var c calendar
		var now Time
		type ref struct {
			at  Time
			seq uint64
			h   Handle
		}
		var pending []ref
		id := map[uint64]int{} // seq -> action tag check
		tag := 0
		add := func(at Time) {
			tag++
			n := tag
			h := c.schedule(at, now, action{fn: func() { _ = n }})
			pending = append(pending, ref{at, h.seq, h})
			id[h.seq] = n
		}
		// Spreads around the radix heap's digit boundaries (255, 256,
		// 65,535, 65,536 ps) as well as far ones.
		spread := []Time{0, 1, 3, 255, 256, 1000, 65535, 1 << 16, 1 << 20, 1 << 40}
		byTimeSeq := func(a, b ref) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return cmp.Compare(a.seq, b.seq)
		}
		for step := 0; step < 20000; step++ {
			switch op := r.IntN(12); {
			case op < 4:
				d := spread[r.IntN(len(spread))]
				add(now + Time(r.Int64N(int64(d)+1)))
			case op == 10: // a wake-up at the current time, without a handle
				c.ready(action{})
				pending = append(pending, ref{now, c.seq, Handle{at: now, seq: c.seq, slot: -1}})
			case op == 11 && len(pending) > 0: // the chooser's view: the future events at the earliest time
				slices.SortFunc(pending, byTimeSeq)
				at := pending[0].at
				var want []uint64
				for _, p := range pending {
					if p.at == at && p.h.slot >= 0 {
						want = append(want, p.seq)
					}
				}
				var got []uint64
				for _, it := range c.itemsAt(at, nil) {
					got = append(got, it.seq)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: future events at %v are %v, want %v", seed, step, at, got, want)
				}
			case op == 4 && len(pending) > 0: // cancel
				k := r.IntN(len(pending))
				if c.cancel(pending[k].h) {
					pending = slices.Delete(pending, k, k+1)
				}
			case op == 5 && len(pending) > 0: // move a future item later
				k := r.IntN(len(pending))
				p := pending[k]
				if p.h.slot >= 0 && c.live(p.h) {
					at := p.at + 1 + Time(r.IntN(50))
					if q := pending[r.IntN(len(pending))]; r.IntN(2) == 0 && q.at > now {
						// To another event's time, maybe far ahead (a
						// bucket above level 0): a tie that the moved
						// event, the older, must win.
						at = q.at
					}
					h := c.move(p.h, at)
					pending[k] = ref{at, p.seq, h}
				}
			case op == 6: // Sleep's fast path: time moves to before the earliest future item
				if m, ok := c.treeMin(); ok && c.lane.n == 0 && m > now+1 {
					now += 1 + Time(r.Int64N(int64(m-now-1)))
				}
			case op == 7: // Run's pop, straight (everything pending may be cancelled)
				at, _, ok := c.pop(now)
				if ok != (len(pending) > 0) {
					t.Fatalf("seed %d step %d: pop found %v, %d pending", seed, step, ok, len(pending))
				}
				if !ok {
					continue
				}
				slices.SortFunc(pending, func(a, b ref) int {
					if a.at != b.at {
						return cmp.Compare(a.at, b.at)
					}
					return cmp.Compare(a.seq, b.seq)
				})
				if at != pending[0].at {
					t.Fatalf("seed %d step %d: pop ran at %v, want %v", seed, step, at, pending[0].at)
				}
				pending = pending[1:]
				now = at
			default: // run the earliest
				at, _, lane, ok := c.peek(now)
				if !ok {
					if len(pending) != 0 {
						t.Fatalf("seed %d step %d: calendar empty, %d pending", seed, step, len(pending))
					}
					continue
				}
				slices.SortFunc(pending, func(a, b ref) int {
					if a.at != b.at {
						return cmp.Compare(a.at, b.at)
					}
					return cmp.Compare(a.seq, b.seq)
				})
				want := pending[0]
				var got uint64
				if lane {
					got = c.lane.buf[c.lane.head].seq
				} else {
					got = c.slots[c.top()].seq
				}
				if at != want.at || got != want.seq {
					t.Fatalf("seed %d step %d: next is (%v, %d), want (%v, %d)", seed, step, at, got, want.at, want.seq)
				}
				if r.IntN(2) == 0 {
					c.take(lane)
				} else if at2, _, ok := c.pop(now); !ok || at2 != at {
					t.Fatalf("seed %d step %d: pop disagrees with peek", seed, step)
				}
				pending = pending[1:]
				now = at
			}
		}
	}
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

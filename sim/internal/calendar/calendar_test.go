package calendar

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCalendarAgainstSort drives the calendar directly as the engine does
// (peeks, pops, time moved forward without a pop as Sleep's fast path
// does, cancels, moves, times spread over many bit widths) and checks
// every event comes out in (time, sequence) order, against a sorted list.
func TestCalendarAgainstSort(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var c Calendar[int64, int]
		var now int64
		type ref struct {
			at  int64
			seq uint64
			h   Handle[int64]
		}
		// pending is the reference: every live event, kept sorted by
		// (time, sequence).
		var pending []ref
		byint64Seq := func(a, b ref) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return cmp.Compare(a.seq, b.seq)
		}
		insert := func(p ref) {
			i, _ := slices.BinarySearchFunc(pending, p, byint64Seq)
			pending = slices.Insert(pending, i, p)
		}
		tag := 0
		add := func(at int64) {
			tag++
			n := tag
			h := c.Schedule(at, now, n)
			insert(ref{at, h.seq, h})
		}
		// Spreads around the radix heap's digit boundaries (255, 256,
		// 65,535, 65,536 ps) as well as far ones.
		spread := []int64{0, 1, 3, 255, 256, 1000, 65535, 1 << 16, 1 << 20, 1 << 40}
		for step := 0; step < 20000; step++ {
			switch op := r.IntN(12); {
			case op < 4:
				d := spread[r.IntN(len(spread))]
				add(now + (r.Int64N(int64(d) + 1)))
			case op == 10: // a wake-up at the current time, without a handle
				c.Ready(0)
				insert(ref{now, c.seq, Handle[int64]{at: now, seq: c.seq, slot: -1}})
			case op == 11 && len(pending) > 0: // the chooser's view: the future events at the earliest time
				at := pending[0].at
				var want []uint64
				for _, p := range pending {
					if p.at == at && p.h.slot >= 0 {
						want = append(want, p.seq)
					}
				}
				var got []uint64
				for _, it := range c.PendingAt(at, nil) {
					if it.Handle.Valid() {
						got = append(got, it.Seq)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: future events at %v are %v, want %v", seed, step, at, got, want)
				}
			case op == 4 && len(pending) > 0: // cancel
				k := r.IntN(len(pending))
				if c.Cancel(pending[k].h) {
					pending = slices.Delete(pending, k, k+1)
				}
			case op == 5 && len(pending) > 0: // move a future item later
				k := r.IntN(len(pending))
				p := pending[k]
				if p.h.slot >= 0 && c.live(p.h) {
					at := p.at + 1 + int64(r.IntN(50))
					if q := pending[r.IntN(len(pending))]; r.IntN(2) == 0 && q.at > now {
						// To another event's time, maybe far ahead (a
						// bucket above level 0): a tie that the moved
						// event, the older, must win.
						at = q.at
					}
					h := c.Move(p.h, at)
					pending = slices.Delete(pending, k, k+1)
					insert(ref{at, p.seq, h})
				}
			case op == 6: // Sleep's fast path: time moves to before the earliest future item
				if m, ok := c.NextFuture(); ok && c.LaneLen() == 0 && m > now+1 {
					now += 1 + (r.Int64N(int64(m - now - 1)))
				}
			case op == 7: // Run's pop, straight (everything pending may be cancelled)
				at, _, ok := c.pop(now)
				if ok != (len(pending) > 0) {
					t.Fatalf("seed %d step %d: pop found %v, %d pending", seed, step, ok, len(pending))
				}
				if !ok {
					continue
				}
				if at != pending[0].at {
					t.Fatalf("seed %d step %d: pop ran at %v, want %v", seed, step, at, pending[0].at)
				}
				pending = pending[1:]
				now = at
			default: // run the earliest
				s, ok := c.Front(now)
				if !ok {
					if len(pending) != 0 {
						t.Fatalf("seed %d step %d: calendar empty, %d pending", seed, step, len(pending))
					}
					continue
				}
				want := pending[0]
				var got uint64
				at, _ := c.Event(s, now)
				if s == 0 {
					got = c.lane.buf[c.lane.head].seq
				} else {
					got = c.slots[c.top()].seq
				}
				if at != want.at || got != want.seq {
					t.Fatalf("seed %d step %d: next is (%v, %d), want (%v, %d)", seed, step, at, got, want.at, want.seq)
				}
				if r.IntN(2) == 0 {
					c.Take(s)
				} else if at2, _, ok := c.pop(now); !ok || at2 != at {
					t.Fatalf("seed %d step %d: pop disagrees with peek", seed, step)
				}
				pending = pending[1:]
				now = at
			}
		}
	}
}

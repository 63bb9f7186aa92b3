package t3d

import (
	"fmt"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// mergedRun has every PE of a 16-PE partition lock a word of PE 0 with
// swaps (backing off when it is held), get two words of PE 0, put a block
// and two words there and unlock, four times, all starting at the same
// instants (ties everywhere): with merged, each step after an operation
// slept with its wait (PutMerged and the others), else step by step as
// ch_t3d's shared queue does. It returns every step's end as "time PE
// step", in the order the PEs went on, and the run's events.
func mergedRun(t *testing.T, merged bool) ([]string, uint64) {
	t.Helper()
	const pes = 16
	eng, m := newMachine(t, pes)
	lock, state := alloc(t, m, 0, 64), alloc(t, m, 0, 64)
	var log []string
	for pe := 0; pe < pes; pe++ {
		src, dst := alloc(t, m, pe, 256), alloc(t, m, pe, 64)
		eng.Spawn(fmt.Sprint("pe", pe), func(p *sim.Proc) {
			note := func(step string) { log = append(log, fmt.Sprint(p.Now(), " ", pe, " ", step)) }
			st, backoff := m.Startup(), sim.Microsecond
			start, back := sim.Steps{N: 1, D: st}, sim.Steps{N: 1, D: backoff}
			for k := 0; k < 4; k++ {
				if merged {
					for m.SwapMerged(p, pe, 0, lock.Addr, uint64(pe+1), st, start, back) != 0 {
						note("busy")
					}
					m.GetMerged(p, pe, 0, dst.Addr, state.Addr, 16, 0, sim.Steps{N: 3, D: st})
					note("got")
					m.PutMerged(p, pe, 0, state.Addr+mem.Addr(8*(pe%4)), src.Addr, 8*(pe%4+1), st, start)
					m.PutWordMerged(p, pe, 0, state.Addr, uint64(k), 0, start)
					m.PutWordMerged(p, pe, 0, lock.Addr, 0, 0, sim.Steps{})
				} else {
					for m.Swap(p, pe, 0, lock.Addr, uint64(pe+1)) != 0 {
						p.Sleep(backoff)
						note("busy")
					}
					m.Get(p, pe, 0, dst.Addr, state.Addr, 16)
					for range 3 {
						p.Sleep(st)
					}
					note("got")
					m.Put(p, pe, 0, state.Addr+mem.Addr(8*(pe%4)), src.Addr, 8*(pe%4+1))
					m.PutWord(p, pe, 0, state.Addr, uint64(k))
					m.PutWord(p, pe, 0, lock.Addr, 0)
				}
				note("unlocked")
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	return log, eng.Events()
}

// TestMergedMatchesStepByStep: the merged operations' steps end at the
// same times, and the processes go on in the same order among same-time
// events, as the steps slept one by one after a wake-up
// (sim.Proc.WakeSteps), in as many events.
func TestMergedMatchesStepByStep(t *testing.T) {
	one, evOne := mergedRun(t, false)
	merged, evMerged := mergedRun(t, true)
	if !slices.Equal(one, merged) {
		for i := range min(len(one), len(merged)) {
			if one[i] != merged[i] {
				t.Fatalf("step %d of %d: step by step %q, merged %q", i, len(one), one[i], merged[i])
			}
		}
		t.Fatalf("%d steps against %d", len(one), len(merged))
	}
	if evOne != evMerged {
		t.Errorf("events: step by step %d, merged %d", evOne, evMerged)
	}
	busy := 0
	for _, s := range one {
		if len(s) > 4 && s[len(s)-4:] == "busy" {
			busy++
		}
	}
	if busy == 0 {
		t.Error("no swap found the lock held: the back-off was not compared")
	}
	t.Logf("%d steps, %d failed swaps, %d events", len(one), busy, evOne)
}

package aclmpl

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// asyncTraffic runs nonblocking traffic with the asynchronous protocol on
// pes PEs and returns every receive's completion time and status, in a
// fixed order, and the engine's events: each PE posts receives from every
// other PE in rounds of depth, then sends to them (messages of random
// lengths, several pieces each), then waits for its receives in turn; a
// last round receives from any PE with Test polls in between. Small pools
// overflow often, so that scans meet copy-outs, resets and headers landing
// while a scan runs. stepByStep runs the engine step by step
// (sim.Engine.SetStepByStep).
func asyncTraffic(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), pes, depth int, seed uint64, params Params, stepByStep bool) ([]string, uint64) {
	t.Helper()
	eng := sim.NewEngine(seed)
	eng.SetStepByStep(stepByStep)
	m, err := build(eng, pes)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(m, params)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 9))
	size := make([][]int, pes)
	for s := range size {
		size[s] = make([]int, pes)
		for d := range size[s] {
			size[s][d] = r.IntN(4 * params.SlotBytes)
		}
	}
	out := make([][]string, pes)
	for me := 0; me < pes; me++ {
		x := l.PE(me)
		eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
			p.Sleep(sim.Time(me) * 53 * sim.Nanosecond) // PEs out of step
			send := buffer(t, x, 4*params.SlotBytes)
			fill(send.Bytes(), uint64(me))
			bufs := make([]stacks.Request, 0, depth)
			for base := 1; base < pes; base += depth {
				end := min(pes, base+depth)
				bufs = bufs[:0]
				for i := base; i < end; i++ {
					src := (me - i + pes) % pes
					q, err := x.Irecv(p, buffer(t, x, size[src][me]), src, 1)
					must(t, err)
					bufs = append(bufs, q)
				}
				for i := base; i < end; i++ {
					dst := (me + i) % pes
					_, err := x.Isend(p, send.Slice(0, size[me][dst]), dst, 1)
					must(t, err)
				}
				for _, q := range bufs {
					st, err := q.Wait(p)
					must(t, err)
					out[me] = append(out[me], fmt.Sprintf("PE %d: %+v at %v", me, st, p.Now()))
				}
			}
			// One more message to the next PE, received from any PE with
			// Test polls.
			_, err := x.Isend(p, send.Slice(0, size[me][(me+1)%pes]), (me+1)%pes, 2)
			must(t, err)
			q, err := x.Irecv(p, buffer(t, x, 4*params.SlotBytes), stacks.AnySource, 2)
			must(t, err)
			for {
				done, st, err := q.Test(p)
				must(t, err)
				if done {
					out[me] = append(out[me], fmt.Sprintf("PE %d: any %+v at %v", me, st, p.Now()))
					break
				}
				p.Sleep(700 * sim.Nanosecond)
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatalf("%d PEs, seed %d, step by step %v: %v", pes, seed, stepByStep, err)
	}
	var all []string
	for _, o := range out {
		all = append(all, o...)
	}
	resets := 0
	for i := 0; i < pes; i++ {
		resets += l.PE(i).AsyncStats().Resets
	}
	if resets == 0 {
		t.Errorf("%d PEs, seed %d: no pool overflow: the comparison does not cover copy-outs", pes, seed)
	}
	return append(all, fmt.Sprint("end ", eng.Now())), eng.Events()
}

// TestAsyncMergedMatchesStepByStep: asynchronous traffic with the
// engine's and the CPU's merging of steps gives the same simulated times
// and statuses, to the picosecond, as the engine run step by step, on
// small partitions with overflowing pools, where headers land while a
// receive scans, on every machine; with no more events (a receive's scan
// of the pool is one merged poll).
func TestAsyncMergedMatchesStepByStep(t *testing.T) {
	for _, mc := range machinesUnderTest {
		for _, tc := range []struct {
			pes, depth, slots, slotBytes int
			seed                         uint64
		}{{2, 1, 2, 64, 1}, {3, 2, 3, 128, 2}, {5, 4, 4, 256, 3}, {8, 3, 5, 128, 4}, {8, 7, 8, 512, 5}, {13, 4, 6, 256, 6}} {
			t.Run(fmt.Sprintf("%s/%dPEs/depth%d/slots%d/seed%d", mc.name, tc.pes, tc.depth, tc.slots, tc.seed), func(t *testing.T) {
				params := DefaultParams()
				params.PoolSlots, params.SlotBytes, params.RetryUs = tc.slots, tc.slotBytes, 1
				merged, ev1 := asyncTraffic(t, mc.build, tc.pes, tc.depth, tc.seed, params, false)
				step, evN := asyncTraffic(t, mc.build, tc.pes, tc.depth, tc.seed, params, true)
				if !slices.Equal(merged, step) {
					for i := range min(len(merged), len(step)) {
						if merged[i] != step[i] {
							t.Fatalf("completion %d of %d: merged %s, step by step %s", i, len(merged), merged[i], step[i])
						}
					}
					t.Fatalf("%d completions against %d", len(merged), len(step))
				}
				if ev1 > evN {
					t.Errorf("merged run took %d events, step by step %d", ev1, evN)
				}
				t.Logf("events %d against %d step by step", ev1, evN)
			})
		}
	}
}

// TestListFindMatchesIndexFunc: the list search by source PE returns the
// index of the first piece a receive matches, as a search of the whole
// list does, as pieces from many PEs are added and taken.
func TestListFindMatchesIndexFunc(t *testing.T) {
	a := &asyncState{fromSrc: make([][]uint64, 8)}
	rng := rand.New(rand.NewPCG(3, 4))
	next := make([]int, 8) // offset of the next piece listed from each PE
	for k := range 5000 {
		if rng.IntN(3) > 0 || len(a.list) == 0 {
			src := rng.IntN(9) // 8: a PE no receive names (out of range)
			off := 0
			if src < 8 {
				off, next[src] = next[src], next[src]+8
			}
			a.listAdd(piece{src: src, tag: rng.IntN(2), off: off, n: 8})
			continue
		}
		pc := a.list[rng.IntN(len(a.list))]
		r := &recvReq{src: pc.src, tag: pc.tag, got: pc.off}
		if rng.IntN(4) == 0 {
			r.src = stacks.AnySource
		}
		if rng.IntN(4) == 0 {
			r.got += 8 // perhaps no match
		}
		want := slices.IndexFunc(a.list, r.matches)
		if got := a.listFind(r); got != want {
			t.Fatalf("step %d: listFind %d, first match at %d", k, got, want)
		}
		if want >= 0 {
			a.listRemove(want)
		}
	}
	for src, f := range a.fromSrc {
		n := 0
		for _, pc := range a.list {
			if pc.src == src {
				n++
			}
		}
		if n != len(f) {
			t.Fatalf("PE %d: %d pieces listed, %d indexed", src, n, len(f))
		}
	}
}

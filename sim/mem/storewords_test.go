package mem

import (
	"fmt"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// mergeRun runs a process that stores words into its buffer and
// invalidates cached lines of another region, between cached loads, while
// a second CPU's process writes that region at odd times; merged uses
// StoreWords and InvalidateRange, else Store and InvalidateLine one by
// one (the model they merge; lines stay below the whole-cache flush). It returns what the first process read and
// when each step ended, its CPU's counters, and the events.
func mergeRun(t *testing.T, words, lines int, offset sim.Time, merged bool) ([]string, Stats, uint64) {
	t.Helper()
	cfg, err := Builtin("sc")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cache.Coherent = false // a T3D-like cache: invalidated by hand
	e := sim.NewEngine(1)
	m := NewMemory("pe", 1<<20)
	buf, _ := m.Alloc("buf", 8*words, 64)
	in, _ := m.Alloc("in", 64*lines, 64)
	c, err := NewCPU(e, "pe", m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewCPU(e, "other", m, cfg)
	lb := cfg.Cache.LineBytes
	var log []string
	note := func(p *sim.Proc, what string, v uint64) {
		log = append(log, fmt.Sprintf("%s %#x at %v", what, v, p.Now()))
	}
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(offset)
		for i := range 3 * lines {
			other.Store(p, in.Addr((i%lines)*lb), 8, uint64(100+i))
			p.Sleep(7 * sim.Nanosecond)
		}
	})
	e.Spawn("pe", func(p *sim.Proc) {
		for round := range 3 {
			for i := range lines { // cache the lines
				note(p, fmt.Sprintf("round %d load %d", round, i), c.Load(p, in.Addr(i*lb), 8))
			}
			ws := make([]uint64, words)
			for i := range ws {
				ws[i] = uint64(round*1000 + i)
			}
			if merged {
				c.StoreWords(p, buf.Base, ws...)
			} else {
				for i, w := range ws {
					c.Store(p, buf.Addr(8*i), 8, w)
				}
			}
			note(p, "stored", c.Load(p, buf.Addr(8*(words-1)), 8))
			if merged {
				c.InvalidateRange(p, in.Base, lines*lb)
			} else {
				for i := range lines {
					c.InvalidateLine(p, in.Addr(i*lb))
				}
			}
			for i := range lines {
				note(p, fmt.Sprintf("round %d reload %d", round, i), c.Load(p, in.Addr(i*lb), 8))
			}
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return log, c.Stats(), e.Events()
}

// TestMergedStepsMatchStepByStep: StoreWords and InvalidateRange as one
// run of steps each give the same simulated times, loaded values and
// counters, to the picosecond, as the stores and line invalidations
// issued one by one, while another processor writes the invalidated lines
// meanwhile; in as many events (one per step).
func TestMergedStepsMatchStepByStep(t *testing.T) {
	for _, tc := range []struct {
		words, lines int
		offset       sim.Time
	}{{1, 1, 0}, {4, 2, 3 * sim.Nanosecond}, {11, 3, 55 * sim.Nanosecond}, {16, 4, 131 * sim.Nanosecond}} {
		t.Run(fmt.Sprintf("%dwords/%dlines", tc.words, tc.lines), func(t *testing.T) {
			one, s1, ev1 := mergeRun(t, tc.words, tc.lines, tc.offset, true)
			step, sN, evN := mergeRun(t, tc.words, tc.lines, tc.offset, false)
			if !slices.Equal(one, step) {
				for i := range min(len(one), len(step)) {
					if one[i] != step[i] {
						t.Fatalf("step %d: merged %s, one by one %s", i, one[i], step[i])
					}
				}
				t.Fatalf("%d steps against %d", len(one), len(step))
			}
			if s1 != sN {
				t.Errorf("counters: merged %+v, one by one %+v", s1, sN)
			}
			if ev1 != evN {
				t.Errorf("merged took %d events, one by one %d", ev1, evN)
			}
		})
	}
}

// tieRun has a process run a merged run of steps (StoreWords of 3 words,
// or InvalidateRange of 3 lines) from time start, or the steps one by one,
// while a planter, from an instant inside the run (its start, after the
// process began it, or the end of its first or second step: plantAt 0, 1
// or 2), schedules an event for exactly the time the run ends: a callback
// (Engine.At) or its own process's wake-up (a sleep). The planted event writes a word of the process's memory;
// after the run the process reads it (PeekUncached). It returns who ran
// when at the run's end, in the order they ran, and what the process read.
func tieRun(t *testing.T, op string, plantAt int, byProc, merged bool) []string {
	t.Helper()
	cfg, err := Builtin("sc")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cache.Coherent = false
	e := sim.NewEngine(1)
	m := NewMemory("pe", 1<<20)
	buf, _ := m.Alloc("buf", 3*64, 64)
	flag, _ := m.Alloc("flag", 8, 8)
	c, err := NewCPU(e, "pe", m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	step := c.Clock().Cycles(cfg.Costs.StoreCycles)
	if op == "invalidate" {
		step = c.Clock().Cycles(cfg.Costs.UncachedLoadCycles)
	}
	end := 3 * step
	var log []string
	var start sim.Time
	plant := func() {
		log = append(log, fmt.Sprint("planted event at ", e.Now()-start))
		m.Store64(flag.Base, 1)
	}
	e.Spawn("pe", func(p *sim.Proc) {
		for i := range 3 {
			c.Load(p, buf.Addr(64*i), 8) // cache the lines
		}
		start = p.Now()
		if byProc {
			e.Spawn("planter", func(q *sim.Proc) {
				q.Sleep(sim.Time(plantAt) * step)
				q.Sleep(end - q.Now() + start)
				plant()
			})
		} else {
			e.At(start+sim.Time(plantAt)*step, func() { e.At(start+end, plant) })
		}
		switch {
		case op == "store" && merged:
			c.StoreWords(p, buf.Base, 1, 2, 3)
		case op == "store":
			for i := range 3 {
				c.Store(p, buf.Addr(8*i), 8, uint64(i+1))
			}
		case merged:
			c.InvalidateRange(p, buf.Base, 3*64)
		default:
			for i := range 3 {
				c.InvalidateLine(p, buf.Addr(64*i))
			}
		}
		log = append(log, fmt.Sprintf("pe went on at %v (run %v long), read %d", p.Now()-start, end, c.PeekUncached(flag.Base, 8)))
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestMergedStepsKeepTies: a merged run of steps (StoreWords,
// InvalidateRange) ends in the same order among the events of its last
// instant as the steps one by one, when another event is scheduled for
// exactly that instant from inside the run (a same-time tie, as lockstep
// PEs make): step by step, the process's last wake-up is scheduled at its
// last step's start, after the planted event, so it goes on after it and
// reads the planted word; merged, it must too. (A merged sleep scheduled
// at the run's start went on first: every case failed on 970b43b.)
func TestMergedStepsKeepTies(t *testing.T) {
	for _, op := range []string{"store", "invalidate"} {
		for _, byProc := range []bool{false, true} {
			for plantAt := 0; plantAt <= 2; plantAt++ {
				t.Run(fmt.Sprintf("%s/proc=%v/plant@step%d", op, byProc, plantAt), func(t *testing.T) {
					one := tieRun(t, op, plantAt, byProc, false)
					merged := tieRun(t, op, plantAt, byProc, true)
					if !slices.Equal(one, merged) {
						t.Errorf("step by step %q\nmerged       %q", one, merged)
					}
				})
			}
		}
	}
}

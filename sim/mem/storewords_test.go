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
// sleep each give the same simulated times, loaded values and counters,
// to the picosecond, as the stores and line invalidations issued one by
// one, while another processor writes the invalidated lines meanwhile; in
// fewer events.
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
			if tc.words+tc.lines > 2 && ev1 >= evN {
				t.Errorf("merged took %d events, one by one %d", ev1, evN)
			}
		})
	}
}

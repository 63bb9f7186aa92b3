package mem

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// spinPred is a spin predicate on the flag word at a: it reads the flag
// as its poll does and reports whether the flag holds at least want.
type spinPred struct {
	name string
	poll func(c *CPU, p *sim.Proc, a Addr, want uint64, seen *uint64) bool
}

var spinPreds = []spinPred{
	{"uncached load", func(c *CPU, p *sim.Proc, a Addr, want uint64, seen *uint64) bool {
		*seen = c.LoadUncached(p, a, 8)
		return *seen >= want
	}},
	{"uncached load then compute", func(c *CPU, p *sim.Proc, a Addr, want uint64, seen *uint64) bool {
		*seen = c.LoadUncached(p, a, 8)
		c.Compute(p, 7)
		return *seen >= want
	}},
	{"two uncached loads and compute", func(c *CPU, p *sim.Proc, a Addr, want uint64, seen *uint64) bool {
		*seen = c.LoadUncached(p, a, 8)
		c.LoadUncached(p, a+64, 8)
		c.Compute(p, 3)
		return *seen >= want
	}},
	{"peek (a poll costing nothing)", func(c *CPU, p *sim.Proc, a Addr, want uint64, seen *uint64) bool {
		*seen = c.PeekUncached(a, 8)
		return *seen >= want
	}},
}

// spinResult is when a spinner's two spins ended and what each saw.
type spinResult struct {
	woke [2]sim.Time
	seen [2]uint64
}

// spinRun runs a spinner that waits for the flag to reach 1, computes a
// little, then waits for it to reach 2; the writes land at their times
// (scheduled first: at an instant they share with a poll, the poll reads
// them). stepByStep makes the spinner poll for real (SetPollingSpins).
func spinRun(t *testing.T, pred spinPred, writes []write, stepByStep bool) spinResult {
	t.Helper()
	e, m, cpus, seg := setup(t, "sc", 1)
	c := cpus[0]
	flag := seg.Addr(0)
	for _, w := range writes {
		e.At(w.at, func() { m.Store64(flag, w.v) })
	}
	e.SetStepByStep(stepByStep)
	c.SetPollingSpins(true)
	var r spinResult
	e.Spawn("spinner", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		for k := range 2 {
			want := uint64(k + 1)
			c.SpinUntil(p, sim.Reason("test: the flag"), func() bool { return pred.poll(c, p, flag, want, &r.seen[k]) }, flag)
			r.woke[k] = p.Now()
			c.Compute(p, 13)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSleepingSpinMatchesPolling: a spin that sleeps until its flag is
// written (the default) and the same spin polling for real (the engine
// step by step) end at the same instants having read the same values,
// for writes landing at every 10 ns over the first 40 polls: at the very
// instant of a poll, during one, between, and before the spin starts; a
// write that lands while the spinner sleeps wakes it at the poll that
// would have read it.
func TestSleepingSpinMatchesPolling(t *testing.T) {
	t0 := sim.Microsecond
	for _, pred := range spinPreds {
		t.Run(pred.name, func(t *testing.T) {
			for off := -20 * sim.Nanosecond; off < 40*170*sim.Nanosecond; off += 10 * sim.Nanosecond {
				w := t0 + off
				for _, ws := range [][]write{
					{{w, 0, 1}, {w + 3*sim.Microsecond + off/3, 0, 2}},
					{{w, 0, 2}},
					{{w, 0, 1}, {w + 170*sim.Nanosecond, 0, 0}, {w + 2*sim.Microsecond, 0, 2}},
				} {
					sleeping, polling := spinRun(t, pred, ws, false), spinRun(t, pred, ws, true)
					if sleeping != polling {
						t.Fatalf("writes %v: sleeping spin %+v, polling spin %+v", ws, sleeping, polling)
					}
				}
			}
		})
	}
}

// TestPollingSpinCosts: step by step a spin polls for real (its loads
// counted, an event each); by default it sleeps between a poll and the
// write (a few events, whatever the wait).
func TestPollingSpinCosts(t *testing.T) {
	for _, stepByStep := range []bool{false, true} {
		e, m, cpus, seg := setup(t, "sc", 1)
		c := cpus[0]
		e.At(100*sim.Microsecond, func() { m.Store64(seg.Addr(0), 1) })
		e.SetStepByStep(stepByStep)
		c.SetPollingSpins(true)
		e.Spawn("spinner", func(p *sim.Proc) {
			c.SpinUntil(p, sim.Reason("test: the flag"), func() bool { return c.LoadUncached(p, seg.Addr(0), 8) != 0 }, seg.Addr(0))
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		loads, events := c.Stats().Uncached, e.Events()
		if stepByStep && (loads != 1001 || events < 1001) {
			t.Errorf("polling spin: %d loads in %d events, want 1001 loads (one every 100 ns over 100 us, and the last)", loads, events)
		}
		if !stepByStep && (loads != 2 || events > 5) {
			t.Errorf("sleeping spin: %d loads in %d events, want 2 loads in a few events", loads, events)
		}
	}
}

// TestPollingSpinLivelock: step by step, a spin nothing can end still ends
// in a livelock report once nothing else is pending.
func TestPollingSpinLivelock(t *testing.T) {
	e, _, cpus, seg := setup(t, "sc", 1)
	c := cpus[0]
	e.SetStepByStep(true)
	c.SetPollingSpins(true)
	e.At(5*sim.Microsecond, func() {})
	e.Spawn("spinner", func(p *sim.Proc) {
		c.SpinUntil(p, sim.Reason("test: a flag nobody sets"), func() bool { return c.LoadUncached(p, seg.Addr(0), 8) != 0 }, seg.Addr(0))
	})
	if err := e.Run(); !sim.IsLivelock(err) {
		t.Fatalf("got %v, want a livelock", err)
	}
	if n := c.Stats().Uncached; n < 50 {
		t.Errorf("the spin polled %d times before the livelock, want one every 100 ns for 5 us", n)
	}
}

// TestMPSpinSleepingMatchesPolling is the litmus test MP+spin (message
// passing, the reader spinning on the flag) on the memory models with a
// store buffer: P0 stores x=1 then y=1, P1 spins until it loads y=1, then
// loads x. Over many seeds (the buffers' drain jitter), the spin sleeping
// until y is written and the spin polling for real end at the same
// instant with the same final state, r=0 included where stores drain out
// of order.
func TestMPSpinSleepingMatchesPolling(t *testing.T) {
	type result struct {
		woke, end sim.Time
		r         uint64
	}
	run := func(model string, seed uint64, stepByStep bool) result {
		cfg, err := Builtin(model)
		if err != nil {
			t.Fatal(err)
		}
		cfg.StoreBuffer.DrainJitterCycles = 40
		e := sim.NewEngine(seed)
		e.SetStepByStep(stepByStep)
		m := NewMemory("node0", 1<<16)
		seg, err := m.Alloc("shared", 4096, 64)
		if err != nil {
			t.Fatal(err)
		}
		x, y := seg.Addr(0), seg.Addr(512)
		var cpus [2]*CPU
		for i := range cpus {
			if cpus[i], err = NewCPU(e, "cpu", m, cfg); err != nil {
				t.Fatal(err)
			}
			cpus[i].SetPollingSpins(true)
		}
		var res result
		e.Spawn("P0", func(p *sim.Proc) {
			cpus[0].Store(p, x, 8, 1)
			cpus[0].Store(p, y, 8, 1)
		})
		e.Spawn("P1", func(p *sim.Proc) {
			c := cpus[1]
			c.SpinUntil(p, sim.Reason("waiting for y=1"), func() bool { return c.LoadUncached(p, y, 8) == 1 }, y)
			res.woke = p.Now()
			res.r = c.LoadUncached(p, x, 8)
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		res.end = e.Now()
		return res
	}
	for _, model := range []string{"tso", "pso"} {
		zero := 0
		for seed := uint64(1); seed <= 200; seed++ {
			sleeping, polling := run(model, seed, false), run(model, seed, true)
			if sleeping != polling {
				t.Fatalf("%s seed %d: sleeping spin %+v, polling spin %+v", model, seed, sleeping, polling)
			}
			if sleeping.r == 0 {
				zero++
			}
		}
		if model == "tso" && zero != 0 {
			t.Errorf("tso: r=0 in %d runs: the stores drain in order", zero)
		}
		t.Logf("%s: r=0 in %d of 200 runs", model, zero)
	}
}

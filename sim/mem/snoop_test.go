package mem

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// snoopSetup builds ncpu "sc" CPUs (coherent cache of 64-byte lines, no
// store buffer) on one snooping bus: 100 MB/s (a line's data 640 ns), a
// 100 ns address cycle, 1 us memory latency.
func snoopSetup(t *testing.T, ncpu int) (*sim.Engine, *Bus, []*CPU, Segment) {
	t.Helper()
	e, _, cpus, seg := setup(t, "sc", ncpu)
	bus, err := NewBus(BusConfig{LineBytes: 64, MBps: 100, AddressNs: 100, MemoryLatencyNs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cpus {
		if err := bus.Attach(c); err != nil {
			t.Fatal(err)
		}
	}
	return e, bus, cpus, seg
}

// A store by one CPU invalidates the line in the other's cache, and the
// other's next load misses and pays the bus: the MESI states and the
// transactions step by step, each timed.
func TestSnoopStoreInvalidates(t *testing.T) {
	e, bus, cpus, seg := snoopSetup(t, 2)
	x := seg.Addr(0)
	hit := sim.Time(10 * sim.Nanosecond)                                       // "sc": one-cycle hits at 100 MHz
	miss := sim.Nano(100) + sim.TransferTime(64, 100e6) + sim.Nano(1000) + hit // address, data, latency, the load
	upgrade := sim.Nano(100) + hit                                             // address only, then the store
	type step struct {
		name     string
		cpu      int
		op       func(p *sim.Proc, c *CPU)
		took     sim.Time
		s0, s1   string // the line's state in each cache after the step
		wantSeen uint64 // a load's value
	}
	var seen uint64
	load := func(p *sim.Proc, c *CPU) { seen = c.Load(p, x, 8) }
	steps := []step{
		{"cpu0 loads: a miss, exclusive", 0, load, miss, "E", "I", 0},
		{"cpu0 loads again: a hit", 0, load, hit, "E", "I", 0},
		{"cpu1 loads: a miss, both shared", 1, load, miss, "S", "S", 0},
		{"cpu0 stores: an upgrade invalidates cpu1's copy", 0, func(p *sim.Proc, c *CPU) { c.Store(p, x, 8, 7) }, upgrade, "M", "I", 0},
		{"cpu1 loads: a miss served by cpu0's modified line", 1, load, miss, "S", "S", 7},
		{"cpu1 stores: an upgrade", 1, func(p *sim.Proc, c *CPU) { c.Store(p, x, 8, 9) }, upgrade, "I", "M", 7},
		{"cpu0's test-and-set: a read-exclusive", 0, func(p *sim.Proc, c *CPU) { seen = c.TestAndSet(p, x) }, miss - hit + 10*hit, "M", "I", 9},
	}
	e.Spawn("steps", func(p *sim.Proc) {
		for _, s := range steps {
			t0 := p.Now()
			s.op(p, cpus[s.cpu])
			if d := p.Now() - t0; d != s.took {
				t.Errorf("%s: took %v, want %v", s.name, d, s.took)
			}
			if g0, g1 := cpus[0].LineState(x), cpus[1].LineState(x); g0 != s.s0 || g1 != s.s1 {
				t.Errorf("%s: states %s %s, want %s %s", s.name, g0, g1, s.s0, s.s1)
			}
			if seen != s.wantSeen {
				t.Errorf("%s: read %d, want %d", s.name, seen, s.wantSeen)
			}
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := bus.Stats()
	if st.Reads != 3 || st.Upgrades != 2 || st.ReadExs != 1 || st.Interventions != 2 || st.Invalidations != 3 {
		t.Errorf("bus stats %+v", st)
	}
}

// A spinner reads its cached copy without the bus until the writer's
// store invalidates it; then one miss, and it sees the value.
func TestSnoopSpinWakesOnInvalidation(t *testing.T) {
	e, bus, cpus, seg := snoopSetup(t, 2)
	flag := seg.Addr(0)
	var woke sim.Time
	e.Spawn("spinner", func(p *sim.Proc) {
		c := cpus[0]
		c.SpinUntil(p, sim.Reason("flag"), func() bool { return c.Load(p, flag, 8) != 0 }, flag)
		woke = p.Now()
	})
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(sim.Micro(100))
		cpus[1].Store(p, flag, 8, 1)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if st := bus.Stats(); st.Reads != 2 || st.ReadExs != 1 {
		t.Errorf("bus stats %+v: want the spinner's two misses and the writer's read-exclusive", st)
	}
	if woke < sim.Micro(100) || woke > sim.Micro(105) {
		t.Errorf("spinner woke at %v, want just after the store at 100 us", woke)
	}
}

// Copies by two CPUs compete for the bus: together they take longer than
// one alone, and the bus was held for both.
func TestSnoopCopiesShareTheBus(t *testing.T) {
	const n = 16 << 10
	run := func(ncpu int) sim.Time {
		e, m, cpus, _ := setup(t, "sc", ncpu)
		bus, err := NewBus(BusConfig{LineBytes: 64, MBps: 100, AddressNs: 100, MemoryLatencyNs: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var end sim.Time
		for _, c := range cpus {
			if err := bus.Attach(c); err != nil {
				t.Fatal(err)
			}
			src, _ := m.Alloc("src", n, 64)
			dst, _ := m.Alloc("dst", n, 64)
			m.Write(src.Base, make([]byte, n))
			e.Spawn("copy", func(p *sim.Proc) {
				c.Memcpy(p, dst.Base, src.Base, n)
				end = max(end, p.Now())
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return end
	}
	one, two := run(1), run(2)
	if two < one*3/2 {
		t.Errorf("two copies took %v, one %v: want the bus shared (at least 1.5x)", two, one)
	}
}

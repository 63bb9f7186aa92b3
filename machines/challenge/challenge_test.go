package challenge

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

func newMachine(t *testing.T, procs int) (*sim.Engine, *Machine) {
	t.Helper()
	e := sim.NewEngine(1)
	m, err := New(e, procs, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// The defaults' bus figures: a 128-byte line holds the 1.2 GB/s bus 107
// ns; a load miss on an idle bus is its address cycle, the line and
// memory's latency, about 1 us; a hit is two cycles.
func TestMissOnIdleBus(t *testing.T) {
	e, m := newMachine(t, 1)
	seg, err := m.SharedSegment(0, "x", 4096)
	if err != nil {
		t.Fatal(err)
	}
	var miss, hit sim.Time
	e.Spawn("p", func(p *sim.Proc) {
		t0 := p.Now()
		m.CPU(0).Load(p, seg.Addr, 8)
		miss = p.Now() - t0
		t0 = p.Now()
		m.CPU(0).Load(p, seg.Addr+8, 8)
		hit = p.Now() - t0
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	cyc := sim.ClockMHz(195).Cycles(1)
	want := sim.Nano(21) + sim.TransferTime(128, 1200e6) + sim.Nano(900) + 2*cyc
	if miss != want || hit != 2*cyc {
		t.Errorf("miss %v hit %v, want %v and %v", miss, hit, want, 2*cyc)
	}
}

// Coherence on the machine: a store by one CPU invalidates the line in the
// other's cache (an upgrade on the bus), and the other's next load misses,
// pays the bus and sees the value; a spinner waiting on the word wakes.
func TestStoreInvalidatesOtherCache(t *testing.T) {
	e, m := newMachine(t, 2)
	seg, _ := m.SharedSegment(0, "flag", 4096)
	a := seg.Addr
	var first, again, after sim.Time
	var seen uint64
	e.Spawn("reader", func(p *sim.Proc) {
		c := m.CPU(0)
		t0 := p.Now()
		c.Load(p, a, 8)
		first = p.Now() - t0
		t0 = p.Now()
		c.Load(p, a, 8)
		again = p.Now() - t0
		p.Sleep(sim.Micro(10)) // the writer stores meanwhile
		if s := c.LineState(a); s != "I" {
			t.Errorf("reader's line after the other's store: %s, want I", s)
		}
		t0 = p.Now()
		seen = c.Load(p, a, 8)
		after = p.Now() - t0
	})
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(sim.Micro(5))
		c := m.CPU(1)
		c.Load(p, a, 8) // the line shared by both
		c.Store(p, a, 8, 42)
		if s := c.LineState(a); s != "M" {
			t.Errorf("writer's line after its store: %s, want M", s)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if seen != 42 {
		t.Errorf("reader saw %d, want 42", seen)
	}
	if again >= first || after < first {
		t.Errorf("load times: first %v, cached %v, after the invalidation %v: want the last a miss like the first", first, again, after)
	}
	st := m.Bus().Stats()
	if st.Upgrades != 1 || st.Invalidations != 1 || st.Interventions != 1 || st.Reads != 3 {
		t.Errorf("bus %+v: want 3 reads, 1 upgrade invalidating 1 copy, 1 intervention", st)
	}
}

// LL/SC atomics (swap, fetch-and-increment) on a word of shared memory
// from two CPUs: every increment counted, and the line moves between the
// caches.
func TestAtomics(t *testing.T) {
	e, m := newMachine(t, 2)
	seg, _ := m.SharedSegment(0, "counter", 128)
	for pe := 0; pe < 2; pe++ {
		e.Spawn("inc", func(p *sim.Proc) {
			for i := 0; i < 10; i++ {
				m.FetchIncAt(p, pe, 0, seg.Addr)
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if v := m.Memory().Load64(seg.Addr); v != 20 {
		t.Errorf("counter %d, want 20", v)
	}
	if st := m.Bus().Stats(); st.ReadExs < 2 {
		t.Errorf("bus %+v: want the line taken exclusive by each CPU", st)
	}
}

func TestNewRejectsBadParams(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Params)
		want string
	}{
		{func(p *Params) { p.ClockMHz = 0 }, "clock_mhz"},
		{func(p *Params) { p.BusMBps = -1 }, "bus_mbps"},
		{func(p *Params) { p.CacheLineBytes = 100 }, "cache_line_bytes"},
		{func(p *Params) { p.CacheWays = 3 }, "cache_kb"},
	} {
		p := DefaultParams()
		tc.mod(&p)
		if _, err := New(sim.NewEngine(1), 2, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error naming %s", err, tc.want)
		}
	}
	if _, err := New(sim.NewEngine(1), MaxCPUs+1, DefaultParams()); err == nil {
		t.Error("37 processes accepted")
	}
}

func TestMemoryLimit(t *testing.T) {
	p := DefaultParams()
	p.NodeMemoryMB = 16
	m, err := New(sim.NewEngine(1), 2, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.SharedSegment(0, "big", 16<<20+1); !errors.Is(err, ErrMemoryFull) || !strings.Contains(err.Error(), "node_memory_mb") {
		t.Errorf("got %v, want ErrMemoryFull naming node_memory_mb", err)
	}
	if _, err := m.Alloc(0, "neg", -1); err == nil {
		t.Error("negative buffer accepted")
	}
}

// A P on a zero semaphore sleeps until the V; each call costs semop_us.
func TestSemop(t *testing.T) {
	e, m := newMachine(t, 2)
	id := m.Semget("lock", 0)
	var got sim.Time
	e.Spawn("waiter", func(p *sim.Proc) {
		if err := m.Semop(p, 0, id, -1); err != nil {
			t.Error(err)
		}
		got = p.Now()
	})
	e.Spawn("poster", func(p *sim.Proc) {
		p.Sleep(sim.Micro(50))
		if err := m.Semop(p, 1, id, +1); err != nil {
			t.Error(err)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := sim.Micro(50 + DefaultParams().SemopUs); got != want {
		t.Errorf("P returned at %v, want %v", got, want)
	}
}

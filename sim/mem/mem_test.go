package mem

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

func setup(t testing.TB, model string, ncpu int) (*sim.Engine, *Memory, []*CPU, Segment) {
	t.Helper()
	cfg, err := Builtin(model)
	if err != nil {
		t.Fatal(err)
	}
	e := sim.NewEngine(1)
	m := NewMemory("node0", 1<<20)
	seg, err := m.Alloc("shared", 4096, 64)
	if err != nil {
		t.Fatal(err)
	}
	var cpus []*CPU
	for i := 0; i < ncpu; i++ {
		c, err := NewCPU(e, "cpu", m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cpus = append(cpus, c)
	}
	return e, m, cpus, seg
}

func TestAllocLimit(t *testing.T) {
	m := NewMemory("n", 1000)
	if _, err := m.Alloc("a", 600, 64); err != nil {
		t.Fatal(err)
	}
	_, err := m.Alloc("b", 600, 64)
	if err == nil || !strings.Contains(err.Error(), `segment "b" of 600 bytes does not fit`) {
		t.Fatalf("got %v", err)
	}
}

func TestStoreBufferForwardingAndVisibility(t *testing.T) {
	e, m, cpus, seg := setup(t, "tso", 1)
	x := seg.Addr(0)
	e.Spawn("p", func(p *sim.Proc) {
		cpus[0].Store(p, x, 8, 42)
		if m.Load64(x) != 0 {
			t.Error("store visible before the buffer drained")
		}
		if v := cpus[0].Load(p, x, 8); v != 42 {
			t.Errorf("load did not forward own store: %d", v)
		}
		cpus[0].Fence(p)
		if m.Load64(x) != 42 || cpus[0].Buffered() != 0 {
			t.Error("fence did not drain the buffer")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestReorderedDrainOvertakesAcrossLinesOnly(t *testing.T) {
	overtook := 0
	for seed := uint64(0); seed < 200; seed++ {
		cfg, _ := Builtin("pso")
		e := sim.NewEngine(seed)
		m := NewMemory("n", 0)
		seg, _ := m.Alloc("s", 256, 64)
		c, _ := NewCPU(e, "c", m, cfg)
		data, flag, same := seg.Addr(0), seg.Addr(128), seg.Addr(8)
		e.Spawn("w", func(p *sim.Proc) {
			c.Store(p, data, 8, 1)
			c.Store(p, same, 8, 2) // same line as data: never before it
			c.Store(p, flag, 8, 3)
		})
		seenFlagFirst := false
		e.Spawn("watch", func(p *sim.Proc) {
			for i := 0; i < 100; i++ {
				d, s, f := m.Load64(data), m.Load64(same), m.Load64(flag)
				if s != 0 && d == 0 {
					t.Fatalf("seed %d: same-line stores reordered", seed)
				}
				if f != 0 && d == 0 {
					seenFlagFirst = true
				}
				p.Sleep(c.Clock().Period)
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if seenFlagFirst {
			overtook++
		}
	}
	if overtook == 0 || overtook == 200 {
		t.Fatalf("flag overtook data in %d of 200 seeds; want some but not all", overtook)
	}
}

func TestNonCoherentCacheIsStale(t *testing.T) {
	e, m, cpus, seg := setup(t, "noncoherent", 2)
	x := seg.Addr(0)
	e.Spawn("reader", func(p *sim.Proc) {
		if cpus[0].Load(p, x, 8) != 0 {
			t.Error("initial value")
		}
		p.Sleep(sim.Microsecond)
		if m.Load64(x) != 7 {
			t.Error("writer's store not in memory")
		}
		if v := cpus[0].Load(p, x, 8); v != 0 {
			t.Errorf("non-coherent cache returned fresh data %d", v)
		}
		if v := cpus[0].LoadUncached(p, x, 8); v != 7 {
			t.Errorf("uncached load got %d", v)
		}
		cpus[0].FlushCache(p)
		if v := cpus[0].Load(p, x, 8); v != 7 {
			t.Errorf("after flush got %d", v)
		}
	})
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(100 * sim.Nanosecond)
		cpus[1].Store(p, x, 8, 7)
		cpus[1].Fence(p)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestSpinWakesOnWriteWithFewEvents(t *testing.T) {
	e, _, cpus, seg := setup(t, "tso", 2)
	flag := seg.Addr(64)
	var seen sim.Time
	e.Spawn("spinner", func(p *sim.Proc) {
		cpus[0].SpinUntil(p, sim.Reason("flag"), func() bool { return cpus[0].Load(p, flag, 8) == 1 }, flag)
		seen = p.Now()
	})
	e.Spawn("setter", func(p *sim.Proc) {
		p.Sleep(sim.Millisecond)
		cpus[1].Store(p, flag, 8, 1)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if seen < sim.Millisecond || seen > sim.Millisecond+sim.Microsecond {
		t.Fatalf("spinner saw the flag at %v", seen)
	}
	if e.Events() > 20 {
		t.Fatalf("a 1 ms spin took %d events", e.Events())
	}
}

func TestSpinOnStaleLineIsLivelock(t *testing.T) {
	e, _, cpus, seg := setup(t, "noncoherent", 2)
	flag := seg.Addr(64)
	e.Spawn("reader", func(p *sim.Proc) {
		cpus[0].SpinUntil(p, sim.Reason("waiting for flag"), func() bool { return cpus[0].Load(p, flag, 8) == 1 }, flag)
	})
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		cpus[1].Store(p, flag, 8, 1)
		cpus[1].Fence(p)
	})
	err := e.Run()
	if !sim.IsLivelock(err) || !strings.Contains(err.Error(), "reader spinning since 0ps: waiting for flag (reads node0:0x40") || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("got %v", err)
	}
	// Reported when the stale poll happens, not at the end of the run: the
	// write is visible at 1.04 us (store, 4-cycle drain), the reader's poll
	// grid has a 100 ns period (its first poll missed) from 0, so it polls
	// again at 1.1 us and that 10 ns hit reads the stale copy.
	if want := sim.Microsecond + 110*sim.Nanosecond; e.Now() != want {
		t.Fatalf("livelock reported at %v, want at %v", e.Now(), want)
	}
}

// TestSpinKeepsItsPhase: a write between two polls is seen by the next
// poll on the spinner's grid (last poll start + k * poll cost), not at the
// write time; a check that costs no time sees it at the write time.
func TestSpinKeepsItsPhase(t *testing.T) {
	ns := sim.Nanosecond
	for _, tc := range []struct {
		name     string
		timed    bool // the check is an uncached load (100 ns) or free
		writeAt  sim.Time
		wantSeen sim.Time
	}{
		{"write on a poll instant", true, 1000 * ns, 1100 * ns},
		{"write just after a poll instant", true, 1001 * ns, 1200 * ns},
		{"write between polls", true, 1050 * ns, 1200 * ns},
		{"write just before a poll instant", true, 1099 * ns, 1200 * ns},
		{"free check: at the write", false, 1050 * ns, 1050 * ns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, m, cpus, seg := setup(t, "sc", 2)
			flag := seg.Addr(64)
			var seen sim.Time
			e.Spawn("spinner", func(p *sim.Proc) {
				cpus[0].SpinUntil(p, sim.Reason("flag"), func() bool {
					if tc.timed {
						return cpus[0].LoadUncached(p, flag, 8) == 1
					}
					return m.Load64(flag) == 1
				}, flag)
				seen = p.Now()
			})
			e.Spawn("setter", func(p *sim.Proc) {
				p.Sleep(tc.writeAt)
				m.Store64(flag, 1)
			})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if seen != tc.wantSeen {
				t.Fatalf("spinner saw the flag at %v, want %v", seen, tc.wantSeen)
			}
			if e.Events() > 8 {
				t.Fatalf("a 1 us spin took %d events", e.Events())
			}
		})
	}
}

// TestSpinUncachedIgnoresStaleCopy: a predicate reading its word uncached
// sees every write, whatever stale copy of the word the cache holds: no
// livelock.
func TestSpinUncachedIgnoresStaleCopy(t *testing.T) {
	e, m, cpus, seg := setup(t, "noncoherent", 2)
	flag := seg.Addr(64)
	var seen sim.Time
	e.Spawn("reader", func(p *sim.Proc) {
		cpus[0].Load(p, flag, 8) // caches 0
		p.Sleep(sim.Microsecond) // the word is 1 in memory now: the copy is stale
		cpus[0].SpinUntil(p, sim.Reason("waiting for flag=2"), func() bool {
			return cpus[0].LoadUncached(p, flag, 8) == 2
		}, flag)
		seen = p.Now()
	})
	e.Spawn("writer", func(p *sim.Proc) {
		m.Store64(flag, 1)
		p.Sleep(2050 * sim.Nanosecond)
		m.Store64(flag, 2)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	// Polls of 100 ns from 1.1 us: the write at 2.05 us is read by the poll
	// starting at 2.1 us.
	if want := 2200 * sim.Nanosecond; seen != want {
		t.Fatalf("reader saw flag=2 at %v, want %v", seen, want)
	}
}

// TestSpinStaleOnlyForCachedReads: of two watched words, the one the
// predicate reads uncached is fine and the one it reads through the cache is
// reported, by address.
func TestSpinStaleOnlyForCachedReads(t *testing.T) {
	e, m, cpus, seg := setup(t, "noncoherent", 2)
	a, b := seg.Addr(64), seg.Addr(256)
	e.Spawn("reader", func(p *sim.Proc) {
		cpus[0].Load(p, a, 8)
		cpus[0].Load(p, b, 8)
		p.Sleep(sim.Microsecond)
		cpus[0].SpinUntil(p, sim.Reason("waiting for a=2 and b=1"), func() bool {
			x := cpus[0].LoadUncached(p, a, 8)
			y := cpus[0].Load(p, b, 8)
			return x == 2 && y == 1
		}, a, b)
	})
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(500 * sim.Nanosecond) // after the reader cached both words
		m.Store64(a, 1)
		m.Store64(b, 1)
	})
	err := e.Run()
	if !sim.IsLivelock(err) || !strings.Contains(err.Error(), "(reads node0:0x100 through a non-coherent cache whose copy is stale)") {
		t.Fatalf("got %v", err)
	}
}

func TestAtomics(t *testing.T) {
	e, m, cpus, seg := setup(t, "pso", 2)
	lock, ctr := seg.Addr(0), seg.Addr(64)
	for i, c := range cpus {
		e.Spawn("p", func(p *sim.Proc) {
			for j := 0; j < 10; j++ {
				for c.TestAndSet(p, lock) != 0 {
					p.Sleep(sim.Time(10 + i))
				}
				v := c.Load(p, ctr, 8)
				p.Sleep(5)
				c.Store(p, ctr, 8, v+1)
				c.Fence(p)
				c.Swap(p, lock, 0)
			}
			c.FetchAdd(p, seg.Addr(128), 5)
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if m.Load64(ctr) != 20 || m.Load64(seg.Addr(128)) != 10 {
		t.Fatalf("counter %d, fetch-add %d", m.Load64(ctr), m.Load64(seg.Addr(128)))
	}
}

func TestCopies(t *testing.T) {
	e, m, cpus, seg := setup(t, "pso", 1)
	src, dst, dst2 := seg.Addr(0), seg.Addr(1024), seg.Addr(2048)
	for i := range 1000 {
		m.Bytes(src, 1000)[i] = byte(i * 7)
	}
	e.Spawn("p", func(p *sim.Proc) {
		t0 := p.Now()
		cpus[0].Memcpy(p, dst, src, 1000)
		if d := p.Now() - t0; d != sim.TransferTime(1000, 400e6) {
			t.Errorf("memcpy took %v", d)
		}
		cpus[0].Fence(p)
		cpus[0].VectorCopy(p, dst2, src, 1000)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if string(m.Bytes(dst, 1000)) != string(m.Bytes(src, 1000)) || string(m.Bytes(dst2, 1000)) != string(m.Bytes(src, 1000)) {
		t.Fatal("copy corrupted")
	}
}

func TestConfigValidate(t *testing.T) {
	cfg, _ := Builtin("tso")
	cfg.StoreBuffer.Order = "random"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "store_buffer.order") {
		t.Fatalf("got %v", err)
	}
	if _, err := Builtin("weird"); err == nil {
		t.Fatal("unknown model accepted")
	}
}

func BenchmarkLoadHit(b *testing.B) {
	cfg, _ := Builtin("tso")
	e := sim.NewEngine(1)
	m := NewMemory("n", 0)
	seg, _ := m.Alloc("s", 4096, 64)
	c, _ := NewCPU(e, "c", m, cfg)
	e.Spawn("p", func(p *sim.Proc) {
		for i := 0; i < b.N; i++ {
			c.Load(p, seg.Addr(8*(i&63)), 8)
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
}

func TestCacheFillAtEndOfMemory(t *testing.T) {
	cfg, _ := Builtin("noncoherent")
	e := sim.NewEngine(1)
	m := NewMemory("n", 0)
	seg, _ := m.Alloc("tiny", 8, 8) // smaller than a cache line
	c, _ := NewCPU(e, "c", m, cfg)
	m.Store64(seg.Addr(0), 5)
	e.Spawn("p", func(p *sim.Proc) {
		if v := c.Load(p, seg.Addr(0), 8); v != 5 {
			t.Errorf("got %d", v)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestPeekSeesWhatTheProgramSees(t *testing.T) {
	e, m, cpus, seg := setup(t, "noncoherent", 2)
	x := seg.Addr(0)
	e.Spawn("p", func(p *sim.Proc) {
		cpus[0].Load(p, x, 8) // caches the line
		m.Store64(x, 9)       // another agent writes memory
		var b [8]byte
		cpus[0].Peek(x, b[:])
		if b[0] != 0 {
			t.Error("Peek did not read the stale cached copy")
		}
		cpus[1].Peek(x, b[:])
		if b[0] != 9 {
			t.Error("Peek on an uncaching CPU did not read memory")
		}
		cpus[0].Poke(x, []byte{7})
		if cpus[0].Load(p, x, 1) != 7 || m.Bytes(x, 1)[0] != 7 {
			t.Error("Poke did not update memory and the own cache")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestMemcpyFillsTheCache: memcpy reads its source through the cache as
// the program's loads would, filling the lines it misses; a later write to
// the source by another agent (a remote put) leaves those lines stale, and
// a second memcpy copies the stale bytes until the lines are invalidated.
func TestMemcpyFillsTheCache(t *testing.T) {
	const n = 200 // several lines, the last one partial
	for _, tc := range []struct {
		name   string
		remedy func(c *CPU, p *sim.Proc, a Addr)
		fresh  bool
	}{
		{"no invalidation", func(*CPU, *sim.Proc, Addr) {}, false},
		{"InvalidateLine", func(c *CPU, p *sim.Proc, a Addr) {
			for l := a &^ 31; l < a+n; l += 32 {
				c.InvalidateLine(p, l)
			}
		}, true},
		{"FlushCache", func(c *CPU, p *sim.Proc, _ Addr) { c.FlushCache(p) }, true},
	} {
		e, m, cpus, seg := setup(t, "noncoherent", 1)
		c, src, dst := cpus[0], seg.Addr(8), seg.Addr(2048)
		old, new := make([]byte, n), make([]byte, n)
		for i := range old {
			old[i], new[i] = byte(i), byte(255-i)
		}
		m.Write(src, old)
		e.Spawn("p", func(p *sim.Proc) {
			c.Memcpy(p, dst, src, n)
			if s := c.Stats(); s.Hits != 0 || s.Misses != 0 {
				t.Errorf("%s: memcpy counted as loads: %+v", tc.name, s)
			}
			m.Write(src, new) // a remote put: the cache is not updated
			tc.remedy(c, p, src)
			c.Memcpy(p, dst, src, n)
			c.Fence(p)
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want := old
		if tc.fresh {
			want = new
		}
		if got := m.Bytes(dst, n); string(got) != string(want) {
			t.Errorf("%s: second memcpy copied %v..., want %v...", tc.name, got[:4], want[:4])
		}
	}
}

// BenchmarkMemcpyCached: a large copy through the cache, one lookup or
// fill per line, no allocation in steady state.
func BenchmarkMemcpyCached(b *testing.B) {
	cfg, _ := Builtin("noncoherent")
	e := sim.NewEngine(1)
	m := NewMemory("n", 0)
	src, _ := m.Alloc("src", 1<<20, 64)
	dst, _ := m.Alloc("dst", 1<<20, 64)
	c, _ := NewCPU(e, "c", m, cfg)
	e.Spawn("p", func(p *sim.Proc) {
		for i := 0; i < b.N; i++ {
			c.Memcpy(p, dst.Addr(0), src.Addr(0), 1<<20)
			c.Fence(p)
		}
	})
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	b.ResetTimer()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
}

func TestInvalidateRangeLinesOrFlush(t *testing.T) {
	e, m, cpus, seg := setup(t, "noncoherent", 1)
	c := cpus[0]
	e.Spawn("p", func(p *sim.Proc) {
		for off := 0; off < 4096; off += 64 {
			c.Load(p, seg.Addr(off), 8) // cache the whole segment
		}
		for off := 0; off < 4096; off += 8 {
			m.Store64(seg.Addr(off), 1) // another agent writes it
		}
		before := c.Stats()
		c.InvalidateRange(p, seg.Addr(8), 100) // lines 0 and 1: cheaper than a flush
		if got := c.Stats().Flushes - before.Flushes; got != 0 {
			t.Errorf("%d flushes for two lines", got)
		}
		if c.Load(p, seg.Addr(64), 8) != 1 || c.Load(p, seg.Addr(128), 8) != 0 {
			t.Error("the range's lines were not dropped, or others were")
		}
		c.InvalidateRange(p, seg.Addr(0), 4096) // 64 lines cost more than a flush
		if got := c.Stats().Flushes - before.Flushes; got != 1 {
			t.Errorf("%d flushes for the whole segment, want 1", got)
		}
		if c.Load(p, seg.Addr(4000), 8) != 1 {
			t.Error("flush left a stale line")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestHandlerPreemptsCPUOperations: on a preempting sim.Core, a handler's
// memory operations are handler work and delay the application's memcpy by
// their cost.
func TestHandlerPreemptsCPUOperations(t *testing.T) {
	e, _, cpus, seg := setup(t, "pso", 1)
	core := e.NewCore("node0", true)
	var copied, loaded sim.Time
	app := e.Spawn("app", func(p *sim.Proc) {
		cpus[0].Memcpy(p, seg.Addr(1024), seg.Addr(0), 1000) // 2.5 us at 400 MB/s
		copied = p.Now()
	})
	core.BindApp(app)
	h := e.SpawnDaemon("handler", func(p *sim.Proc) {
		p.Block("interrupt")
		cpus[0].LoadUncached(p, seg.Addr(2048), 8) // 10 cycles: 100 ns
		loaded = p.Now()
	})
	core.BindHandler(h)
	e.At(sim.Microsecond, func() { h.Wake() })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := 1100 * sim.Nanosecond; loaded != want {
		t.Errorf("handler's load done at %v, want %v", loaded, want)
	}
	if want := 2600 * sim.Nanosecond; copied != want {
		t.Errorf("memcpy done at %v, want %v (2.5 us + the handler's 100 ns)", copied, want)
	}
}

// TestDrainJitter: with store_buffer.drain_jitter_cycles a store becomes
// visible after drain_cycles plus a random [0, jitter) that varies with the
// seed; without it, after exactly drain_cycles on every seed.
func TestDrainJitter(t *testing.T) {
	visibleAt := func(jitter float64, seed uint64) sim.Time {
		cfg, _ := Builtin("tso")
		cfg.StoreBuffer.DrainJitterCycles = jitter
		e := sim.NewEngine(seed)
		m := NewMemory("m", 1<<12)
		seg, _ := m.Alloc("s", 64, 64)
		c, err := NewCPU(e, "c", m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var at sim.Time
		e.Spawn("w", func(p *sim.Proc) { c.Store(p, seg.Addr(0), 8, 1) })
		e.Spawn("r", func(p *sim.Proc) {
			for m.Load64(seg.Addr(0)) == 0 {
				p.Sleep(cfg.Clock().Cycles(0.5))
			}
			at = p.Now()
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return at
	}
	clock := sim.ClockMHz(100)
	drain := clock.Cycles(4)
	seen := map[sim.Time]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		if got := visibleAt(0, seed); got != drain {
			t.Fatalf("no jitter, seed %d: visible at %v, want %v", seed, got, drain)
		}
		got := visibleAt(8, seed)
		if got < drain || got > drain+clock.Cycles(8.5) {
			t.Fatalf("jitter 8, seed %d: visible at %v, want in [%v, %v)", seed, got, drain, drain+clock.Cycles(8))
		}
		seen[got] = true
	}
	if len(seen) < 3 {
		t.Fatalf("drain jitter gave %d distinct times over 20 seeds", len(seen))
	}
}

// TestNoZeroWidthDraw: a reordered store buffer whose stores leave no
// choice (one line: one eligible store at each drain) and a drain jitter
// of one picosecond (range [0, 1 ps): only 0) draw no random number, so a run can say its
// results do not depend on the seed; stores to two lines do draw.
func TestNoZeroWidthDraw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second int // offset of the second store
		jitter float64
		drawn  bool
	}{
		{"one line", 56, 0, false},
		{"one line, a one-picosecond jitter (only 0 in range)", 56, 1e-4, false},
		{"two lines", 128, 0, true},
	} {
		cfg, _ := Builtin("pso")
		cfg.StoreBuffer.DrainJitterCycles = tc.jitter
		e := sim.NewEngine(1)
		var drew atomic.Bool
		e.Set(sim.WithRandUse(&drew))
		m := NewMemory("n", 0)
		seg, _ := m.Alloc("s", 256, 64)
		c, err := NewCPU(e, "c", m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.Spawn("w", func(p *sim.Proc) {
			for i := range 6 { // back to back: the buffer holds several at once
				c.Store(p, seg.Addr(8*i), 8, uint64(i))
			}
			c.Store(p, seg.Addr(tc.second), 8, 9)
			c.Store(p, seg.Addr(48), 8, 9)
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if drew.Load() != tc.drawn {
			t.Errorf("%s: drew a random number: %v, want %v", tc.name, drew.Load(), tc.drawn)
		}
	}
}

// TestLargePeekMatchesLineByLine: a Peek of more lines than the cache
// holds (read at once, the cached lines laid over it) sees the same bytes
// and leaves the cache (tags, LRU stamps) as the same Peek done line by
// line, on a two-way non-coherent cache with stale lines.
func TestLargePeekMatchesLineByLine(t *testing.T) {
	cfg, err := Builtin("noncoherent")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cache.Ways = 2
	cfg.Cache.SizeBytes = 16 * cfg.Cache.LineBytes
	e, m, seg, a, b := twinCPUs(cfg)
	lb := cfg.Cache.LineBytes
	e.Spawn("p", func(p *sim.Proc) {
		staleLines(p, m, seg, lb, []int{3, 40, 7, 41, 12, 60, 5}, a, b)
		off, n := lb/2+3, seg.Size-lb-5
		whole := make([]byte, n)
		a.Peek(seg.Addr(off), whole)
		lines := make([]byte, n)
		for o := 0; o < n; { // line by line (each piece at most one line)
			k := min(n-o, lb-(off+o)%lb)
			b.Peek(seg.Addr(off+o), lines[o:o+k])
			o += k
		}
		if !bytes.Equal(whole, lines) {
			t.Error("a large Peek differs from the same Peek line by line")
		}
		ca, cb := a.cache, b.cache
		if !slices.Equal(ca.tags, cb.tags) || !slices.Equal(ca.used, cb.used) || ca.clock != cb.clock {
			t.Errorf("cache state differs: tags %v/%v used %v/%v clock %d/%d", ca.tags, cb.tags, ca.used, cb.used, ca.clock, cb.clock)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestLargeFillMatchesLineByLine: a look that fills the cache (Memcpy's
// source) over many lines, done at once (viewFill), sees the same bytes
// and leaves the cache (tags, LRU stamps, slot bytes) as the same look line
// by line, with stale lines, on direct-mapped and two-way caches, coherent
// or not, for ranges shorter and longer than the cache.
func TestLargeFillMatchesLineByLine(t *testing.T) {
	for _, tc := range []struct {
		ways     int
		coherent bool
		lines    int // of the look
		cache    int // lines in the cache (0: 16)
	}{{1, false, 10, 0}, {2, false, 10, 0}, {2, false, 50, 0}, {1, false, 50, 0}, {2, true, 50, 0}, {1, true, 7, 0},
		// Looks of many rounds of the cache: lines skipped in bulk.
		{1, false, 60, 4}, {2, false, 60, 4}, {4, false, 61, 8}, {2, false, 33, 8}, {1, false, 35, 8}, {2, true, 60, 4}, {1, false, 62, 2},
		// Direct-mapped (fillDirect): looks shorter than, as long as and
		// just longer than the cache, coherent ones keeping their hits.
		{1, true, 10, 0}, {1, true, 30, 16}, {1, false, 16, 16}, {1, false, 17, 16}, {1, false, 31, 16}, {1, true, 16, 16}} {
		cfg, err := Builtin("noncoherent")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Cache.Ways, cfg.Cache.Coherent = tc.ways, tc.coherent
		cfg.Cache.SizeBytes = 16 * cfg.Cache.LineBytes
		if tc.cache > 0 {
			cfg.Cache.SizeBytes = tc.cache * cfg.Cache.LineBytes
		}
		e, m, seg, a, b := twinCPUs(cfg)
		lb := cfg.Cache.LineBytes
		e.Spawn("p", func(p *sim.Proc) {
			staleLines(p, m, seg, lb, []int{3, 40, 7, 41, 12, 60, 5, 19, 35}, a, b)
			off := lb/2 + 3
			n := tc.lines*lb - 5
			whole := make([]byte, n)
			a.view(seg.Addr(off), whole, true)
			lines := make([]byte, n)
			for o := 0; o < n; { // line by line (each piece at most one line)
				k := min(n-o, lb-(off+o)%lb)
				b.view(seg.Addr(off+o), lines[o:o+k], true)
				o += k
			}
			if !bytes.Equal(whole, lines) {
				t.Errorf("%+v: a large filling look differs from the same look line by line", tc)
			}
			ca, cb := a.cache, b.cache
			if !slices.Equal(ca.tags, cb.tags) || !slices.Equal(ca.used, cb.used) || ca.clock != cb.clock || !bytes.Equal(ca.bytes(), cb.bytes()) {
				t.Errorf("%+v: cache state differs: tags %v/%v used %v/%v clock %d/%d", tc, ca.tags, cb.tags, ca.used, cb.used, ca.clock, cb.clock)
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
	}
}

// twinCPUs is an engine, a memory with a 64-line segment and two CPUs of
// configuration cfg on it.
func twinCPUs(cfg Config) (*sim.Engine, *Memory, Segment, *CPU, *CPU) {
	e := sim.NewEngine(1)
	m := NewMemory("node0", 1<<20)
	seg, _ := m.Alloc("buf", 64*cfg.Cache.LineBytes, 64)
	a, _ := NewCPU(e, "a", m, cfg)
	b, _ := NewCPU(e, "b", m, cfg)
	return e, m, seg, a, b
}

// staleLines caches lines of seg in every CPU alike (lb-byte lines), then
// writes every word of seg in memory, so that those copies are stale.
func staleLines(p *sim.Proc, m *Memory, seg Segment, lb int, lines []int, cpus ...*CPU) {
	for _, i := range lines {
		for _, c := range cpus {
			c.Load(p, seg.Addr(i*lb), 8)
		}
	}
	for i := 0; i < seg.Size; i += 8 {
		m.Store64(seg.Addr(i), uint64(i)+1)
	}
}

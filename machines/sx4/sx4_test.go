package sx4

import (
	"math"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

func newNode(t *testing.T, procs int) (*sim.Engine, *Machine) {
	t.Helper()
	e := sim.NewEngine(1)
	m, err := New(e, procs, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return e, m
}

// copytest (section 8): memcpy of large moves runs at about 2.5 GB/s.
func TestMemcpyBandwidth(t *testing.T) {
	e, m := newNode(t, 1)
	const n = 4 << 20
	src, _ := m.Private(0, "src", n)
	dst, _ := m.Private(0, "dst", n)
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(i * 7)
	}
	var took sim.Time
	e.Spawn("copytest", func(p *sim.Proc) {
		t0 := p.Now()
		m.Memcpy(p, 0, dst.Addr, src.Addr, n)
		took = p.Now() - t0
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	gbps := float64(n) / took.Seconds() / 1e9
	if math.Abs(gbps-2.5)/2.5 > 0.05 {
		t.Fatalf("memcpy %.3f GB/s, want 2.5", gbps)
	}
	if string(dst.Bytes()) != string(src.Bytes()) {
		t.Fatal("memcpy did not copy the bytes")
	}
}

func TestShmSegmentLimit(t *testing.T) {
	_, m := newNode(t, 2)
	for _, tc := range []struct {
		size int
		ok   bool
	}{{4 << 20, true}, {8 << 20, true}, {8<<20 + 1, false}} {
		_, err := m.ShmGet("seg", tc.size)
		if (err == nil) != tc.ok {
			t.Errorf("shmget %d bytes: err %v, want ok=%v", tc.size, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "shm_max_segment_mb") {
			t.Errorf("error does not name the parameter: %v", err)
		}
	}
}

func TestNewRejectsBadParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Params)
		want string
	}{
		{"clock", func(p *Params) { p.ClockMHz = 0 }, "clock_mhz"},
		{"semop", func(p *Params) { p.SemopUs = -1 }, "semop_us"},
		{"line", func(p *Params) { p.CacheLineBytes = 100 }, "line_bytes"},
	} {
		p := DefaultParams()
		tc.mod(&p)
		if _, err := New(sim.NewEngine(1), 2, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
	if _, err := New(sim.NewEngine(1), 33, DefaultParams()); err == nil {
		t.Error("33 processes accepted on a 32-CPU node")
	}
}

// A semop costs semop_us; a P on a zero semaphore waits for the V.
func TestSemop(t *testing.T) {
	e, m := newNode(t, 2)
	id := m.Semget("lock", 0)
	var got sim.Time
	e.Spawn("waiter", func(p *sim.Proc) {
		m.Semop(p, 0, id, -1)
		got = p.Now()
	})
	e.Spawn("poster", func(p *sim.Proc) {
		m.Semop(p, 1, id, +1)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	semop := sim.Micro(DefaultParams().SemopUs)
	// Both calls run concurrently: the P waits in the kernel for the V.
	if got < semop || got > semop+sim.Microsecond {
		t.Fatalf("P returned at %v, want just after one semop (%v)", got, semop)
	}
}

// The ready bit read from memory (an uncached load, PKT_READY_IS_SET) sees
// another process's fenced store (PKT_READY_SET: fence, store, fence); read
// through the non-coherent cache it stays stale: a livelock.
func TestReadyBitCoherence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		uncached bool
	}{{"PKT_READY_IS_SET", true}, {"cached load", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e, m := newNode(t, 2)
			seg, _ := m.ShmGet("slots", 4096)
			ready := seg.Addr(0)
			e.Spawn("receiver", func(p *sim.Proc) {
				c := m.CPU(0)
				c.SpinUntil(p, sim.Reason("ready bit"), func() bool {
					if tc.uncached {
						return c.LoadUncached(p, ready, 8) != 0
					}
					return c.Load(p, ready, 8) != 0
				}, ready)
			})
			e.Spawn("sender", func(p *sim.Proc) {
				p.Sleep(sim.Microsecond)
				c := m.CPU(1)
				c.Fence(p)
				c.Store(p, ready, 8, 1)
				c.Fence(p)
			})
			err := e.Run()
			if tc.uncached && err != nil {
				t.Fatal(err)
			}
			if !tc.uncached && !sim.IsLivelock(err) {
				t.Fatalf("got %v, want a livelock", err)
			}
		})
	}
}

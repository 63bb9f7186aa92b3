package t3d

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

func newMachine(t *testing.T, pes int) (*sim.Engine, *Machine) {
	t.Helper()
	eng := sim.NewEngine(1)
	m, err := New(eng, pes, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return eng, m
}

func alloc(t *testing.T, m *Machine, pe, n int) mem.Region {
	t.Helper()
	r, err := m.Alloc(pe, "buf", n)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestShapes(t *testing.T) {
	for _, tc := range []struct {
		pes  int
		dims [3]int
	}{{2, [3]int{1, 1, 1}}, {8, [3]int{2, 2, 1}}, {32, [3]int{4, 2, 2}}, {128, [3]int{4, 4, 4}}, {2048, [3]int{16, 8, 8}}} {
		_, m := newMachine(t, tc.pes)
		if got := m.Torus().Dims(); got != tc.dims {
			t.Errorf("%d PEs: torus %v, want %v", tc.pes, got, tc.dims)
		}
	}
	if _, err := New(sim.NewEngine(1), 4096, DefaultParams()); err == nil {
		t.Error("4096 PEs: no error")
	}
}

// putTime is the time for PE 0 to put n bytes to PE dst and quiet.
func putTime(t *testing.T, pes, dst, n int) sim.Time {
	eng, m := newMachine(t, pes)
	src, dstBuf := alloc(t, m, 0, n), alloc(t, m, dst, n)
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(i*7 + 1)
	}
	var done sim.Time
	eng.Spawn("pe0", func(p *sim.Proc) {
		m.Put(p, 0, dst, dstBuf.Addr, src.Addr, n)
		m.Quiet(p, 0)
		done = p.Now()
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if string(dstBuf.Bytes()) != string(src.Bytes()) {
		t.Fatalf("put of %d bytes to PE %d: data differs", n, dst)
	}
	return done
}

func TestPutLatencyAndBandwidth(t *testing.T) {
	near, far := putTime(t, 128, 1, 8), putTime(t, 128, 127, 8)
	if far <= near {
		t.Errorf("put to a far PE (%v) not slower than to a neighbour (%v)", far, near)
	}
	big := putTime(t, 2, 1, 1<<20)
	mbps := float64(1<<20) / big.Seconds() / 1e6
	if mbps < 100 || mbps > 130 {
		t.Errorf("1 MB put: %.1f MB/s, want about put_mbps (125)", mbps)
	}
}

// TestContention: two PEs putting to the same PE take longer than one.
func TestContention(t *testing.T) {
	run := func(senders int) sim.Time {
		eng, m := newMachine(t, 8)
		const n = 1 << 18
		dst := alloc(t, m, 7, n*senders)
		var last sim.Time
		for s := 0; s < senders; s++ {
			src := alloc(t, m, s, n)
			eng.Spawn("sender", func(p *sim.Proc) {
				m.Put(p, s, 7, dst.Addr+mem.Addr(s*n), src.Addr, n)
				m.Quiet(p, s)
				last = max(last, p.Now())
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		return last
	}
	one, two := run(1), run(2)
	if two < one*19/10 {
		t.Errorf("two flows into one PE finished at %v, one at %v: want about twice", two, one)
	}
}

func TestFetchIncAtomic(t *testing.T) {
	eng, m := newMachine(t, 16)
	seen := map[uint64]int{}
	for pe := 0; pe < 16; pe++ {
		eng.Spawn("pe", func(p *sim.Proc) {
			for range 10 {
				seen[m.FetchInc(p, pe, 3)]++
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	for v := uint64(0); v < 160; v++ {
		if seen[v] != 1 {
			t.Fatalf("value %d returned %d times", v, seen[v])
		}
	}
}

// TestRemoteWriteLeavesCacheStale: a PE spinning with cached loads on a
// flag a remote put sets never sees it (livelock); uncached loads see it.
func TestRemoteWriteLeavesCacheStale(t *testing.T) {
	for _, uncached := range []bool{false, true} {
		eng, m := newMachine(t, 2)
		flag := alloc(t, m, 1, 8)
		cpu := m.CPU(1)
		eng.Spawn("spinner", func(p *sim.Proc) {
			cpu.Load(p, flag.Addr, 8) // the line is now cached
			cpu.SpinUntil(p, sim.Reason("flag"), func() bool {
				if uncached {
					return cpu.LoadUncached(p, flag.Addr, 8) == 1
				}
				return cpu.Load(p, flag.Addr, 8) == 1
			}, flag.Addr)
		})
		eng.Spawn("writer", func(p *sim.Proc) {
			p.Sleep(sim.Micro(1))
			m.PutWord(p, 0, 1, flag.Addr, 1)
		})
		err := eng.Run()
		if uncached && err != nil {
			t.Errorf("uncached spin: %v", err)
		}
		if !uncached && !sim.IsLivelock(err) {
			t.Errorf("cached spin on a remotely written flag: err %v, want livelock", err)
		}
	}
}

func TestGetSlowerThanPut(t *testing.T) {
	eng, m := newMachine(t, 2)
	const n = 1 << 16
	a, b := alloc(t, m, 0, n), alloc(t, m, 1, n)
	b.Bytes()[100] = 42
	var tGet sim.Time
	eng.Spawn("pe0", func(p *sim.Proc) {
		m.Get(p, 0, 1, a.Addr, b.Addr, n)
		tGet = p.Now()
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if a.Bytes()[100] != 42 {
		t.Error("get did not copy the data")
	}
	if tPut := putTime(t, 2, 1, n); tGet <= tPut {
		t.Errorf("get %v not slower than put %v", tGet, tPut)
	}
}

func TestBadParams(t *testing.T) {
	p := DefaultParams()
	p.PutMBps = 0
	if _, err := New(sim.NewEngine(1), 2, p); err == nil {
		t.Error("put_mbps 0 accepted")
	}
}

// TestGetReadsAtRequestArrival: a get reads its source when the request
// reaches the remote PE: a write there before that is seen, a write while
// the reply is in flight is not.
func TestGetReadsAtRequestArrival(t *testing.T) {
	const n = 1 << 12
	for _, tc := range []struct {
		name    string
		writeAt sim.Time
		seen    bool
	}{
		{"before the request arrives", sim.Nano(1), true},
		{"while the reply is in flight", sim.Micro(50), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng, m := newMachine(t, 2)
			dst, src := alloc(t, m, 0, n), alloc(t, m, 1, n)
			var done sim.Time
			eng.Spawn("pe0", func(p *sim.Proc) {
				m.Get(p, 0, 1, dst.Addr, src.Addr, n)
				done = p.Now()
			})
			eng.Spawn("pe1", func(p *sim.Proc) {
				p.Sleep(tc.writeAt)
				m.Memory(1).Write(src.Addr, []byte{7})
			})
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			if done <= tc.writeAt {
				t.Fatalf("get done at %v, before the write at %v: the test does not test", done, tc.writeAt)
			}
			if got := dst.Bytes()[0] == 7; got != tc.seen {
				t.Errorf("write at %v seen by the get: %v, want %v", tc.writeAt, got, tc.seen)
			}
		})
	}
}

// TestZeroAndNegativeLengths: a put or get of 0 bytes costs the start-up
// and sends nothing; a negative length panics with a clear message (a bug
// in the calling stack, not user input).
func TestZeroAndNegativeLengths(t *testing.T) {
	for _, op := range []string{"put", "get"} {
		eng, m := newMachine(t, 2)
		a, b := alloc(t, m, 0, 64), alloc(t, m, 1, 64)
		var took sim.Time
		eng.Spawn("pe0", func(p *sim.Proc) {
			if op == "put" {
				m.Put(p, 0, 1, b.Addr, a.Addr, 0)
			} else {
				m.Get(p, 0, 1, a.Addr, b.Addr, 0)
			}
			m.Quiet(p, 0)
			took = p.Now()
		})
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		if want := sim.Nano(DefaultParams().PutStartupNs); took != want {
			t.Errorf("%s of 0 bytes took %v, want the start-up %v", op, took, want)
		}
		if m.Received(1) != 0 || m.Torus().Nodes() != 1 || m.pes[0].inject[classRequest] != nil {
			t.Errorf("%s of 0 bytes sent something", op)
		}
	}
	for _, op := range []string{"put", "get"} {
		func() {
			_, m := newMachine(t, 2)
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, "negative length") {
					t.Errorf("%s of -1 bytes: recovered %v, want a panic about the negative length", op, r)
				}
			}()
			if op == "put" {
				m.Put(nil, 0, 1, 0, 0, -1)
			} else {
				m.Get(nil, 0, 1, 0, 0, -1)
			}
		}()
	}
}

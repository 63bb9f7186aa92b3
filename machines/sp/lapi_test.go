package sp

import (
	"bytes"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// chunkedGets runs node 0 getting k chunks of chunk bytes (stride apart)
// from node 1 with nonblocking LAPI_Gets and one wait, and returns the
// time of the whole and the arrival time of each chunk's data.
func chunkedGets(t *testing.T, par Params, k, chunk, stride int) (sim.Time, []sim.Time) {
	t.Helper()
	e := sim.NewEngine(1)
	m, err := New(e, 4, par)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := m.Alloc(1, "src", k*stride)
	dst, _ := m.Alloc(0, "dst", k*chunk)
	for i := range src.Bytes() {
		src.Bytes()[i] = byte(i*7 + 3)
	}
	var total sim.Time
	var at []sim.Time
	e.Spawn("node0", func(p *sim.Proc) {
		org := m.NewCounter(0)
		for i := 0; i < k; i++ {
			m.GetCounted(p, 0, 1, dst.Addr+mem.Addr(i*chunk), src.Addr+mem.Addr(i*stride), chunk, nil, org)
		}
		for i := 1; i <= k; i++ {
			m.Waitcntr(p, 0, org, 1)
			at = append(at, p.Now())
		}
		total = p.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < k; i++ {
		if !bytes.Equal(dst.Bytes()[i*chunk:(i+1)*chunk], src.Bytes()[i*stride:i*stride+chunk]) {
			t.Fatalf("chunk %d differs", i)
		}
	}
	return total, at
}

// TestGetCalibration: the first LAPI_Get to a sleeping node takes 90 us,
// each following pipelined one 30 us, and the 2x100 section of a 10x300
// double array (100 gets of 16 bytes) moves at 0.5 MB/s (armci-sp.txt
// section 1; calibration.yaml sp_armci), within 10%.
func TestGetCalibration(t *testing.T) {
	one, _ := chunkedGets(t, DefaultParams(), 1, 16, 80)
	total, _ := chunkedGets(t, DefaultParams(), 100, 16, 80)
	// The slope: what each get after the first adds.
	next := (total - one).Micros() / 99
	rate := 1600 / total.Micros()
	t.Logf("first get %v, next %.1f us each, 2x100 section %v = %.3f MB/s", one, next, total, rate)
	within(t, "first LAPI_Get (us)", one.Micros(), 90)
	within(t, "pipelined LAPI_Get (us)", next, 30)
	within(t, "2x100 chunked (MB/s)", rate, 0.5)
}

func within(t *testing.T, what string, got, want float64) {
	t.Helper()
	if got < want*0.9 || got > want*1.1 {
		t.Errorf("%s = %.3f, want %.3f within 10%%", what, got, want)
	}
}

// TestContiguousRate: the same bytes as the 2x100 section, contiguous, move
// at the adapter's 30 MB/s (armci-sp.txt section 1: "For the same amount of
// contiguous data, the rate is 30MB/s"; calibration.yaml
// sp_armci.contiguous_same_bytes_MBps), measured as the rate of a stream
// of 1600-byte gets (adapter_mbps is calibrated to it).
func TestContiguousRate(t *testing.T) {
	one, _ := chunkedGets(t, DefaultParams(), 1, 1600, 1600)
	total, _ := chunkedGets(t, DefaultParams(), 50, 1600, 1600)
	rate := 1600 * 49 / (total - one).Micros()
	t.Logf("one 1600-byte get %v (%.1f MB/s); a stream of them %.1f MB/s", one, 1600/one.Micros(), rate)
	within(t, "contiguous 1600-byte gets (MB/s)", rate, 30)
}

// TestInterruptVersusPolling: a get to a node whose program computes.
// In interrupt mode the request is served at once, at the cost of an
// interrupt that the computing program pays (its computation ends later);
// in polling mode the request waits for the program's next LAPI_Probe and
// costs no interrupt ("polling can be helpful (can avoid the cost of
// interrupt processing)", armci-sp.txt 2.3).
func TestInterruptVersusPolling(t *testing.T) {
	run := func(mode string) (get, compute sim.Time, interrupts uint64) {
		e := sim.NewEngine(1)
		par := DefaultParams()
		par.Progress = mode
		m, err := New(e, 2, par)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := m.Alloc(1, "src", 8)
		dst, _ := m.Alloc(0, "dst", 8)
		e.Spawn("node1", func(p *sim.Proc) {
			m.Probe(p, 1) // binds the program to the node
			for i := 0; i < 20; i++ {
				m.CPU(1).Compute(p, 120*50) // 50 us of work between probes
				m.Probe(p, 1)
			}
			compute = p.Now()
		})
		e.Spawn("node0", func(p *sim.Proc) {
			p.Sleep(sim.Micro(10))
			org := m.NewCounter(0)
			m.GetCounted(p, 0, 1, dst.Addr, src.Addr, 8, nil, org)
			m.Waitcntr(p, 0, org, 1)
			get = p.Now() - sim.Micro(10)
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return get, compute, m.Endpoint(1).Stats().Interrupts
	}
	gi, ci, ni := run("interrupt")
	gp, cp, np := run("polling")
	t.Logf("interrupt: get %v, program done at %v, %d interrupts; polling: get %v, program done at %v, %d interrupts", gi, ci, ni, gp, cp, np)
	if ni != 1 || np != 0 {
		t.Errorf("interrupts %d (interrupt mode), %d (polling), want 1 and 0", ni, np)
	}
	// In polling mode the get waits for the program's next probe (the
	// probes are 50 us apart); in interrupt mode it does not.
	if gi > sim.Micro(99) || gp < sim.Micro(50) {
		t.Errorf("get took %v (interrupt) and %v (polling)", gi, gp)
	}
	if ci-cp < sim.Micro(DefaultParams().InterruptUs) {
		t.Errorf("interrupt mode delays the program by %v, want at least the interrupt's %v us", ci-cp, DefaultParams().InterruptUs)
	}
}

// TestPutOrder: two LAPI_Puts from one node to another land in issue order
// on a quiet switch (switch_jitter_us 0), and in either order under switch
// jitter (LAPI does not order messages); a wait on the first put's
// completion counter between them (what LAPI_Fence does) restores the
// order.
func TestPutOrder(t *testing.T) {
	run := func(jitter float64, fence bool, seed uint64) (firstLanded int) {
		par := DefaultParams()
		par.SwitchJitterUs = jitter
		e := sim.NewEngine(seed)
		m, err := New(e, 2, par)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := m.Alloc(0, "src", 16)
		dst, _ := m.Alloc(1, "dst", 16)
		src.Mem.Store64(src.Addr, 1)
		src.Mem.Store64(src.Addr+8, 1)
		firstLanded = -1
		e.Spawn("node0", func(p *sim.Proc) {
			cmpl := m.NewCounter(0)
			m.PutCounted(p, 0, 1, dst.Addr, src.Addr, 8, nil, nil, cmpl)
			if fence {
				m.Waitcntr(p, 0, cmpl, 1)
			}
			m.PutCounted(p, 0, 1, dst.Addr+8, src.Addr+8, 8, nil, nil, cmpl)
		})
		e.Spawn("watch", func(p *sim.Proc) {
			for firstLanded < 0 {
				p.Sleep(sim.Micro(0.1))
				a, b := dst.Mem.Load64(dst.Addr), dst.Mem.Load64(dst.Addr+8)
				switch {
				case a == 1:
					firstLanded = 0
				case b == 1:
					firstLanded = 1
				}
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return firstLanded
	}
	count := func(jitter float64, fence bool) (overtaken int) {
		for seed := uint64(1); seed <= 50; seed++ {
			if run(jitter, fence, seed) == 1 {
				overtaken++
			}
		}
		return overtaken
	}
	if n := count(0, false); n != 0 {
		t.Errorf("quiet switch: the second put landed first in %d of 50 runs", n)
	}
	if n := count(40, false); n == 0 || n == 50 {
		t.Errorf("switch_jitter_us 40: the second put landed first in %d of 50 runs, want some", n)
	}
	if n := count(40, true); n != 0 {
		t.Errorf("with a wait on the completion counter: the second put landed first in %d of 50 runs", n)
	}
}

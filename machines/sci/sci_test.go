package sci

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

func build(t *testing.T, seed uint64, procs int, p Params) (*sim.Engine, *Machine) {
	t.Helper()
	eng := sim.NewEngine(seed)
	m, err := New(eng, procs, p)
	if err != nil {
		t.Fatal(err)
	}
	return eng, m
}

func run(t *testing.T, eng *sim.Engine) {
	t.Helper()
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteReadSlowerThanLocal: a remote read is a round trip through
// both adapters, "an order of magnitude slower than local loads" (1.3.1);
// a remote write is posted and costs the writer only its PCI time.
func TestRemoteReadSlowerThanLocal(t *testing.T) {
	eng, m := build(t, 1, 2, DefaultParams())
	seg, _ := m.AllocSCI(nil, 1, "x", 64)
	seg.Mem.Store64(seg.Addr, 42)
	var local, read, write sim.Time
	eng.Spawn("p0", func(p *sim.Proc) {
		t0 := p.Now()
		m.CPU(0).LoadUncached(p, 0, 8)
		local = p.Now() - t0
		t0 = p.Now()
		b := m.Read(p, 0, 1, seg.Addr, 8)
		read = p.Now() - t0
		if b[0] != 42 {
			t.Errorf("read %v", b)
		}
		t0 = p.Now()
		m.WriteWord(p, 0, 1, seg.Addr, 7)
		write = p.Now() - t0
	})
	m.Alloc(0, "pad", 8)
	run(t, eng)
	if read < 10*local || write*4 > read {
		t.Errorf("local load %v, remote read %v, posted write %v", local, read, write)
	}
	if got := seg.Mem.Load64(seg.Addr); got != 7 {
		t.Errorf("the posted write did not land: %d", got)
	}
}

// TestFetchIncThroughAdapter: fetch-and-increment-by-one is atomic under
// concurrent callers and goes through the adapter even for a word of the
// caller's own node (a round trip).
func TestFetchIncThroughAdapter(t *testing.T) {
	p := DefaultParams()
	p.ProcsPerNode = 2
	eng, m := build(t, 1, 4, p)
	seg, _ := m.AllocSCI(nil, 0, "lock", 8)
	var own sim.Time
	seen := map[uint64]bool{}
	for i := 0; i < 4; i++ {
		eng.Spawn("p", func(pr *sim.Proc) {
			for k := 0; k < 5; k++ {
				t0 := pr.Now()
				v := m.FetchInc(pr, i, 0, seg.Addr)
				if i == 0 && k == 0 {
					own = pr.Now() - t0
				}
				if seen[v] {
					t.Errorf("value %d fetched twice", v)
				}
				seen[v] = true
			}
		})
	}
	run(t, eng)
	if len(seen) != 20 || seg.Mem.Load64(seg.Addr) != 20 {
		t.Errorf("%d distinct values, counter %d", len(seen), seg.Mem.Load64(seg.Addr))
	}
	if own < 4*sim.Time(p.AdapterNs)*sim.Nanosecond {
		t.Errorf("a fetch-and-increment of the caller's own node took %v: not through the adapter", own)
	}
}

// TestMemBarrierAndReordering: posted writes land out of order under
// reordering; MemBarrier returns only when all have landed.
func TestMemBarrierAndReordering(t *testing.T) {
	p := DefaultParams()
	p.ReorderNs = 5000
	eng, m := build(t, 3, 2, p)
	seg, _ := m.AllocSCI(nil, 1, "x", 64*64)
	var order []int
	for i := 0; i < 64; i++ {
		a := seg.Addr + mem.Addr(64*i)
		seg.Mem.Store64(a, 0)
	}
	eng.Spawn("p0", func(pr *sim.Proc) {
		for i := 0; i < 64; i++ {
			m.WriteWord(pr, 0, 1, seg.Addr+mem.Addr(64*i), uint64(i+1))
		}
		m.MemBarrier(pr, 0)
		for i := 0; i < 64; i++ {
			if seg.Mem.Load64(seg.Addr+mem.Addr(64*i)) != uint64(i+1) {
				t.Errorf("write %d not performed after MemBarrier", i)
			}
		}
	})
	// Observe the landing order by polling every 100 ns.
	eng.Spawn("obs", func(pr *sim.Proc) {
		landed := make([]bool, 64)
		for len(order) < 64 {
			pr.Sleep(100 * sim.Nanosecond)
			for i := 0; i < 64; i++ {
				if !landed[i] && seg.Mem.Load64(seg.Addr+mem.Addr(64*i)) != 0 {
					landed[i] = true
					order = append(order, i)
				}
			}
		}
	})
	run(t, eng)
	inOrder := true
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			inOrder = false
		}
	}
	if inOrder {
		t.Errorf("64 writes landed in order under reorder_ns %g: %v", p.ReorderNs, order)
	}
}

// TestCRCResponseWritesTwice: a CRC error on a response makes the write
// land twice (the second time after the retry), and either kind of hit
// fails the writer's checkpoint.
func TestCRCResponseWritesTwice(t *testing.T) {
	p := DefaultParams()
	p.CRCErrorRate = 0.4
	eng, m := build(t, 5, 2, p)
	seg, _ := m.AllocSCI(nil, 1, "x", 8)
	fails := 0
	eng.Spawn("p0", func(pr *sim.Proc) {
		for k := 0; k < 40; k++ {
			tok := m.StartCheckPoint(pr, 0)
			m.WriteWord(pr, 0, 1, seg.Addr, uint64(k+1))
			m.MemBarrier(pr, 0)
			if !m.EndCheckPoint(pr, 0, tok) {
				fails++
			}
		}
	})
	run(t, eng)
	if seg.Mem.Load64(seg.Addr) != 40 {
		t.Errorf("last value %d, want 40", seg.Mem.Load64(seg.Addr))
	}
	st := m.Stats()
	if st.CRCResponse == 0 || st.CRCRequest == 0 || uint64(fails) != st.CheckpointFail || fails == 0 {
		t.Errorf("stats %+v, %d checkpoint failures seen", st, fails)
	}
}

// TestCablePull: writes that find no way round while a cable is out fail
// and fail the checkpoint; the interrupt fails checkpoints in progress;
// after the cable is back, writes land.
func TestCablePull(t *testing.T) {
	p := DefaultParams()
	p.TorusW, p.TorusH = 4, 1 // one ringlet: no way round
	p.UnplugAtUs, p.UnplugForUs, p.UnplugNode = 10, 100, 0
	eng, m := build(t, 1, 4, p)
	seg, _ := m.AllocSCI(nil, 1, "x", 8)
	var during, after bool
	eng.Spawn("p0", func(pr *sim.Proc) {
		pr.Sleep(20 * sim.Microsecond)
		tok := m.StartCheckPoint(pr, 0)
		m.WriteWord(pr, 0, 1, seg.Addr, 1)
		m.MemBarrier(pr, 0)
		during = m.EndCheckPoint(pr, 0, tok)
		pr.Sleep(200 * sim.Microsecond)
		tok = m.StartCheckPoint(pr, 0)
		m.WriteWord(pr, 0, 1, seg.Addr, 2)
		m.MemBarrier(pr, 0)
		after = m.EndCheckPoint(pr, 0, tok)
	})
	run(t, eng)
	if during || !after || m.Stats().FailedWrites == 0 || seg.Mem.Load64(seg.Addr) != 2 {
		t.Errorf("checkpoint during the pull %v, after %v, stats %+v, value %d", during, after, m.Stats(), seg.Mem.Load64(seg.Addr))
	}
}

// TestShapes: any torus shape; too small a shape and bad values are errors
// naming the field.
func TestShapes(t *testing.T) {
	for _, c := range []struct{ w, h, procs int }{{2, 1, 2}, {3, 1, 3}, {4, 4, 16}, {8, 12, 96}, {5, 3, 7}} {
		p := DefaultParams()
		p.TorusW, p.TorusH = c.w, c.h
		eng, m := build(t, 1, c.procs, p)
		seg, _ := m.AllocSCI(nil, c.procs-1, "x", 8)
		eng.Spawn("p0", func(pr *sim.Proc) {
			m.WriteWord(pr, 0, c.procs-1, seg.Addr, 9)
			m.MemBarrier(pr, 0)
		})
		run(t, eng)
		if seg.Mem.Load64(seg.Addr) != 9 {
			t.Errorf("%dx%d: write did not land", c.w, c.h)
		}
	}
	p := DefaultParams()
	p.TorusW, p.TorusH = 2, 2
	if _, err := New(sim.NewEngine(1), 5, p); err == nil || !strings.Contains(err.Error(), "torus_w") {
		t.Errorf("5 processes on 2x2: %v", err)
	}
	p = DefaultParams()
	p.ProcsPerNode = 3
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "procs_per_node") {
		t.Errorf("procs_per_node 3: %v", err)
	}
	p = DefaultParams()
	p.GrainBytes = 100
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "grain_bytes") {
		t.Errorf("grain_bytes 100: %v", err)
	}
}

// TestWriteTakesEffectTwice: when the response of a write is hit by a CRC
// error, the write has landed and lands again with the link layer's retry:
// a receiver that consumed and cleared the word sees it set again (the
// reason ScaMPI's structures are idempotent, 1.5.1).
func TestWriteTakesEffectTwice(t *testing.T) {
	twice := 0
	for seed := uint64(1); seed <= 20; seed++ {
		p := DefaultParams()
		p.CRCErrorRate = 0.5
		eng, m := build(t, seed, 2, p)
		seg, _ := m.AllocSCI(nil, 1, "flag", 8)
		eng.Spawn("writer", func(pr *sim.Proc) { m.WriteWord(pr, 0, 1, seg.Addr, 1) })
		eng.Spawn("reader", func(pr *sim.Proc) {
			cpu := m.CPU(1)
			cpu.SpinUntil(pr, sim.Reason("flag"), func() bool { return cpu.LoadUncached(pr, seg.Addr, 8) == 1 }, seg.Addr)
			cpu.Store(pr, seg.Addr, 8, 0) // consumed
			pr.Sleep(10 * sim.Microsecond)
			if cpu.LoadUncached(pr, seg.Addr, 8) == 1 {
				twice++
			}
		})
		run(t, eng)
		if m.Stats().CRCResponse > 0 && twice == 0 {
			t.Logf("seed %d: response hit but the duplicate landed before the clear", seed)
		}
	}
	if twice == 0 {
		t.Error("no write ever took effect twice under response CRC errors")
	}
}

// TestPCIBusShared: a node's PCI bus carries its CPUs' posted writes and
// the adapter's DMA of incoming packets one transfer at a time, so posting
// 64 KB takes longer while the node also receives 64 KB, and two CPUs of
// one node posting at once take turns; every byte still lands.
func TestPCIBusShared(t *testing.T) {
	const size = 64 << 10
	post := func(t *testing.T, ppn int, writers []int, targets []int) sim.Time {
		p := DefaultParams()
		p.ProcsPerNode = ppn
		eng, m := build(t, 1, 4, p)
		var last sim.Time
		segs := make([]mem.Region, len(writers))
		for i, w := range writers {
			segs[i], _ = m.AllocSCI(nil, targets[i], "dst", size)
			data := make([]byte, size)
			for j := range data {
				data[j] = byte(j*7 + w)
			}
			eng.Spawn("w", func(pr *sim.Proc) {
				m.Write(pr, w, targets[i], segs[i].Addr, data)
				if i == 0 {
					last = pr.Now()
				}
				m.MemBarrier(pr, w)
			})
		}
		run(t, eng)
		for i, w := range writers {
			got := segs[i].Bytes()
			for j := range got {
				if got[j] != byte(j*7+w) {
					t.Fatalf("writer %d: byte %d is %d", w, j, got[j])
				}
			}
		}
		return last
	}
	alone := post(t, 1, []int{0}, []int{1})
	for _, tc := range []struct {
		name    string
		ppn     int
		writers []int
		targets []int
	}{
		{"node 0 also receives", 1, []int{0, 1}, []int{1, 0}},
		{"both CPUs of node 0 post", 2, []int{0, 1}, []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := post(t, tc.ppn, tc.writers, tc.targets); got < alone*3/2 {
				t.Errorf("posting took %v; alone %v: the PCI bus is not shared", got, alone)
			}
		})
	}
}

// TestCRCPerPacket: a CRC error on one packet's request delays that packet
// only; the other packets of its 1 KB simulation grain land at once, and
// the packet lands after the link layer's retry.
func TestCRCPerPacket(t *testing.T) {
	for seed := uint64(1); seed < 50; seed++ {
		p := DefaultParams()
		p.CRCErrorRate, p.GatherSplitProb = 0.1, 0
		eng, m := build(t, seed, 2, p)
		seg, _ := m.AllocSCI(nil, 1, "dst", 1024)
		data := make([]byte, 1024)
		for i := range data {
			data[i] = byte(i%251 + 1)
		}
		landed := make([]sim.Time, 16)
		done := false
		eng.Spawn("w", func(pr *sim.Proc) {
			m.Write(pr, 0, 1, seg.Addr, data)
			m.MemBarrier(pr, 0)
			done = true
		})
		eng.Spawn("watch", func(pr *sim.Proc) {
			for !done {
				got := seg.Bytes()
				for k := range landed {
					if landed[k] == 0 && got[64*k+63] == data[64*k+63] && got[64*k] == data[64*k] {
						landed[k] = pr.Now()
					}
				}
				pr.Sleep(50 * sim.Nanosecond)
			}
		})
		run(t, eng)
		if string(seg.Bytes()) != string(data) {
			t.Fatalf("seed %d: the grain did not land intact", seed)
		}
		st := m.Stats()
		if st.CRCRequest != 1 || st.CRCResponse != 0 {
			continue
		}
		first, last := landed[0], landed[0]
		late := 0
		for _, at := range landed {
			first, last = min(first, at), max(last, at)
		}
		for _, at := range landed {
			if at-first >= m.crcRetry {
				late++
			}
		}
		if late != 1 {
			t.Fatalf("seed %d: one request hit, %d packets landed a retry late (landing times %v)", seed, late, landed)
		}
		return
	}
	t.Fatal("no seed gave exactly one request hit")
}

// TestWriteSharedMatchesWrite: a write of shared bytes (WriteShared: the
// packets carry slices of them, the target memory shares them) is Write
// in every simulated respect: the same packets at the same times, the
// same faults, the same bytes landing at the same instants (watched by a
// spinner), under contention for the PCI buses and the ringlets, CRC
// errors and reordering; and the shared bytes are never written.
func TestWriteSharedMatchesWrite(t *testing.T) {
	type trace struct {
		times  []sim.Time // when each write returned, then each MemBarrier
		wakes  []sim.Time // when the spinner saw each watched word change
		now    sim.Time
		events uint64
		stats  Stats
		mem    []string // every node's memory, in the end
	}
	const writes = 6
	src := make([]byte, 3*4096+100)
	for i := range src {
		src[i] = byte(i*13 + i/251 + 1)
	}
	pristine := string(src)
	exercise := func(t *testing.T, p Params, shared bool) trace {
		eng, m := build(t, 7, 4, p)
		var tr trace
		segs := make([]mem.Region, m.Nodes())
		for nd := range segs {
			segs[nd], _ = m.AllocSCI(nil, nd, "dst", 4*len(src))
		}
		for pe := 0; pe < m.Procs(); pe++ {
			eng.Spawn("w", func(pr *sim.Proc) {
				for k := 0; k < writes; k++ {
					// Every process writes to every other node, at odd
					// offsets and lengths: partial blocks, grains, splits.
					nd := (m.NodeOf(pe) + 1 + k%(m.Nodes()-1)) % m.Nodes()
					off := (pe*977 + k*131) % len(src)
					n := min(len(src)-off, 1000+k*1500)
					dst := segs[nd].Addr + mem.Addr(pe*len(src)+off)
					if shared {
						m.WriteShared(pr, pe, nd, dst, src[off:off+n])
					} else {
						m.Write(pr, pe, nd, dst, append([]byte(nil), src[off:off+n]...))
					}
					tr.times = append(tr.times, pr.Now())
				}
				m.MemBarrier(pr, pe)
				tr.times = append(tr.times, pr.Now())
			})
		}
		// A spinner on node 1, watching the words the writes land in.
		eng.SpawnDaemon("spin", func(pr *sim.Proc) {
			cpu := m.CPU(m.Procs() - 1)
			var watch []mem.Addr
			for a := segs[1].Addr; a < segs[1].Addr+mem.Addr(segs[1].Len); a += 512 {
				watch = append(watch, a)
			}
			sum := func() (s uint64) {
				for _, a := range watch {
					s = s*31 + segs[1].Mem.Load64(a)
				}
				return s
			}
			for last := sum(); ; last = sum() {
				cpu.SpinUntil(pr, sim.Reason("watch"), func() bool { return cpu.LoadUncached(pr, watch[0], 8) >= 0 && sum() != last }, watch...)
				tr.wakes = append(tr.wakes, pr.Now())
			}
		})
		run(t, eng)
		tr.now, tr.events, tr.stats = eng.Now(), eng.Events(), m.Stats()
		for _, s := range segs {
			tr.mem = append(tr.mem, string(s.Bytes()))
		}
		return tr
	}
	crc, reorder, two := DefaultParams(), DefaultParams(), DefaultParams()
	crc.CRCErrorRate = 0.05
	reorder.ReorderNs = 3000
	two.ProcsPerNode = 2
	for _, tc := range []struct {
		name string
		p    Params
	}{{"default", DefaultParams()}, {"crc errors", crc}, {"reordering", reorder}, {"two processes per node", two}} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := exercise(t, tc.p, false), exercise(t, tc.p, true)
			if string(src) != pristine {
				t.Fatal("WriteShared wrote into the shared bytes")
			}
			if fmt.Sprint(got.times, got.wakes, got.now, got.events, got.stats) != fmt.Sprint(want.times, want.wakes, want.now, want.events, want.stats) {
				t.Errorf("WriteShared: times %v wakes %v end %v, %d events, %+v\nWrite:       times %v wakes %v end %v, %d events, %+v",
					got.times, got.wakes, got.now, got.events, got.stats, want.times, want.wakes, want.now, want.events, want.stats)
			}
			for nd := range want.mem {
				if got.mem[nd] != want.mem[nd] {
					t.Errorf("node %d's memory differs after WriteShared", nd)
				}
			}
			if len(want.wakes) < 10 {
				t.Errorf("the spinner woke %d times: the case tests little", len(want.wakes))
			}
			if tc.name == "crc errors" && want.stats.CRCRequest+want.stats.CRCResponse == 0 {
				t.Error("no CRC error hit: the case tests nothing")
			}
		})
	}
}

// TestKeptRoutesMatchFound: on a machine without link or routing faults
// the router keeps the routes it found; asked again (twice: found, then
// kept), after what the caller's slice already holds, it gives the route
// it finds afresh, for every pair of nodes and class, on a ringlet and on
// tori; a machine with faults keeps none.
func TestKeptRoutesMatchFound(t *testing.T) {
	for _, c := range []struct{ w, h, procs int }{{3, 1, 3}, {4, 4, 16}, {8, 12, 96}, {5, 3, 7}} {
		p := DefaultParams()
		p.TorusW, p.TorusH = c.w, c.h
		_, m := build(t, 1, c.procs, p)
		if m.routes == nil {
			t.Fatalf("%dx%d: no routes kept on a machine without faults", c.w, c.h)
		}
		r := router{m}
		prefix := []*net.Link{m.nodes[0].inject[0]}
		for a := range m.nodes {
			for b := range m.nodes {
				for class := 0; class < classes; class++ {
					want, err := r.find(append([]*net.Link(nil), prefix...), a, b, class)
					if err != nil {
						t.Fatal(err)
					}
					for try := 0; try < 2; try++ {
						got, err := r.Route(append([]*net.Link(nil), prefix...), a, b, class)
						if err != nil || !slices.Equal(got, want) {
							t.Fatalf("%dx%d: %d->%d class %d, try %d: %v %v, want %v", c.w, c.h, a, b, class, try, got, err, want)
						}
					}
				}
			}
		}
	}
	p := DefaultParams()
	p.UnplugAtUs, p.UnplugForUs = 10, 10
	if _, m := build(t, 1, 4, p); m.routes != nil {
		t.Error("routes kept on a machine whose cable is pulled")
	}
	p = DefaultParams()
	p.RerouteAtUs = 10
	if _, m := build(t, 1, 16, p); m.routes != nil {
		t.Error("routes kept on a machine whose routing changes")
	}
}

// TestConcurrentPuts: processes of one node (sharing its PCI bus, so each
// Put sleeps before its packets take its bytes) put different blocks of
// several packets to one target at once: every block lands as its
// process wrote it.
func TestConcurrentPuts(t *testing.T) {
	p := DefaultParams()
	p.ProcsPerNode = 2
	eng, m := build(t, 1, 4, p)
	const n = 1000
	dst, _ := m.Map(nil, 0, 2, "dst", 2*n)
	for pe := 0; pe < 2; pe++ {
		src, _ := m.Alloc(pe, "src", n)
		b := src.Mem.Bytes(src.Addr, n)
		for i := range b {
			b[i] = byte(pe*101 + i)
		}
		eng.Spawn(fmt.Sprint("p", pe), func(p *sim.Proc) {
			m.Put(p, pe, 2, dst.Addr+mem.Addr(pe*n), src.Addr, n)
			m.Quiet(p, pe)
		})
	}
	run(t, eng)
	got := dst.Mem.Bytes(dst.Addr, 2*n)
	for i, v := range got {
		if want := byte(i/n*101 + i%n); v != want {
			t.Fatalf("byte %d of the target: %d, want %d", i, v, want)
		}
	}
}

// TestPacketsOnPulledCableLost: packets crossing a cable when it is
// pulled are lost, not resent by the fabric (SCI has no end-to-end
// resend); the writer sees it as a failed write and a failed checkpoint.
// Pulled at several times during a stream of grains, at least one catches
// a unit on the cable.
func TestPacketsOnPulledCableLost(t *testing.T) {
	caught := false
	for k := 0; k < 12; k++ {
		p := DefaultParams()
		p.TorusW, p.TorusH = 4, 2
		p.UnplugAtUs, p.UnplugForUs, p.UnplugNode = 20+float64(k)*0.9, 50, 0
		eng, m := build(t, 1, 4, p)
		seg, _ := m.AllocSCI(nil, 1, "x", 64<<10)
		ok := true
		eng.Spawn("p0", func(pr *sim.Proc) {
			tok := m.StartCheckPoint(pr, 0)
			m.Write(pr, 0, 1, seg.Addr, make([]byte, 8<<10))
			m.MemBarrier(pr, 0)
			ok = m.EndCheckPoint(pr, 0, tok)
		})
		run(t, eng)
		if ok || m.Stats().FailedWrites == 0 {
			t.Errorf("pull at %.1f us: checkpoint ok %v, stats %+v", p.UnplugAtUs, ok, m.Stats())
		}
		if r := m.NetStats().Resent; r != 0 {
			t.Errorf("pull at %.1f us: %d units resent by the fabric", p.UnplugAtUs, r)
		}
		caught = caught || m.cable(0).Stats().Aborted > 0
	}
	if !caught {
		t.Error("no pull caught a unit on the cable")
	}
}

// TestPCIAlternatesMastersPerBurst: while the host bridge posts 1 KB (32-
// byte bursts), a 64-byte packet the adapter must write into memory waits
// for one of the host's bursts at a time, not for the whole kilobyte, and
// the post is slowed by the packet's burst only; within one master,
// transfers take their turn.
func TestPCIAlternatesMastersPerBurst(t *testing.T) {
	p := DefaultParams()
	eng := sim.NewEngine(1)
	m, err := New(eng, 2, p)
	if err != nil {
		t.Fatal(err)
	}
	bus := m.nodes[0].pci
	hostBurst := sim.TransferTime(32, m.pciRate)
	post := sim.TransferTime(1024, m.pciRate)
	packet := sim.Time((16 + p.PCIBurstOverheadCycles) * m.pciCycle * float64(sim.Nanosecond))
	var postDone, dmaDone, dma2Done sim.Time
	eng.Spawn("cpu", func(pr *sim.Proc) {
		bus.request(hostBridge, post, hostBurst, nil, pr)
		pr.Block("post")
		postDone = pr.Now()
	})
	at := sim.Microsecond
	eng.At(at, func() {
		bus.request(adapterDMA, packet, packet, func() { dmaDone = eng.Now() }, nil)
		bus.request(adapterDMA, packet, packet, func() { dma2Done = eng.Now() }, nil)
	})
	run(t, eng)
	// Both request: the adapter gets packet/(packet+hostBurst) of the bus.
	share := float64(packet) / float64(packet+hostBurst)
	want := at + sim.Time(float64(packet)/share)
	if d := dmaDone - want; d < -2 || d > 2 {
		t.Errorf("packet in memory at %v, want %v (one host burst per packet burst)", dmaDone, want)
	}
	if dmaDone-at > 2*(packet+hostBurst) {
		t.Errorf("packet waited %v: the host kept the bus for its whole post", dmaDone-at)
	}
	if want2 := want + sim.Time(float64(packet)/share); dma2Done < want2-2 || dma2Done > want2+2 {
		t.Errorf("second packet at %v, want %v (after the first)", dma2Done, want2)
	}
	if want := post + 2*packet; postDone < want-4 || postDone > want+4 {
		t.Errorf("post done at %v, want %v (its 1 KB plus the two packets' bursts)", postDone, want)
	}
}

// TestPCIDMAStartsWithFirstPacket: the adapter writes a grain's packets
// as they arrive, so on an idle bus a grain whose packets took s to
// arrive is in memory one packet's burst after its last packet (not its
// whole DMA after it); when the host bridge was posting meanwhile, the
// bursts it lost to the grain delay the post.
func TestPCIDMAStartsWithFirstPacket(t *testing.T) {
	p := DefaultParams()
	eng := sim.NewEngine(1)
	m, err := New(eng, 2, p)
	if err != nil {
		t.Fatal(err)
	}
	packet := sim.Time((16 + p.PCIBurstOverheadCycles) * m.pciCycle * float64(sim.Nanosecond))
	grain := 16 * packet // 1 KB
	at := 20 * sim.Microsecond
	var idle, busy, postDone sim.Time
	eng.At(at, func() {
		m.nodes[0].pci.requestSince(adapterDMA, grain, packet, at-grain, packet, func() { idle = eng.Now() }, nil)
	})
	hostBurst := sim.TransferTime(32, m.pciRate)
	post := sim.TransferTime(4096, m.pciRate)
	eng.Spawn("cpu", func(pr *sim.Proc) {
		pr.Sleep(at - 5*sim.Microsecond)
		m.nodes[1].pci.request(hostBridge, post, hostBurst, nil, pr)
		pr.Block("post")
		postDone = pr.Now()
	})
	eng.At(at, func() {
		m.nodes[1].pci.requestSince(adapterDMA, grain, packet, at-grain, packet, func() { busy = eng.Now() }, nil)
	})
	run(t, eng)
	if d := idle - (at + packet); d < -2 || d > 2 {
		t.Errorf("idle bus: grain in memory %v after its last packet, want one packet's burst %v", idle-at, packet)
	}
	if busy <= idle {
		t.Errorf("bus shared with a post: grain in memory at %v, not later than on an idle bus (%v)", busy, idle)
	}
	if want := at - 5*sim.Microsecond + post + grain; postDone < want-4 || postDone > want+4 {
		t.Errorf("post done at %v, want %v (delayed by the whole grain's bursts)", postDone, want)
	}
}

package scampi

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// open builds a cluster of procs processes with mp and opens ScaMPI with
// sp on it.
func open(t *testing.T, seed uint64, procs int, mp sci.Params, sp Params) (*sim.Engine, *sci.Machine, *stacks.World) {
	t.Helper()
	eng := sim.NewEngine(seed)
	eng.SetLimits(sim.Limits{MaxEvents: 50_000_000})
	m, err := sci.New(eng, procs, mp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(m, sp)
	if err != nil {
		t.Fatal(err)
	}
	return eng, m, w
}

type msg struct {
	id, src, dst, tag, n int
}

// pattern is message id's byte at offset i.
func pattern(seed uint64, id, i int) byte {
	x := seed*0x9e3779b97f4a7c15 ^ uint64(id+1)*0xbf58476d1ce4e5b9 ^ uint64(i/8)*0x94d049bb133111eb
	x ^= x >> 29
	return byte(x >> (8 * (i % 8)))
}

// exchange sends msgs (all posted at once: every receive first, then every
// send, then a wait for all) and checks that every message arrives exactly
// once, intact, with its envelope; it returns the failures.
func exchange(t *testing.T, eng *sim.Engine, w *stacks.World, seed uint64, msgs []msg) []string {
	t.Helper()
	comms, err := stacks.As[stacks.Comm](w, "test", "comm")
	if err != nil {
		t.Fatal(err)
	}
	var fails []string
	for r := range comms {
		c := comms[r]
		eng.Spawn(fmt.Sprintf("rank%d", r), func(p *sim.Proc) {
			type recv struct {
				m   msg
				buf mem.Region
				req stacks.Request
			}
			var recvs []recv
			var sends []stacks.Request
			for _, m := range msgs {
				if m.dst != r {
					continue
				}
				buf, err := c.Buffer(m.n + 8)
				if err != nil {
					t.Error(err)
					return
				}
				q, err := c.Irecv(p, buf, m.src, m.tag)
				if err != nil {
					t.Error(err)
					return
				}
				recvs = append(recvs, recv{m, buf, q})
			}
			for _, m := range msgs {
				if m.src != r {
					continue
				}
				buf, _ := c.Buffer(m.n)
				b := make([]byte, m.n)
				for i := range b {
					b[i] = pattern(seed, m.id, i)
				}
				c.CPU().Poke(buf.Addr, b)
				q, err := c.Isend(p, buf, m.dst, m.tag)
				if err != nil {
					t.Error(err)
					return
				}
				sends = append(sends, q)
			}
			for _, q := range sends {
				if _, err := q.Wait(p); err != nil {
					fails = append(fails, fmt.Sprintf("rank %d send: %v", r, err))
					return
				}
			}
			for _, x := range recvs {
				st, err := x.req.Wait(p)
				if err != nil {
					fails = append(fails, fmt.Sprintf("rank %d receive of message %d: %v", r, x.m.id, err))
					return
				}
				if st.Source != x.m.src || st.Tag != x.m.tag || st.Len != x.m.n {
					fails = append(fails, fmt.Sprintf("rank %d: message %d has envelope %+v, want (%d, %d, %d)", r, x.m.id, st, x.m.src, x.m.tag, x.m.n))
					continue
				}
				got := make([]byte, x.m.n)
				c.CPU().Peek(x.buf.Addr, got)
				for i, b := range got {
					if b != pattern(seed, x.m.id, i) {
						fails = append(fails, fmt.Sprintf("rank %d: message %d (%d bytes from %d) corrupted at byte %d", r, x.m.id, x.m.n, x.m.src, i))
						break
					}
				}
			}
		})
	}
	if err := eng.Run(); err != nil {
		fails = append(fails, err.Error())
	}
	// Nothing consumed twice: every envelope sent was consumed once, and
	// no message is left over.
	sw := w.Ranks[0].(*Rank).w
	sent := uint64(0)
	for _, c := range sw.chans {
		if c != nil {
			sent += c.seq
			if c.expected-1 != c.seq {
				fails = append(fails, fmt.Sprintf("channel %d->%d: %d envelopes sent, %d consumed", c.s, c.r, c.seq, c.expected-1))
			}
		}
	}
	if sw.counts.Envelopes != sent {
		fails = append(fails, fmt.Sprintf("%d envelopes consumed, %d sent", sw.counts.Envelopes, sent))
	}
	for _, x := range sw.ranks {
		if len(x.unexp) > 0 || len(x.posted) > 0 {
			fails = append(fails, fmt.Sprintf("rank %d: %d unexpected messages left (duplicates), %d receives still posted", x.id, len(x.unexp), len(x.posted)))
		}
	}
	return fails
}

// randomMessages draws count messages between procs ranks with sizes
// around the envelope's 32 bytes and the 16 KB buffers, and a few tags.
func randomMessages(eng *sim.Engine, procs, count int) []msg {
	sizes := []int{0, 1, 8, 31, 32, 33, 63, 64, 65, 1000, 16383, 16384, 16385, 40000}
	rng := eng.Rand()
	out := make([]msg, count)
	for i := range out {
		s := rng.IntN(procs)
		d := rng.IntN(procs - 1)
		if d >= s {
			d++
		}
		out[i] = msg{id: i, src: s, dst: d, tag: rng.IntN(3), n: sizes[rng.IntN(len(sizes))]}
	}
	return out
}

// TestRandomMessages: random messages around the envelope limit and the
// buffer size, with tags, between processes on and across nodes, with
// packets reordered and stream buffers flushed early, arrive exactly once
// and intact, for many seeds.
func TestRandomMessages(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		mp := sci.DefaultParams()
		mp.ProcsPerNode = 2
		mp.ReorderNs = 1000
		mp.GatherSplitProb = 0.3
		eng, m, w := open(t, seed, 6, mp, DefaultParams())
		msgs := randomMessages(eng, 6, 60)
		if f := exchange(t, eng, w, seed, msgs); len(f) > 0 {
			t.Fatalf("seed %d: %v", seed, f)
		}
		c := w.Ranks[0].(*Rank).w.Counters()
		if c.Messages != 60 {
			t.Errorf("seed %d: %d messages sent, want 60", seed, c.Messages)
		}
		if seed == 1 {
			t.Logf("counters %+v, machine %+v", c, m.Stats())
		}
	}
}

// TestRandomMessagesUnderFaults: the same under CRC errors (1e-2 per
// packet: requests landing late, responses lost so writes land twice), a
// cable pulled and plugged back, and a routing change: every message once
// and intact, and the checkpoint retries are counted.
func TestRandomMessagesUnderFaults(t *testing.T) {
	retries := uint64(0)
	for seed := uint64(1); seed <= 8; seed++ {
		mp := sci.DefaultParams()
		mp.TorusW, mp.TorusH = 4, 2
		mp.CRCErrorRate = 1e-2
		mp.UnplugAtUs, mp.UnplugForUs, mp.UnplugNode = 100, 300, 1
		mp.RerouteAtUs = 500
		eng, m, w := open(t, seed, 8, mp, DefaultParams())
		msgs := randomMessages(eng, 8, 80)
		if f := exchange(t, eng, w, seed, msgs); len(f) > 0 {
			t.Fatalf("seed %d: %v", seed, f)
		}
		st := m.Stats()
		if st.CRCRequest+st.CRCResponse == 0 || st.Interrupts == 0 {
			t.Errorf("seed %d: no fault happened: %+v", seed, st)
		}
		retries += w.Ranks[0].(*Rank).w.Counters().Retries
	}
	if retries == 0 {
		t.Error("no Figure 1.2 loop was ever retried under faults")
	}
}

// TestFirstUseAllocation: by default only the channels used are
// allocated; init_all_channels allocates all of them at start-up.
func TestFirstUseAllocation(t *testing.T) {
	for _, all := range []bool{false, true} {
		sp := DefaultParams()
		sp.InitAllChannels = all
		eng, _, w := open(t, 1, 5, sci.DefaultParams(), sp)
		msgs := []msg{{0, 0, 1, 0, 8}, {1, 2, 1, 0, 100}, {2, 1, 3, 0, 20000}}
		if f := exchange(t, eng, w, 1, msgs); len(f) > 0 {
			t.Fatal(f)
		}
		sw := w.Ranks[0].(*Rank).w
		for s := 0; s < 5; s++ {
			for r := 0; r < 5; r++ {
				used := (s == 0 && r == 1) || (s == 2 && r == 1) || (s == 1 && r == 3)
				if want := s != r && (all || used); sw.Allocated(s, r) != want {
					t.Errorf("init_all_channels %v: channel %d->%d allocated %v, want %v", all, s, r, sw.Allocated(s, r), want)
				}
			}
		}
	}
}

// TestIntraNodeNeverTouchesNetwork: two processes of one node exchange
// messages of every size through shared memory: no adapter write, no
// packet.
func TestIntraNodeNeverTouchesNetwork(t *testing.T) {
	mp := sci.DefaultParams()
	mp.ProcsPerNode = 2
	eng, m, w := open(t, 3, 2, mp, DefaultParams())
	msgs := randomMessages(eng, 2, 40)
	if f := exchange(t, eng, w, 3, msgs); len(f) > 0 {
		t.Fatal(f)
	}
	if ns := m.NetStats(); ns.Messages != 0 || m.Stats().Packets != 0 || m.SentBytes(0)+m.SentBytes(1) != 0 {
		t.Errorf("intra-node traffic touched the network: %+v %+v", ns, m.Stats())
	}
	if c := w.Ranks[0].(*Rank).w.Counters(); c.LocalChannels != 2 || c.Channels != 2 {
		t.Errorf("channels %+v, want 2 local ones", c)
	}
}

// pingpong returns the mean half round trip of n-byte messages between
// ranks 0 and 1.
func pingpong(t *testing.T, mp sci.Params, n int) sim.Time {
	t.Helper()
	eng, _, w := open(t, 1, 2, mp, DefaultParams())
	comms, _ := stacks.As[stacks.Comm](w, "test", "comm")
	const reps = 4
	var start, end sim.Time
	for r := 0; r < 2; r++ {
		c := comms[r]
		eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
			buf, _ := c.Buffer(n)
			for k := 0; k <= reps; k++ {
				if k == 1 && r == 0 {
					start = p.Now()
				}
				if r == 0 {
					if err := c.Send(p, buf, 1, k); err != nil {
						t.Error(err)
					}
					if _, err := c.Recv(p, buf, 1, k); err != nil {
						t.Error(err)
					}
				} else {
					if _, err := c.Recv(p, buf, 0, k); err != nil {
						t.Error(err)
					}
					if err := c.Send(p, buf, 0, k); err != nil {
						t.Error(err)
					}
				}
			}
			end = p.Now()
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	return (end - start) / (2 * reps)
}

// TestCalibration pins the calibration points (scampi-sci.txt 1.6) on
// simulated time: within 10% of the paper, and exactly what the model
// gives today.
func TestCalibration(t *testing.T) {
	intra := sci.DefaultParams()
	intra.ProcsPerNode = 2
	for _, c := range []struct {
		name  string
		mp    sci.Params
		n     int
		paper float64 // us, or MB/s for n > 0
	}{
		{"inter-node latency", sci.DefaultParams(), 0, 9.4},
		{"inter-node bandwidth", sci.DefaultParams(), 1 << 20, 76},
		{"intra-node latency", intra, 0, 4.5},
		{"intra-node bandwidth", intra, 1 << 20, 130},
	} {
		d := pingpong(t, c.mp, c.n)
		got := d.Micros()
		if c.n > 0 {
			got = float64(c.n) / d.Micros()
		}
		if got < 0.9*c.paper || got > 1.1*c.paper {
			t.Errorf("%s: %.3f, paper %.1f (more than 10%% off)", c.name, got, c.paper)
		}
		t.Logf("%s: %.3f (paper %.1f)", c.name, got, c.paper)
	}
}

// TestEnvelopeCRC: an envelope is sealed by its CRC; a torn one (its
// second half not landed) fails the check.
func TestEnvelopeCRC(t *testing.T) {
	var env [envBytes]byte
	binary.LittleEndian.PutUint64(env[offSeq:], 7)
	copy(env[offPayload:], "thirty-two bytes of payload here")
	binary.LittleEndian.PutUint32(env[offCRC:], envCRC(env[:]))
	if binary.LittleEndian.Uint32(env[offCRC:]) != envCRC(env[:]) {
		t.Fatal("a whole envelope fails its CRC")
	}
	torn := env
	clear(torn[32:])
	if binary.LittleEndian.Uint32(torn[offCRC:]) == envCRC(torn[:]) {
		t.Error("a torn envelope passes its CRC")
	}
}

// TestSafeguardsHold: under the machine settings of the teaching
// scenarios (every envelope split into two reordered packets, long
// reordering delays) the protocol with its safeguards delivers every
// message intact, and the CRC did catch torn envelopes.
func TestSafeguardsHold(t *testing.T) {
	torn := uint64(0)
	for seed := uint64(1); seed <= 6; seed++ {
		mp := sci.DefaultParams()
		mp.GatherSplitProb, mp.ReorderNs = 1, 3000
		eng, _, w := open(t, seed, 4, mp, DefaultParams())
		msgs := randomMessages(eng, 4, 40)
		if f := exchange(t, eng, w, seed, msgs); len(f) > 0 {
			t.Fatalf("seed %d: %v", seed, f)
		}
		torn += w.Ranks[0].(*Rank).w.Counters().Torn
	}
	if torn == 0 {
		t.Error("no torn envelope was ever seen: the CRC check was not exercised")
	}
	sp := DefaultParams()
	sp.WriteIndex = "whole"
	eng, _, w := open(t, 1, 2, sci.DefaultParams(), sp)
	var msgs []msg
	for i := 0; i < 300; i++ {
		msgs = append(msgs, msg{id: i, src: 0, dst: 1, tag: 0, n: 8})
	}
	if f := exchange(t, eng, w, 1, msgs); len(f) > 0 {
		t.Fatalf("a two-byte index written whole, past its wrap: %v", f)
	}
}

// TestBarrier: no rank leaves a barrier before every rank has entered it,
// for process counts that are not powers of the fan-in, every fan-in, one
// or two processes per node, and with faults.
func TestBarrier(t *testing.T) {
	for _, ppn := range []int{1, 2} {
		for _, fan := range []int{1, 2, 3, 4, 7} {
			for _, n := range []int{2, 3, 5, 6, 9, 13} {
				mp := sci.DefaultParams()
				mp.ProcsPerNode = ppn
				if fan == 3 {
					mp.CRCErrorRate = 0.05
				}
				sp := DefaultParams()
				sp.BarrierFanIn = fan
				eng, _, w := open(t, uint64(n*fan), n, mp, sp)
				const rounds = 5
				enter := make([][rounds]sim.Time, n)
				leave := make([][rounds]sim.Time, n)
				for r := 0; r < n; r++ {
					x := w.Ranks[r].(*Rank)
					eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
						for k := 0; k < rounds; k++ {
							p.Sleep(sim.Time(eng.Rand().IntN(20000)) * sim.Nanosecond)
							enter[r][k] = p.Now()
							if err := x.Barrier(p); err != nil {
								t.Error(err)
								return
							}
							leave[r][k] = p.Now()
						}
					})
				}
				if err := eng.Run(); err != nil {
					t.Fatalf("ppn %d fan-in %d, %d ranks: %v", ppn, fan, n, err)
				}
				for k := 0; k < rounds; k++ {
					var last sim.Time
					for r := 0; r < n; r++ {
						last = max(last, enter[r][k])
					}
					for r := 0; r < n; r++ {
						if leave[r][k] < last {
							t.Errorf("ppn %d fan-in %d, %d ranks: rank %d left barrier %d at %v, before the last entry at %v", ppn, fan, n, r, k, leave[r][k], last)
						}
					}
				}
			}
		}
	}
}

// TestAlltoall: both algorithms (below and from the switch) deliver every
// block intact, on process counts around the switch.
func TestAlltoall(t *testing.T) {
	for _, n := range []int{2, 3, 7, 15, 16, 17} {
		const block = 5000
		eng, _, w := open(t, uint64(n), n, sci.DefaultParams(), DefaultParams())
		for r := 0; r < n; r++ {
			x := w.Ranks[r].(*Rank)
			eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
				alltoallChecked(t, p, x, fmt.Sprintf("%d ranks: rank %d", n, r), n, block)
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatalf("%d ranks: %v", n, err)
		}
	}
}

// alltoallChecked is rank x's part of an all-to-all of block-byte blocks
// among procs ranks, the block for d holding pattern(x, d, i), with every
// block it receives checked; it reports whether all arrived intact (what
// names the rank in errors).
func alltoallChecked(t *testing.T, p *sim.Proc, x *Rank, what string, procs, block int) bool {
	r := x.Rank()
	sbuf, _ := x.Buffer(procs * block)
	rbuf, _ := x.Buffer(procs * block)
	b := make([]byte, procs*block)
	for d := 0; d < procs; d++ {
		for i := 0; i < block; i++ {
			b[d*block+i] = pattern(uint64(r), d, i)
		}
	}
	x.CPU().Poke(sbuf.Addr, b)
	if err := x.Alltoall(p, sbuf, rbuf, block); err != nil {
		t.Errorf("%s: %v", what, err)
		return false
	}
	x.CPU().Peek(rbuf.Addr, b)
	for s := 0; s < procs; s++ {
		for i := 0; i < block; i++ {
			if b[s*block+i] != pattern(uint64(s), r, i) {
				t.Errorf("%s: block from %d corrupted at %d", what, s, i)
				return false
			}
		}
	}
	return true
}

// TestFootprint: with every channel allocated at start-up, a rank's node
// holds exactly what FootprintBytes says (one process per node), and
// first-use allocation holds less before any message.
func TestFootprint(t *testing.T) {
	for _, all := range []bool{false, true} {
		sp := DefaultParams()
		sp.InitAllChannels = all
		_, m, w := open(t, 1, 5, sci.DefaultParams(), sp)
		f, ok := w.Ranks[2].(stacks.Footprint)
		if !ok {
			t.Fatal("scampi ranks do not offer stacks.Footprint")
		}
		need, used := f.FootprintBytes(false), m.NodeMemory(2).Used()
		if all && need != used || !all && used >= need {
			t.Errorf("init_all_channels %v: node 2 holds %d bytes, FootprintBytes %d", all, used, need)
		}
	}
}

// roughParams is an SCI machine that makes a protocol's life hard: with
// faults, a 4x2 torus with CRC errors at crcRate and node 1 unplugged
// from 100 to 400 us; without, two processes per node, packets reordered
// by up to 1 us and three 64-byte blocks in ten flushed in two halves.
func roughParams(faults bool, crcRate float64) sci.Params {
	mp := sci.DefaultParams()
	if faults {
		mp.TorusW, mp.TorusH = 4, 2
		mp.CRCErrorRate = crcRate
		mp.UnplugAtUs, mp.UnplugForUs, mp.UnplugNode = 100, 300, 1
	} else {
		mp.ProcsPerNode = 2
		mp.ReorderNs = 1000
		mp.GatherSplitProb = 0.3
	}
	return mp
}

// TestScanMatchesStepByStep: polling the channels as one poll
// (Processor.Poll, which the machine may run as one operation) times every
// operation as the loads issued one by one do (the engine run step by
// step, sim.Engine.SetStepByStep): the same simulated end and the same
// per-rank finishing times, with random messages under reordering and
// faults and with all-to-alls on both sides of the algorithm switch, for
// no more events.
func TestScanMatchesStepByStep(t *testing.T) {
	type outcome struct {
		end    sim.Time
		events uint64
		done   []sim.Time
	}
	run := func(stepByStep bool, seed uint64, procs int, faults bool, alltoall bool) outcome {
		mp := roughParams(faults, 1e-2)
		eng, _, w := open(t, seed, procs, mp, DefaultParams())
		eng.SetStepByStep(stepByStep)
		o := outcome{done: make([]sim.Time, procs)}
		if alltoall {
			const block = 3000
			for r := 0; r < procs; r++ {
				x := w.Ranks[r].(*Rank)
				eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
					sbuf, _ := x.Buffer(procs * block)
					rbuf, _ := x.Buffer(procs * block)
					if err := x.Alltoall(p, sbuf, rbuf, block); err != nil {
						t.Error(err)
					}
					o.done[r] = p.Now()
				})
			}
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
		} else if f := exchange(t, eng, w, seed, randomMessages(eng, procs, 10*procs)); len(f) > 0 {
			t.Fatalf("seed %d: %v", seed, f)
		}
		o.end, o.events = eng.Now(), eng.Events()
		return o
	}
	var scanned, loaded uint64
	for _, c := range []struct {
		procs            int
		faults, alltoall bool
	}{{6, false, false}, {8, true, false}, {7, false, true}, {17, false, true}} {
		for seed := uint64(1); seed <= 4; seed++ {
			a, b := run(false, seed, c.procs, c.faults, c.alltoall), run(true, seed, c.procs, c.faults, c.alltoall)
			if a.end != b.end || fmt.Sprint(a.done) != fmt.Sprint(b.done) {
				t.Errorf("%+v seed %d: scan ends at %v (ranks %v), step by step at %v (ranks %v)", c, seed, a.end, a.done, b.end, b.done)
			}
			scanned, loaded = scanned+a.events, loaded+b.events
		}
	}
	if scanned > loaded {
		t.Errorf("scans took %d events, step by step %d", scanned, loaded)
	}
	t.Logf("events: %d scanning, %d step by step", scanned, loaded)
}

// TestSharedPayloadMatchesCopied: a send buffer that shares a payload
// stream (mem.CPU.PokeShared) goes through the adapters and the channels'
// buffers without copies (sci.Machine.Put of shared bytes), timed exactly as the
// same bytes written into the buffer: the same end, per-rank finishing
// times and events, with all-to-alls on both sides of the algorithm
// switch, two processes per node, reordering and faults; every block
// arrives intact, and the nodes hold less memory.
func TestSharedPayloadMatchesCopied(t *testing.T) {
	type outcome struct {
		end      sim.Time
		events   uint64
		done     []sim.Time
		resident int
	}
	const block = 20000
	run := func(shared bool, seed uint64, procs int, faults bool) outcome {
		mp := roughParams(faults, 1e-3)
		eng, m, w := open(t, seed, procs, mp, DefaultParams())
		// One stream; rank r sends the window from 61*r on.
		stream := make([]byte, procs*block+61*procs)
		for i := range stream {
			stream[i] = pattern(seed, 0, i)
		}
		o := outcome{done: make([]sim.Time, procs)}
		for r := 0; r < procs; r++ {
			x := w.Ranks[r].(*Rank)
			eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
				sbuf, _ := x.Buffer(procs * block)
				rbuf, _ := x.Buffer(procs * block)
				win := stream[61*r : 61*r+procs*block]
				if shared {
					x.CPU().PokeShared(sbuf.Addr, win)
				} else {
					x.CPU().Poke(sbuf.Addr, win)
				}
				if err := x.Alltoall(p, sbuf, rbuf, block); err != nil {
					t.Error(err)
					return
				}
				o.done[r] = p.Now()
				got := make([]byte, block)
				for s := 0; s < procs; s++ {
					x.CPU().Peek(rbuf.Addr+mem.Addr(s*block), got)
					if want := stream[61*s+r*block:][:block]; string(got) != string(want) {
						t.Errorf("shared %v: rank %d: the block from %d is corrupted", shared, r, s)
					}
				}
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		for nd := 0; nd < m.Nodes(); nd++ {
			o.resident += m.NodeMemory(nd).Resident()
		}
		o.end, o.events = eng.Now(), eng.Events()
		return o
	}
	for _, c := range []struct {
		procs  int
		faults bool
	}{{7, false}, {17, false}, {8, true}} {
		for seed := uint64(1); seed <= uint64(max(1, 20/c.procs)); seed++ {
			a, b := run(true, seed, c.procs, c.faults), run(false, seed, c.procs, c.faults)
			if a.end != b.end || a.events != b.events || fmt.Sprint(a.done) != fmt.Sprint(b.done) {
				t.Errorf("%+v seed %d: shared payload ends at %v after %d events (ranks %v), copied at %v after %d (ranks %v)",
					c, seed, a.end, a.events, a.done, b.end, b.events, b.done)
			}
			if a.resident >= b.resident {
				t.Errorf("%+v seed %d: the nodes hold %d bytes with a shared payload, %d with copies", c, seed, a.resident, b.resident)
			}
			t.Logf("%+v seed %d: %d bytes resident shared, %d copied", c, seed, a.resident, b.resident)
		}
	}
}

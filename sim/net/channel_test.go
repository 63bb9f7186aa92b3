package net

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// vcs is two links of latency lat at 300 MB/s, virtual channels 0 and 1 of
// one physical channel when shared, two physical channels otherwise.
func vcs(shared bool, lat sim.Time) (vc0, vc1 *Link, ch *Channel) {
	vc0, vc1 = NewLink("vc0", lat, 300), NewLink("vc1", lat, 300)
	if shared {
		ch = NewChannel("wire")
		vc0.Phys, vc1.Phys = ch, ch
	}
	return vc0, vc1, ch
}

// TestVirtualChannelsShareBandwidth: two messages on the two virtual
// channels of one physical channel take about twice as long as one, in
// whole messages and in units that take turns; on two physical channels
// they do not interfere.
func TestVirtualChannelsShareBandwidth(t *testing.T) {
	const n = 300000 // 1 ms at 300 MB/s
	lat := sim.Nano(20)
	for _, tc := range []struct {
		name   string
		shared bool
		unit   int
	}{{"one wire, whole", true, 0}, {"one wire, units", true, 3000}, {"two wires", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			vc0, vc1, ch := vcs(tc.shared, lat)
			in0, in1 := NewLink("in0", lat, 300), NewLink("in1", lat, 300)
			out0, out1 := NewLink("out0", lat, 300), NewLink("out1", lat, 300)
			nw := mustNet(t, eng, routes{{0, 1}: {in0, vc0, out0}, {2, 3}: {in1, vc1, out1}}, Config{Unit: tc.unit})
			r0 := sendAt(t, eng, nw, 0, 0, 1, n, 0)
			r1 := sendAt(t, eng, nw, 0, 2, 3, n, 0)
			run(t, eng)
			one := 3*lat + sim.Millisecond
			first, last := min(r0.delivered, r1.delivered), max(r0.delivered, r1.delivered)
			if !tc.shared {
				if first != one || last != one {
					t.Errorf("two wires: tails at %v and %v, want both %v", r0.delivered, r1.delivered, one)
				}
				return
			}
			if last < 2*sim.Millisecond || last > one+sim.Millisecond+10*lat {
				t.Errorf("last tail at %v, want about %v (the wire's bandwidth shared)", last, one+sim.Millisecond)
			}
			if tc.unit > 0 && first < 2*sim.Millisecond-10*sim.Microsecond {
				t.Errorf("units take turns: first tail at %v, want close to the last %v", first, last)
			}
			if st := ch.Stats(); st.Busy != 2*sim.Millisecond {
				t.Errorf("wire busy %v, want 2 ms (%+v)", st.Busy, st)
			}
		})
	}
}

// TestStalledUnitFreesPhysicalChannel: a unit whose head waits downstream
// keeps its virtual channel (a unit behind it on that virtual channel
// waits) but not the wire: a unit on the other virtual channel of the same
// physical channel crosses it as if alone, through the gap (nothing is
// booked ahead).
func TestStalledUnitFreesPhysicalChannel(t *testing.T) {
	lat := sim.Nano(20)
	for _, tc := range []struct {
		name    string
		sameVC  bool
		blocked bool
	}{{"other virtual channel", false, false}, {"same virtual channel", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			vc0, vc1, ch := vcs(true, lat)
			blocker, other := NewLink("blocker", lat, 300), NewLink("other", lat, 300)
			second := vc1
			if tc.sameVC {
				second = vc0
			}
			nw := mustNet(t, eng, routes{
				{9, 9}: {blocker},      // busy 1 ms
				{0, 1}: {vc0, blocker}, // stalls on vc0 before blocker
				{2, 3}: {second, other},
			}, Config{})
			sendAt(t, eng, nw, 0, 9, 9, 300000, 0)
			stalled := sendAt(t, eng, nw, sim.Nano(1), 0, 1, 3000, 0)
			probe := sendAt(t, eng, nw, sim.Nano(100), 2, 3, 3000, 0)
			run(t, eng)
			alone := sim.Nano(100) + 2*lat + 10*sim.Microsecond
			if tc.blocked && probe.delivered < sim.Millisecond {
				t.Errorf("behind a stalled unit on its virtual channel: tail at %v, want after 1 ms", probe.delivered)
			}
			if !tc.blocked && probe.delivered != alone {
				t.Errorf("on the other virtual channel: tail at %v, want %v (as if alone)", probe.delivered, alone)
			}
			if stalled.delivered < sim.Millisecond {
				t.Errorf("stalled unit: tail at %v, want after the blocker's 1 ms", stalled.delivered)
			}
			if st := ch.Stats(); st.Busy != 2*10*sim.Microsecond {
				t.Errorf("wire busy %v, want the two units' 20 us only (%+v)", st.Busy, st)
			}
		})
	}
}

// TestResumingUnitWaitsForTheWire: a stalled unit whose wire another
// virtual channel took meanwhile moves again only when that unit's tail
// has passed; the data of both arrives intact.
func TestResumingUnitWaitsForTheWire(t *testing.T) {
	lat := sim.Nano(20)
	eng := sim.NewEngine(1)
	vc0, vc1, ch := vcs(true, lat)
	blocker, other := NewLink("blocker", lat, 300), NewLink("other", lat, 300)
	nw := mustNet(t, eng, routes{
		{9, 9}: {blocker},      // busy 10 us
		{0, 1}: {vc0, blocker}, // stalls before blocker until 10 us
		{2, 3}: {vc1, other},   // takes the wire at 1 us for 1 ms
	}, Config{})
	sendAt(t, eng, nw, 0, 9, 9, 3000, 0)
	stalled := sendAt(t, eng, nw, sim.Nano(1), 0, 1, 3000, 0)
	long := sendAt(t, eng, nw, sim.Micro(1), 2, 3, 300000, 0)
	run(t, eng)
	if want := sim.Micro(1) + 2*lat + sim.Millisecond; long.delivered != want {
		t.Errorf("unit on the free wire: tail at %v, want %v", long.delivered, want)
	}
	if stalled.delivered < long.delivered-lat {
		t.Errorf("stalled unit: tail at %v, before the wire was free (%v)", stalled.delivered, long.delivered)
	}
	if st := ch.Stats(); st.Busy != sim.Millisecond+10*sim.Microsecond || st.Waits != 1 {
		t.Errorf("wire: %+v, want busy 1.01 ms and one wait", st)
	}
}

// TestTorusSteadyStateAllocatesNothing: packets crossing a torus whose
// virtual channels share physical channels, standing and collecting them
// again, allocate nothing once the pools are warm.
func TestTorusSteadyStateAllocatesNothing(t *testing.T) {
	eng := sim.NewEngine(1)
	tor, err := NewTorusClasses("t", [3]int{4, 4, 1}, sim.Nano(20), 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	nw := mustNet(t, eng, torusRouter{tor}, Config{MTU: 64, Header: 16, Packets: true})
	h := &nopHandler{}
	round := func() {
		for src := 0; src < 16; src++ {
			nw.Send(Msg{Src: src, Dst: 15 - src, Class: src % 2, Bytes: 640}, h)
			nw.Send(Msg{Src: src, Dst: (src + 5) % 16, Class: 1 - src%2, Bytes: 640}, h)
		}
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		round()
	}
	if allocs := testing.AllocsPerRun(20, round); allocs > 0 {
		t.Errorf("%.1f allocations per round, want 0", allocs)
	}
	var waits uint64
	for node := 0; node < 16; node++ {
		for dim := 0; dim < 2; dim++ {
			for _, dir := range []int{1, -1} {
				waits += tor.Channel(node, dim, dir).Stats().Waits
			}
		}
	}
	if waits == 0 {
		t.Error("no unit ever waited for a physical channel: the test does not exercise sharing")
	}
}

// TestTorusUnderLoad: random traffic of two classes on a torus, whole
// messages, units and packets, is all delivered (no deadlock while units
// stand and collect their physical channels), and no physical channel is
// busy longer than the run.
func TestTorusUnderLoad(t *testing.T) {
	for _, cfg := range []Config{
		{MTU: 64, Header: 16},
		{MTU: 64, Header: 16, Unit: 256},
		{MTU: 64, Header: 16, Packets: true},
	} {
		eng := sim.NewEngine(7)
		tor, err := NewTorusClasses("t", [3]int{4, 4, 2}, sim.Nano(20), 300, 2)
		if err != nil {
			t.Fatal(err)
		}
		nw := mustNet(t, eng, torusRouter{tor}, cfg)
		h := &nopHandler{}
		const msgs = 400
		for range msgs {
			src, dst := eng.Rand().IntN(32), eng.Rand().IntN(32)
			at := sim.Time(eng.Rand().Int64N(int64(20 * sim.Microsecond)))
			bytes, class := 16+eng.Rand().IntN(4000), eng.Rand().IntN(2)
			eng.At(at, func() { nw.Send(Msg{Src: src, Dst: dst, Class: class, Bytes: bytes}, h) })
		}
		run(t, eng)
		if h.delivered != msgs {
			t.Errorf("%+v: %d of %d messages delivered", cfg, h.delivered, msgs)
		}
		var waits uint64
		for node := 0; node < 32; node++ {
			for dim := 0; dim < 3; dim++ {
				for _, dir := range []int{1, -1} {
					st := tor.Channel(node, dim, dir).Stats()
					waits += st.Waits
					if st.Busy > eng.Now() {
						t.Errorf("%+v: channel of node %d dim %d dir %d busy %v in %v", cfg, node, dim, dir, st.Busy, eng.Now())
					}
				}
			}
		}
		if waits == 0 {
			t.Errorf("%+v: no unit waited for a physical channel", cfg)
		}
	}
}

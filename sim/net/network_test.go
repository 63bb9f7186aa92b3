package net

import (
	"slices"
	"strconv"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestIdleRoute: on an idle route the head crosses every link's latency
// and the tail follows the unit's duration later; the source is free once
// the tail has entered the first link.
func TestIdleRoute(t *testing.T) {
	const n = 300000 // 1 ms at 300 MB/s
	lat := sim.Nano(20)
	for _, tc := range []struct {
		name string
		rate float64
		ser  sim.Time
	}{
		{"link-limited", 0, sim.Millisecond},
		{"source at 150 MB/s", 150e6, 2 * sim.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			r := line("l", 3, lat, 300)
			nw := mustNet(t, eng, routes{{0, 1}: r}, Config{})
			rec := sendAt(t, eng, nw, 0, 0, 1, n, tc.rate)
			run(t, eng)
			if want := 3*lat + tc.ser; rec.delivered != want {
				t.Errorf("tail at %v, want %v", rec.delivered, want)
			}
			if rec.sent != tc.ser {
				t.Errorf("left the source at %v, want %v", rec.sent, tc.ser)
			}
			for _, l := range r {
				if st := l.Stats(); st.Busy != tc.ser || st.Units != 1 || st.Bytes != n {
					t.Errorf("%s: %+v, want busy %v, 1 unit, %d bytes", l.Name(), st, tc.ser, n)
				}
			}
		})
	}
}

// TestTwoFlowsMeetingOnALinkTakeLonger: two messages whose routes share
// one link take longer than one alone; disjoint routes do not interfere.
func TestTwoFlowsMeetingOnALinkTakeLonger(t *testing.T) {
	const n = 300000
	lat := sim.Nano(20)
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"shared link", true}, {"disjoint", false}} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			a, b := line("a", 3, lat, 300), line("b", 3, lat, 300)
			if tc.shared {
				b[1] = a[1]
			}
			nw := mustNet(t, eng, routes{{0, 1}: a, {2, 3}: b}, Config{})
			one := 3*lat + sim.Millisecond
			r1 := sendAt(t, eng, nw, 0, 0, 1, n, 0)
			r2 := sendAt(t, eng, nw, 0, 2, 3, n, 0)
			run(t, eng)
			last := max(r1.delivered, r2.delivered)
			if tc.shared && last < one+sim.Millisecond {
				t.Errorf("two flows on one link: last tail %v, want at least %v", last, one+sim.Millisecond)
			}
			if !tc.shared && (r1.delivered != one || r2.delivered != one) {
				t.Errorf("disjoint flows: %v and %v, want %v", r1.delivered, r2.delivered, one)
			}
			if tc.shared && a[1].Stats().Waits != 1 {
				t.Errorf("shared link: %d waits, want 1", a[1].Stats().Waits)
			}
		})
	}
}

// TestLaterFlowUsesGap: a message whose head is held up before a link does
// not book that link while it waits elsewhere; a message sent later that
// reaches the link first uses the gap (no booking into the future).
func TestLaterFlowUsesGap(t *testing.T) {
	lat := sim.Nano(20)
	eng := sim.NewEngine(1)
	blocker := NewLink("blocker", lat, 300)
	shared := NewLink("shared", lat, 300)
	other := NewLink("other", lat, 300)
	nw := mustNet(t, eng, routes{
		{9, 9}: {blocker},         // keeps blocker busy 1 ms
		{0, 1}: {blocker, shared}, // the early flow: waits at blocker
		{2, 3}: {other, shared},   // the later flow
	}, Config{})
	sendAt(t, eng, nw, 0, 9, 9, 300000, 0)
	early := sendAt(t, eng, nw, sim.Nano(1), 0, 1, 3000, 0)
	later := sendAt(t, eng, nw, sim.Nano(100), 2, 3, 3000, 0)
	run(t, eng)
	if want := sim.Nano(100) + 2*lat + 10*sim.Microsecond; later.delivered != want {
		t.Errorf("later flow: tail at %v, want %v (through the gap)", later.delivered, want)
	}
	if early.delivered < sim.Millisecond {
		t.Errorf("early flow: tail at %v, want after the blocker's 1 ms", early.delivered)
	}
}

// TestWormholeHoldsLinksBehind: a head stalled before a busy wormhole link
// keeps the links behind it; before a buffered link it releases them as
// its tail passes.
func TestWormholeHoldsLinksBehind(t *testing.T) {
	lat := sim.Nano(20)
	for _, buffered := range []bool{false, true} {
		eng := sim.NewEngine(1)
		r := line("l", 3, lat, 300)
		r[2].Buffered = buffered
		nw := mustNet(t, eng, routes{{0, 1}: r, {5, 6}: {r[2]}, {7, 8}: {r[0]}}, Config{})
		sendAt(t, eng, nw, 0, 5, 6, 300000, 0) // r[2] busy 1 ms
		sendAt(t, eng, nw, 0, 0, 1, 3000, 0)   // stalls before r[2]
		probe := sendAt(t, eng, nw, sim.Micro(100), 7, 8, 3000, 0)
		run(t, eng)
		stalled := probe.delivered > sim.Millisecond
		if stalled == buffered {
			t.Errorf("buffered %v: a unit through the first link delivered at %v", buffered, probe.delivered)
		}
	}
}

// TestFastPathEqualsPacketModel: without contention the whole-message fast
// path and the packet model give the same times, headers counted alike,
// also when each link is a virtual channel of a physical channel.
func TestFastPathEqualsPacketModel(t *testing.T) {
	for _, phys := range []bool{false, true} {
		testFastPathEqualsPacketModel(t, phys)
	}
}

func testFastPathEqualsPacketModel(t *testing.T, phys bool) {
	for _, hops := range []int{1, 3, 7} {
		for _, size := range []int{0, 1, 63, 64, 65, 1000, 100003} {
			for _, rate := range []float64{0, 50e6} {
				var got [4][2]sim.Time
				for i, cfg := range []Config{
					{MTU: 64, Header: 16},                // whole messages
					{MTU: 64, Header: 16, Unit: 1000},    // units of 16 packets
					{MTU: 0, Header: 16, Unit: 1000},     // MTU 0: one header per unit
					{MTU: 64, Header: 16, Packets: true}, // packets
				} {
					packets := cfg.Packets
					eng := sim.NewEngine(1)
					r := line("l", hops, sim.Nano(30), 100)
					r[hops/2] = NewLink("l"+strconv.Itoa(hops/2), sim.Nano(30), 80) // one slower link
					if phys {
						for _, l := range r {
							l.Phys = NewChannel(l.Name())
						}
					}
					nw := mustNet(t, eng, routes{{0, 1}: r}, cfg)
					rec := sendAt(t, eng, nw, sim.Nano(5), 0, 1, size, rate)
					run(t, eng)
					got[i] = [2]sim.Time{rec.sent, rec.delivered}
					if packets && size > 64 && len(rec.arrivals) != (size+63)/64 {
						t.Errorf("%d bytes: %d packets arrived", size, len(rec.arrivals))
					}
				}
				if got[0] != got[3] || got[1] != got[3] {
					t.Errorf("phys %v, %d hops, %d bytes, rate %g: (sent, tail) whole %v, units %v, packets %v", phys, hops, size, rate, got[0], got[1], got[3])
				}
				if got[2][1] < got[2][0] {
					t.Errorf("%d hops, %d bytes, MTU 0 in units: delivered %v before sent %v", hops, size, got[2][1], got[2][0])
				}
			}
		}
	}
}

// TestRoundRobinAmongInputs: packets of two flows entering a link from two
// input ports alternate; a third flow's packets from the first port wait
// their port's turn (FIFO within a port).
func TestRoundRobinAmongInputs(t *testing.T) {
	eng := sim.NewEngine(1)
	in1, in2, out := NewLink("in1", 0, 100), NewLink("in2", 0, 100), NewLink("out", 0, 100)
	nw := mustNet(t, eng, routes{{1, 0}: {in1, out}, {2, 0}: {in2, out}}, Config{MTU: 100, Packets: true})
	var order []int
	for src := 1; src <= 2; src++ {
		r := newRecord(t, eng, 400)
		s := src
		rr := &orderRec{record: r, order: &order, src: s}
		eng.At(0, func() { nw.Send(Msg{Src: s, Bytes: 400}, rr) })
	}
	run(t, eng)
	if want := []int{1, 2, 1, 2, 1, 2, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("arrival order by source %v, want %v", order, want)
	}
}

type orderRec struct {
	*record
	order *[]int
	src   int
}

func (o *orderRec) Arrived(m *Message, off, n int) {
	*o.order = append(*o.order, o.src)
	o.record.Arrived(m, off, n)
}

// TestAcksOccupyReversePath: replies sent back over the reverse path delay
// a message travelling that way.
func TestAcksOccupyReversePath(t *testing.T) {
	lat := sim.Nano(20)
	for _, acks := range []bool{false, true} {
		eng := sim.NewEngine(1)
		fwd, rev := line("f", 2, lat, 100), line("r", 2, lat, 100)
		nw := mustNet(t, eng, routes{{0, 1}: fwd, {1, 0}: rev}, Config{Header: 16})
		for i := range 20 {
			r := sendAt(t, eng, nw, sim.Time(i)*sim.Micro(1), 0, 1, 64, 0)
			if acks {
				r.onDeliver = func() { nw.Send(Msg{Src: 1, Dst: 0}, newRecord(t, eng, 0)) }
			}
		}
		probe := sendAt(t, eng, nw, sim.Nano(5900), 1, 0, 1000, 0)
		run(t, eng)
		alone := sim.Nano(5900) + 2*lat + sim.TransferTime(1016, 100e6)
		if delayed := probe.delivered > alone; delayed != acks {
			t.Errorf("acks %v: reverse message at %v, alone %v", acks, probe.delivered, alone)
		}
	}
}

type nopHandler struct{ delivered int }

func (*nopHandler) Sent(*Message)                {}
func (*nopHandler) Arrived(*Message, int, int)   {}
func (h *nopHandler) Delivered(*Message)         { h.delivered++ }
func (*nopHandler) Failed(m *Message, err error) {}

// TestSteadyStateAllocatesNothing: once the pools are warm, sending
// messages of many packets through contending links allocates nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	eng := sim.NewEngine(1)
	a, b := line("a", 4, sim.Nano(20), 100), line("b", 4, sim.Nano(20), 100)
	b[2] = a[2]
	nw := mustNet(t, eng, routes{{0, 1}: a, {2, 3}: b}, Config{MTU: 64, Header: 16, Packets: true})
	h := &nopHandler{}
	round := func() {
		nw.Send(Msg{Src: 0, Dst: 1, Bytes: 6400}, h)
		nw.Send(Msg{Src: 2, Dst: 3, Bytes: 6400}, h)
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		round()
	}
	if allocs := testing.AllocsPerRun(20, round); allocs > 0 {
		t.Errorf("%.1f allocations per round of 200 packets, want 0", allocs)
	}
	if h.delivered != 2*26 {
		t.Errorf("%d messages delivered, want %d", h.delivered, 2*26)
	}
}

// quietRecord is a record that ignores Sent (a QuietSender).
type quietRecord struct{ *record }

func (q quietRecord) Sent(*Message) { q.t.Error("Sent called on a QuietSender") }
func (quietRecord) IgnoresSent()    {}

// TestQuietSenderSavesOnlyTheSentEvent: messages meeting on shared links
// are delivered at the same times whether their handlers want Sent or not;
// a QuietSender's message spends one event less and is never told Sent.
func TestQuietSenderSavesOnlyTheSentEvent(t *testing.T) {
	for _, cfg := range []Config{
		{MTU: 64, Header: 16, Packets: true},
		{MTU: 64, Header: 16, Unit: 256},
		{},
	} {
		type result struct {
			delivered []sim.Time
			events    uint64
		}
		runAll := func(quiet bool) result {
			eng := sim.NewEngine(1)
			a, b := line("a", 4, sim.Nano(20), 100), line("b", 4, sim.Nano(20), 100)
			b[2] = a[2]
			nw := mustNet(t, eng, routes{{0, 1}: a, {2, 3}: b}, cfg)
			var recs []*record
			for i := range 12 {
				r := newRecord(t, eng, 100+97*i)
				recs = append(recs, r)
				var h Handler = r
				if quiet {
					h = quietRecord{r}
				}
				src := 2 * (i % 2)
				eng.At(sim.Nano(float64(37*i)), func() { nw.Send(Msg{Src: src, Dst: src + 1, Bytes: len(r.src)}, h) })
			}
			run(t, eng)
			var res result
			for _, r := range recs {
				if !r.done || r.err != nil {
					t.Fatalf("%+v: message not delivered: %v", cfg, r.err)
				}
				res.delivered = append(res.delivered, r.delivered)
			}
			res.events = eng.Events()
			return res
		}
		loud, quiet := runAll(false), runAll(true)
		if !slices.Equal(loud.delivered, quiet.delivered) {
			t.Errorf("%+v: delivered at %v with Sent, %v without", cfg, loud.delivered, quiet.delivered)
		}
		if quiet.events != loud.events-12 {
			t.Errorf("%+v: %d events without Sent, want %d (one fewer per message)", cfg, quiet.events, loud.events-12)
		}
	}
}

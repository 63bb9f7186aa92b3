package net

import (
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// arrivalOrder sends one 16-packet message with the given jitter and seed
// and returns the order its packets arrived in.
func arrivalOrder(t *testing.T, seed uint64, jitter sim.Time) []int {
	eng := sim.NewEngine(seed)
	nw := mustNet(t, eng, routes{{0, 1}: line("l", 3, sim.Nano(20), 100)}, Config{MTU: 64, Header: 16, Packets: true, Jitter: jitter})
	rec := sendAt(t, eng, nw, 0, 0, 1, 16*64, 0)
	run(t, eng)
	if !rec.done || rec.err != nil {
		t.Fatalf("seed %d: not delivered (%v)", seed, rec.err)
	}
	return rec.arrivals
}

// TestReorderingIsSeeded: with jitter, packets arrive out of order (data
// intact: the record checks it), the same seed gives the same order, and
// some other seed gives another; without jitter they arrive in order.
func TestReorderingIsSeeded(t *testing.T) {
	inOrder := arrivalOrder(t, 1, 0)
	if !slices.IsSorted(inOrder) {
		t.Fatalf("no jitter: order %v", inOrder)
	}
	jitter := sim.Micro(5) // several packet times
	a, b := arrivalOrder(t, 1, jitter), arrivalOrder(t, 1, jitter)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, two orders: %v and %v", a, b)
	}
	if slices.IsSorted(a) {
		t.Errorf("seed 1 with jitter: packets in order %v", a)
	}
	differs := false
	for seed := uint64(2); seed < 6 && !differs; seed++ {
		differs = !slices.Equal(a, arrivalOrder(t, seed, jitter))
	}
	if !differs {
		t.Error("seeds 2 to 5 give the same order as seed 1")
	}
}

// TestCRCErrorIsRetried: a packet with a bad CRC is sent again over its
// link; the message arrives intact, later by the retry.
func TestCRCErrorIsRetried(t *testing.T) {
	lat := sim.Nano(20)
	retry := sim.Nano(100)
	var clean sim.Time
	for _, fault := range []bool{false, true} {
		eng := sim.NewEngine(1)
		r := line("l", 3, lat, 100)
		if fault {
			r[1].InjectCRC(1, retry)
		}
		nw := mustNet(t, eng, routes{{0, 1}: r}, Config{MTU: 64, Header: 16, Packets: true})
		rec := sendAt(t, eng, nw, 0, 0, 1, 640, 0)
		run(t, eng)
		if !rec.done || rec.err != nil || string(rec.dst) != string(rec.src) {
			t.Fatalf("fault %v: delivered %v, err %v", fault, rec.done, rec.err)
		}
		if !fault {
			clean = rec.delivered
			continue
		}
		if r[1].Stats().CRC != 1 {
			t.Errorf("%d CRC errors counted, want 1", r[1].Stats().CRC)
		}
		// The packet is retransmitted: its duration, the error's way
		// back and forth, and the retry delay.
		if want := clean + retry + sim.TransferTime(80, 100e6) + 2*lat; rec.delivered != want {
			t.Errorf("with a CRC error: delivered at %v, want %v (clean %v)", rec.delivered, want, clean)
		}
	}
}

// TestCRCErrorRateIsSeeded: random CRC errors come from the engine's
// generator: same seed, same count.
func TestCRCErrorRateIsSeeded(t *testing.T) {
	count := func(seed uint64) uint64 {
		eng := sim.NewEngine(seed)
		r := line("l", 2, sim.Nano(20), 100)
		if err := r[0].SetCRCErrorRate(0.2, sim.Nano(50)); err != nil {
			t.Fatal(err)
		}
		nw := mustNet(t, eng, routes{{0, 1}: r}, Config{MTU: 64, Header: 16, Packets: true})
		rec := sendAt(t, eng, nw, 0, 0, 1, 64*100, 0)
		run(t, eng)
		if !rec.done || string(rec.dst) != string(rec.src) {
			t.Fatal("not delivered intact")
		}
		return r[0].Stats().CRC
	}
	if a, b := count(7), count(7); a != b || a == 0 {
		t.Errorf("seed 7: %d and %d CRC errors", a, b)
	}
	if err := NewLink("x", 0, 1).SetCRCErrorRate(1.5, 0); err == nil {
		t.Error("rate 1.5 accepted")
	}
}

// TestLinkDownMidMessage: a link taken down while a message crosses it
// loses the packets on it; they are sent again on another route when the
// topology has one (the message arrives intact) and the message is
// reported failed when it has none: never silently lost.
func TestLinkDownMidMessage(t *testing.T) {
	for _, tc := range []struct {
		name     string
		packets  bool
		reroutes bool
	}{
		{"torus, packets", true, true},
		{"torus, whole message", false, true},
		{"ring, packets", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			var router Router
			var victim *Link
			src, dst := 0, 1
			if tc.reroutes {
				tor, err := NewTorus("t", [3]int{3, 3, 1}, sim.Nano(20), 100)
				if err != nil {
					t.Fatal(err)
				}
				router = torusRouter{tor}
				victim = tor.AppendRoute(nil, src, dst)[0]
			} else {
				r, err := NewRing("r", 1, 4, sim.Nano(20), 100)
				if err != nil {
					t.Fatal(err)
				}
				router = r
				victim = r.Out(0)
			}
			nw := mustNet(t, eng, router, Config{MTU: 256, Header: 16, Packets: tc.packets})
			rec := sendAt(t, eng, nw, 0, src, dst, 100000, 0) // 1 ms
			nw.LinkDown(victim, sim.Micro(300), sim.Micro(100))
			run(t, eng)
			if !rec.done {
				t.Fatal("message neither delivered nor reported failed")
			}
			if tc.reroutes {
				if rec.err != nil || string(rec.dst) != string(rec.src) {
					t.Fatalf("not delivered intact: %v", rec.err)
				}
				if nw.Stats().Resent == 0 || victim.Stats().Aborted == 0 {
					t.Errorf("stats %+v, victim %+v: nothing resent", nw.Stats(), victim.Stats())
				}
				return
			}
			if rec.err == nil || !strings.Contains(rec.err.Error(), "down") {
				t.Errorf("no route left: err %v, want a report naming the link down", rec.err)
			}
			if nw.Stats().Failed != 1 {
				t.Errorf("stats %+v: want 1 failed", nw.Stats())
			}
		})
	}
}

// TestLoseOnLinkDown: on a network that loses the units caught on a link
// going down (LoseOnLinkDown), a message crossing it is reported failed
// although the topology has another route, and nothing is resent.
func TestLoseOnLinkDown(t *testing.T) {
	eng := sim.NewEngine(1)
	tor, err := NewTorus("t", [3]int{3, 3, 1}, sim.Nano(20), 100)
	if err != nil {
		t.Fatal(err)
	}
	victim := tor.AppendRoute(nil, 0, 1)[0]
	nw := mustNet(t, eng, torusRouter{tor}, Config{MTU: 256, Header: 16, LoseOnLinkDown: true})
	rec := sendAt(t, eng, nw, 0, 0, 1, 100000, 0) // 1 ms
	nw.LinkDown(victim, sim.Micro(300), sim.Micro(100))
	run(t, eng)
	if !rec.done || rec.err == nil || !strings.Contains(rec.err.Error(), "lost") {
		t.Fatalf("done %v, err %v: want the message reported lost", rec.done, rec.err)
	}
	if st := nw.Stats(); st.Resent != 0 || st.Failed != 1 {
		t.Errorf("stats %+v: want nothing resent, 1 failed", st)
	}
}

type torusRouter struct{ t *Torus }

func (r torusRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	return r.t.Route(route, src, dst, class)
}

// TestRoutingChangedAtRunTime: a message sent after the torus's dimension
// order changes takes the new route.
func TestRoutingChangedAtRunTime(t *testing.T) {
	eng := sim.NewEngine(1)
	tor, err := NewTorus("t", [3]int{3, 3, 1}, sim.Nano(20), 100)
	if err != nil {
		t.Fatal(err)
	}
	nw := mustNet(t, eng, torusRouter{tor}, Config{})
	src, dst := tor.Node([3]int{0, 0, 0}), tor.Node([3]int{1, 1, 0})
	xFirst, yFirst := tor.Link(src, 0, 1), tor.Link(src, 1, 1)
	sendAt(t, eng, nw, 0, src, dst, 1000, 0)
	eng.At(sim.Micro(50), func() {
		if err := tor.SetOrder([3]int{1, 0, 2}); err != nil {
			t.Error(err)
		}
	})
	sendAt(t, eng, nw, sim.Micro(100), src, dst, 1000, 0)
	run(t, eng)
	if xFirst.Stats().Units != 1 || yFirst.Stats().Units != 1 {
		t.Errorf("x link %d units, y link %d units; want one each", xFirst.Stats().Units, yFirst.Stats().Units)
	}
	if err := tor.SetOrder([3]int{0, 0, 1}); err == nil {
		t.Error("order [0 0 1] accepted")
	}
}

// countingRouter counts the routes it is asked for.
type countingRouter struct {
	Router
	calls int
}

func (r *countingRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	r.calls++
	return r.Router.Route(route, src, dst, class)
}

// TestMessageRouteAskedAgainAfterLinkChange: the packets of one message
// take the route its first packet was given (the router is asked once)
// until a link goes down or up; then the next packet asks again and
// avoids the link that is down.
func TestMessageRouteAskedAgainAfterLinkChange(t *testing.T) {
	tor, err := NewTorus("t", [3]int{3, 3, 1}, sim.Nano(20), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		down      bool
		wantCalls int
	}{
		{"no change", false, 1},
		{"a link down and up again", true, 3}, // the first packet, after the down, after the up
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			r := &countingRouter{Router: torusRouter{tor}}
			nw := mustNet(t, eng, r, Config{MTU: 256, Header: 16, Packets: true})
			// 40 packets of 256 bytes at 100 MB/s: about 110 us.
			rec := sendAt(t, eng, nw, 0, 0, 4, 40*256, 0)
			victim := tor.AppendRoute(nil, 0, 4)[0]
			if tc.down {
				// Down for 20 us from 30 us: the packet on it is sent
				// again, and the packets after it go around.
				nw.LinkDown(victim, sim.Micro(30), sim.Micro(20))
			}
			run(t, eng)
			if !rec.done || rec.err != nil {
				t.Fatalf("not delivered: %v", rec.err)
			}
			if r.calls != tc.wantCalls {
				t.Errorf("router asked %d times (%d units resent), want %d", r.calls, nw.Stats().Resent, tc.wantCalls)
			}
		})
	}
}

package net

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestRingBypassPriority: at a node's output, traffic passing along the
// ring (from the bypass FIFO) goes before the node's own, even when the
// node's own packets asked first.
func TestRingBypassPriority(t *testing.T) {
	for _, tc := range []struct {
		policy    Policy
		passFirst bool
	}{{PassThroughFirst, true}, {RoundRobin, false}} {
		eng := sim.NewEngine(1)
		r, err := NewRing("r", 1, 4, sim.Nano(10), 100)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			r.Out(i).Policy = tc.policy
		}
		nw := mustNet(t, eng, r, Config{MTU: 100, Packets: true})
		// Node 1 sends 3 packets to node 2 (its own output, out(1)).
		// Node 0 sends 3 packets to node 2: they pass node 1.
		own := sendAt(t, eng, nw, 0, 1, 2, 300, 0)
		passing := sendAt(t, eng, nw, sim.Nano(500), 0, 2, 300, 0)
		// out(1) is busy with own's packets (1 us each) from 0; passing
		// packets reach it at 1.51 us and later, when own's next packet
		// is already waiting.
		run(t, eng)
		if got := passing.delivered < own.delivered; got != tc.passFirst {
			t.Errorf("policy %v: passing traffic done at %v, own at %v; passing first %v, want %v",
				tc.policy, passing.delivered, own.delivered, got, tc.passFirst)
		}
	}
}

// TestRingTorusRoutes: every pair of a 3x4 torus of rings has a route
// ending at the destination, through the rings the order says; changing
// the order at run time changes the routes; with a link down the other
// order is taken.
func TestRingTorusRoutes(t *testing.T) {
	rt, err := NewRingTorus("sci", 3, 4, sim.Nano(10), 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []RingOrder{XFirst, YFirst} {
		rt.SetOrder(o)
		for src := 0; src < 12; src++ {
			for dst := 0; dst < 12; dst++ {
				route, err := rt.Route(nil, src, dst, 0)
				if err != nil {
					t.Fatal(err)
				}
				sx, sy, dx, dy := src%3, src/3, dst%3, dst/3
				want := (dx-sx+3)%3 + (dy-sy+4)%4
				if len(route) != want {
					t.Errorf("order %d, %d->%d: %d links, want %d", o, src, dst, len(route), want)
				}
				if len(route) > 0 && sx != dx && sy != dy {
					first := int(route[0].Ring)
					if horiz := first == 1+sy; horiz != (o == XFirst) {
						t.Errorf("order %d, %d->%d: starts on ring %d", o, src, dst, first)
					}
				}
			}
		}
	}
	rt.SetOrder(XFirst)
	rt.Row(0).Out(0).down = true
	route, err := rt.Route(nil, 0, 4, 0) // (0,0) -> (1,1)
	if err != nil || route[0] != rt.Col(0).Out(0) {
		t.Errorf("with row 0's first link down: route starts %v (%v), want the column ring", route, err)
	}
	rt.Col(0).Out(0).down = true
	if _, err := rt.Route(nil, 0, 4, 0); err == nil {
		t.Error("both ways down: no error")
	}
}

// TestMultistageRoutesEveryPair: every pair of nodes has a route of one
// link per stage plus the way in, ending at the destination's output.
func TestMultistageRoutesEveryPair(t *testing.T) {
	for _, tc := range []struct{ nodes, stages int }{{4, 1}, {16, 2}, {64, 3}, {20, 3}, {128, 4}} {
		sw, err := NewMultistage("sp", tc.nodes, 4, sim.Nano(125), 150)
		if err != nil {
			t.Fatal(err)
		}
		if sw.Stages() != tc.stages {
			t.Errorf("%d nodes: %d stages, want %d", tc.nodes, sw.Stages(), tc.stages)
		}
		for src := 0; src < tc.nodes; src++ {
			for dst := 0; dst < tc.nodes; dst++ {
				route, err := sw.Route(nil, src, dst, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(route) != tc.stages+1 || route[0] != sw.In(src) || route[len(route)-1] != sw.Out(tc.stages-1, dst) {
					t.Fatalf("%d nodes, %d->%d: route %d links, ends %s", tc.nodes, src, dst, len(route), route[len(route)-1].Name())
				}
			}
		}
	}
}

// TestMultistageContendsAtSharedOutput: two flows to one node meet at its
// output and take longer than one; two flows to nodes on different
// outputs of the same chips do not.
func TestMultistageContendsAtSharedOutput(t *testing.T) {
	run2 := func(dst1, dst2 int) sim.Time {
		eng := sim.NewEngine(1)
		sw, err := NewMultistage("sp", 16, 4, sim.Nano(125), 150)
		if err != nil {
			t.Fatal(err)
		}
		nw := mustNet(t, eng, sw, Config{MTU: 1024, Header: 16, Packets: true})
		a := sendAt(t, eng, nw, 0, 0, dst1, 64<<10, 0)
		b := sendAt(t, eng, nw, 0, 1, dst2, 64<<10, 0)
		run(t, eng)
		return max(a.delivered, b.delivered)
	}
	eng := sim.NewEngine(1)
	sw, _ := NewMultistage("sp", 16, 4, sim.Nano(125), 150)
	nw := mustNet(t, eng, sw, Config{MTU: 1024, Header: 16, Packets: true})
	alone := sendAt(t, eng, nw, 0, 0, 5, 64<<10, 0)
	run(t, eng)
	shared, apart := run2(5, 5), run2(5, 6)
	if apart != alone.delivered {
		t.Errorf("flows to different outputs: %v, one alone %v", apart, alone.delivered)
	}
	if shared < alone.delivered*19/10 {
		t.Errorf("two flows into one output: %v, want about twice one alone (%v)", shared, alone.delivered)
	}
}

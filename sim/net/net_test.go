package net

import (
	"math"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

func TestShape3D(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		want  [3]int
	}{
		{1, [3]int{1, 1, 1}}, {2, [3]int{2, 1, 1}}, {8, [3]int{2, 2, 2}}, {16, [3]int{4, 2, 2}},
		{64, [3]int{4, 4, 4}}, {1024, [3]int{16, 8, 8}}, {7, [3]int{7, 1, 1}}, {12, [3]int{3, 2, 2}},
	} {
		if got := Shape3D(tc.nodes); got != tc.want {
			t.Errorf("Shape3D(%d) = %v, want %v", tc.nodes, got, tc.want)
		}
	}
}

func TestTorusRoutes(t *testing.T) {
	tor, err := NewTorus("t", [3]int{4, 4, 4}, sim.Nano(10), 300)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, dst [3]int
		hops     int
	}{
		{[3]int{0, 0, 0}, [3]int{1, 0, 0}, 1},
		{[3]int{0, 0, 0}, [3]int{3, 0, 0}, 1}, // wraps around
		{[3]int{0, 0, 0}, [3]int{2, 2, 2}, 6},
		{[3]int{1, 3, 0}, [3]int{3, 0, 1}, 4},
		{[3]int{2, 2, 2}, [3]int{2, 2, 2}, 0},
	} {
		a, b := tor.Node(tc.src), tor.Node(tc.dst)
		route := tor.AppendRoute(nil, a, b)
		if len(route) != tc.hops || tor.Hops(a, b) != tc.hops {
			t.Errorf("%v->%v: %d links, Hops %d, want %d", tc.src, tc.dst, len(route), tor.Hops(a, b), tc.hops)
		}
		// Dimension order: x links first, then y, then z; the route
		// must be connected and end at the destination.
		c := tc.src
		lastDim := 0
		for _, l := range route {
			found := false
			for dim := 0; dim < 3 && !found; dim++ {
				for _, dir := range []int{1, -1} {
					if tor.LinkVC(tor.Node(c), dim, dir, 0) == l || tor.LinkVC(tor.Node(c), dim, dir, 1) == l {
						if dim < lastDim {
							t.Errorf("%v->%v: route not in dimension order", tc.src, tc.dst)
						}
						lastDim = dim
						c[dim] = (c[dim] + dir + 4) % 4
						found = true
						break
					}
				}
			}
			if !found {
				t.Fatalf("%v->%v: link %s does not leave %v", tc.src, tc.dst, l.Name(), c)
			}
		}
		if c != tc.dst {
			t.Errorf("%v->%v: route ends at %v", tc.src, tc.dst, c)
		}
	}
}

func TestNewTorusRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dims    [3]int
		latency sim.Time
		mbps    float64
	}{
		{"zero dimension", [3]int{0, 1, 1}, 0, 300},
		{"too many nodes", [3]int{1 << 10, 1 << 10, 1 << 10}, 0, 300},
		{"huge dimension", [3]int{1 << 40, 1, 1}, 0, 300},
		{"negative latency", [3]int{2, 2, 2}, -1, 300},
		{"NaN bandwidth", [3]int{2, 2, 2}, 0, math.NaN()},
		{"infinite bandwidth", [3]int{2, 2, 2}, 0, math.Inf(1)},
		{"negative bandwidth", [3]int{2, 2, 2}, 0, -300},
	} {
		if _, err := NewTorus("t", tc.dims, tc.latency, tc.mbps); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestTorusDatelineAndClasses: a route starts each ring on virtual channel
// 0 and moves to 1 when it crosses the ring's wraparound; each class of
// traffic has its own channels.
func TestTorusDatelineAndClasses(t *testing.T) {
	tor, err := NewTorusClasses("t", [3]int{4, 1, 1}, sim.Nano(10), 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	for class := 0; class < 2; class++ {
		route, err := tor.Route(nil, 2, 0, class) // 2 -> 3 -> 0: a tie, the + way
		if err != nil {
			t.Fatal(err)
		}
		want := []*Link{tor.LinkClassVC(2, 0, 1, class, 0), tor.LinkClassVC(3, 0, 1, class, 1)}
		if len(route) != 2 || route[0] != want[0] || route[1] != want[1] {
			t.Errorf("class %d: route %v, want %s then %s", class, route, want[0].Name(), want[1].Name())
		}
	}
	eng := sim.NewEngine(1)
	nw := mustNet(t, eng, torusRouter{tor}, Config{})
	sendAt(t, eng, nw, 0, 2, 0, 300, 0)
	run(t, eng)
	if st := tor.ChannelStats(3, 0, 1); st.Units != 1 || st.Bytes != 300 || st.Busy != sim.Microsecond {
		t.Errorf("channel 3+x: %+v, want the one message (both virtual channels summed)", st)
	}
	if _, err := tor.Route(nil, 0, 1, 2); err == nil {
		t.Error("class 2 of 2: no error")
	}
	if _, err := NewTorusClasses("t", [3]int{2, 2, 2}, 0, 300, 0); err == nil {
		t.Error("0 classes accepted")
	}
}

// TestTorusRouteRemembered: Route gives, for every pair and class, the
// route appendRoute computes in the torus's order, whether it computes it
// or remembers it (asked twice; entries collide on a torus this size),
// and a new dimension order is not served a remembered route of the old.
func TestTorusRouteRemembered(t *testing.T) {
	tor, err := NewTorusClasses("t", [3]int{5, 4, 3}, sim.Nano(10), 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][3]int{{0, 1, 2}, {2, 0, 1}} {
		if err := tor.SetOrder(order); err != nil {
			t.Fatal(err)
		}
		for pass := range 2 {
			for a := range tor.Nodes() {
				for b := range tor.Nodes() {
					class := (a + b) % 2
					got, err := tor.Route(nil, a, b, class)
					if err != nil {
						t.Fatal(err)
					}
					if want := tor.appendRoute(nil, a, b, class, order, 0); !slices.Equal(got, want) {
						t.Fatalf("order %v pass %d %d->%d: route %v, want %v", order, pass, a, b, got, want)
					}
				}
			}
		}
	}
}

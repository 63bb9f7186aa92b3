package net

import (
	"math"
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
					if tor.Link(tor.Node(c), dim, dir) == l {
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
				t.Fatalf("%v->%v: link %s does not leave %v", tc.src, tc.dst, l.Name, c)
			}
		}
		if c != tc.dst {
			t.Errorf("%v->%v: route ends at %v", tc.src, tc.dst, c)
		}
	}
}

func TestReserveCutThroughAndContention(t *testing.T) {
	const n = 300000 // 1 ms at 300 MB/s
	lat := sim.Nano(20)
	mk := func() []*Link {
		return []*Link{NewLink("a", lat, 300), NewLink("b", lat, 300), NewLink("c", lat, 300)}
	}
	// One message: head after 3 latencies, tail one serialization later.
	r := mk()
	one := Reserve(r, 0, n, 0)
	if want := 3*lat + sim.Millisecond; one.Tail != want || one.Head != 3*lat {
		t.Fatalf("single message: head %v tail %v, want head %v tail %v", one.Head, one.Tail, 3*lat, want)
	}
	// Two flows sharing link b take longer than one: the second waits for
	// the first's tail.
	r = mk()
	other := []*Link{NewLink("x", lat, 300), r[1], NewLink("y", lat, 300)}
	first := Reserve(r, 0, n, 0)
	second := Reserve(other, 0, n, 0)
	if first.Tail != one.Tail {
		t.Errorf("first flow: tail %v, want %v", first.Tail, one.Tail)
	}
	if second.Tail < first.Tail+sim.Millisecond-lat {
		t.Errorf("two flows on one link: second tail %v, want about %v", second.Tail, first.Tail+sim.Millisecond)
	}
	// Disjoint flows do not interfere.
	r1, r2 := mk(), mk()
	a, b := Reserve(r1, 0, n, 0), Reserve(r2, 0, n, 0)
	if a.Tail != b.Tail {
		t.Errorf("disjoint flows: %v vs %v", a.Tail, b.Tail)
	}
	// A slower source stretches the occupancy.
	r = mk()
	slow := Reserve(r, 0, n, 150e6)
	if want := 3*lat + 2*sim.Millisecond; slow.Tail != want {
		t.Errorf("source at 150 MB/s: tail %v, want %v", slow.Tail, want)
	}
	// Wormhole blocking: a message blocked at link c holds link a.
	r = mk()
	Reserve([]*Link{r[2]}, 0, n, 0) // c busy for 1 ms
	blocked := Reserve(r, 0, 1000, 0)
	if blocked.Head < sim.Millisecond {
		t.Errorf("blocked head at %v, want after 1ms", blocked.Head)
	}
	if r[0].FreeAt() < sim.Millisecond {
		t.Errorf("link a free at %v while the message behind it was blocked until 1ms", r[0].FreeAt())
	}
	if blocked.Left+lat != r[0].FreeAt() {
		t.Errorf("left %v, want first link free %v", blocked.Left, r[0].FreeAt())
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

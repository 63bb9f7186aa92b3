package net

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Ring is an SCI ringlet: n nodes, each with one output link to the next
// node. A node's output carries the traffic passing through it (from its
// bypass FIFO) and its own; passing traffic goes first (PassThroughFirst)
// and waits in the bypass FIFO, not on the links behind it (Buffered).
// Traffic goes one way round (IEEE 1596 SCI ringlets are unidirectional).
type Ring struct {
	out []*Link // out[i]: node i to node i+1
}

// NewRing builds a ringlet of n nodes whose links have the given latency
// and bandwidth in MB/s; id names the ring (distinct per ring of a
// network: PassThroughFirst tells passing traffic by it).
func NewRing(name string, id, n int, latency sim.Time, mbps float64) (*Ring, error) {
	if n < 2 || n > MaxNodes {
		return nil, fmt.Errorf("ring %s: %d nodes, want 2 to %d", name, n, MaxNodes)
	}
	if id == 0 {
		return nil, fmt.Errorf("ring %s: id 0 is reserved for links on no ring", name)
	}
	r := &Ring{out: make([]*Link, n)}
	for i := range r.out {
		l := NewLink(fmt.Sprintf("%s.%d->%d", name, i, (i+1)%n), latency, mbps)
		l.Policy, l.Buffered, l.Ring = PassThroughFirst, true, int32(id)
		r.out[i] = l
	}
	return r, nil
}

// Nodes is the number of nodes on the ring.
func (r *Ring) Nodes() int { return len(r.out) }

// Out is node i's output link.
func (r *Ring) Out(i int) *Link { return r.out[i] }

// AppendRoute appends the links from node src to node dst, the way round.
func (r *Ring) AppendRoute(route []*Link, src, dst int) []*Link {
	n := len(r.out)
	for i := src; i != dst; i = (i + 1) % n {
		route = append(route, r.out[i])
	}
	return route
}

// Route is AppendRoute, failing when a link on the way is down (a ring has
// no other way).
func (r *Ring) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	base := len(route)
	route = r.AppendRoute(route, src, dst)
	if !up(route[base:]) {
		return route[:base], fmt.Errorf("ring: the way from node %d to node %d crosses a link that is down", src, dst)
	}
	return route, nil
}

// RingOrder is the order in which a route of a RingTorus takes its rings.
type RingOrder uint8

const (
	// XFirst: along the horizontal ring to the destination's column, then
	// along the vertical ring.
	XFirst RingOrder = iota
	// YFirst: vertical ring first, then horizontal.
	YFirst
)

// RingTorus is a 2D torus of SCI rings (a Dolphin/Scali cluster): w x h
// nodes, each on one horizontal ringlet (its row) and one vertical ringlet
// (its column); a node's adapter switches traffic between its two rings.
// Node (x, y) is number x + w*y.
type RingTorus struct {
	w, h  int
	rows  []*Ring
	cols  []*Ring
	order RingOrder
}

// NewRingTorus builds a w x h torus of rings whose links have the given
// latency and bandwidth.
func NewRingTorus(name string, w, h int, latency sim.Time, mbps float64) (*RingTorus, error) {
	if w < 2 || h < 2 || w*h > MaxNodes {
		return nil, fmt.Errorf("ring torus %s: %dx%d nodes, want at least 2x2 and at most %d", name, w, h, MaxNodes)
	}
	t := &RingTorus{w: w, h: h}
	for y := 0; y < h; y++ {
		r, err := NewRing(fmt.Sprintf("%s.row%d", name, y), 1+y, w, latency, mbps)
		if err != nil {
			return nil, err
		}
		t.rows = append(t.rows, r)
	}
	for x := 0; x < w; x++ {
		r, err := NewRing(fmt.Sprintf("%s.col%d", name, x), 1+h+x, h, latency, mbps)
		if err != nil {
			return nil, err
		}
		t.cols = append(t.cols, r)
	}
	return t, nil
}

// Nodes is the number of nodes.
func (t *RingTorus) Nodes() int { return t.w * t.h }

// Row is horizontal ring y; Col is vertical ring x.
func (t *RingTorus) Row(y int) *Ring { return t.rows[y] }

// Col is vertical ring x.
func (t *RingTorus) Col(x int) *Ring { return t.cols[x] }

// SetOrder changes the routing at run time: routes computed from now on
// take their rings in the given order.
func (t *RingTorus) SetOrder(o RingOrder) { t.order = o }

// AppendRoute appends the route from node src to node dst in the current
// order.
func (t *RingTorus) AppendRoute(route []*Link, src, dst int) []*Link {
	return t.appendRoute(route, src, dst, t.order)
}

func (t *RingTorus) appendRoute(route []*Link, src, dst int, o RingOrder) []*Link {
	sx, sy, dx, dy := src%t.w, src/t.w, dst%t.w, dst/t.w
	if o == XFirst {
		route = t.rows[sy].AppendRoute(route, sx, dx)
		return t.cols[dx].AppendRoute(route, sy, dy)
	}
	route = t.cols[sx].AppendRoute(route, sy, dy)
	return t.rows[dy].AppendRoute(route, sx, dx)
}

// Route appends the route in the current order, or in the other order
// when a link of the first is down; it fails when both cross a link that
// is down.
func (t *RingTorus) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	base := len(route)
	for _, o := range [2]RingOrder{t.order, 1 - t.order} {
		route = t.appendRoute(route[:base], src, dst, o)
		if up(route[base:]) {
			return route, nil
		}
	}
	return route[:base], fmt.Errorf("ring torus: every route from node %d to node %d crosses a link that is down", src, dst)
}

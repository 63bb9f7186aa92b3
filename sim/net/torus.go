package net

import (
	"fmt"
	"math"

	"github.com/msgsim/msgsim/sim"
)

// MaxTorusNodes bounds the size of a torus NewTorus builds (the largest
// machines modelled have 1,024 router nodes; the bound keeps a bad shape
// from allocating without limit or overflowing).
const MaxTorusNodes = 1 << 16

// Torus is a 3D torus of nodes (a dimension of size 1 has no links, so
// rings and 2D tori are special cases). Each node has, per dimension, a link
// in the + direction and one in the - direction to its neighbours.
type Torus struct {
	dims  [3]int
	n     int
	links []*Link // node*6 + dim*2 + dir (0: +, 1: -); nil in a dimension of size 1
}

// NewTorus builds a torus of dims[0]*dims[1]*dims[2] nodes whose links all
// have the given head latency and bandwidth. name prefixes link names.
// It fails on a dimension smaller than 1, more than MaxTorusNodes nodes, a
// negative latency, or a bandwidth that is negative or not finite.
func NewTorus(name string, dims [3]int, latency sim.Time, mbps float64) (*Torus, error) {
	switch {
	case latency < 0:
		return nil, fmt.Errorf("torus %s: negative link latency %v", name, latency)
	case math.IsNaN(mbps) || math.IsInf(mbps, 0) || mbps < 0:
		return nil, fmt.Errorf("torus %s: link bandwidth %g MB/s must be a finite number >= 0", name, mbps)
	}
	n := 1
	for i, d := range dims {
		if d < 1 {
			return nil, fmt.Errorf("torus %s: dimension %d has size %d, must be at least 1", name, i, d)
		}
		if d > MaxTorusNodes || n*d > MaxTorusNodes {
			return nil, fmt.Errorf("torus %s: shape %v has more than %d nodes", name, dims, MaxTorusNodes)
		}
		n *= d
	}
	t := &Torus{dims: dims, n: n, links: make([]*Link, n*6)}
	for node := 0; node < n; node++ {
		c := t.Coord(node)
		for dim := 0; dim < 3; dim++ {
			if dims[dim] == 1 {
				continue
			}
			for dir, sign := range [2]string{"+", "-"} {
				t.links[node*6+dim*2+dir] = NewLink(fmt.Sprintf("%s%v%s%c", name, c, sign, "xyz"[dim]), latency, mbps)
			}
		}
	}
	return t, nil
}

// Dims is the torus shape.
func (t *Torus) Dims() [3]int { return t.dims }

// Nodes is the number of nodes.
func (t *Torus) Nodes() int { return t.n }

// Coord returns the coordinates of node (x varies fastest).
func (t *Torus) Coord(node int) [3]int {
	x := node % t.dims[0]
	y := node / t.dims[0] % t.dims[1]
	z := node / (t.dims[0] * t.dims[1])
	return [3]int{x, y, z}
}

// Node returns the node at coordinates c.
func (t *Torus) Node(c [3]int) int { return c[0] + t.dims[0]*(c[1]+t.dims[1]*c[2]) }

// Link is the link leaving node in dimension dim, direction dir (+1 or -1),
// or nil in a dimension of size 1.
func (t *Torus) Link(node, dim, dir int) *Link {
	d := 0
	if dir < 0 {
		d = 1
	}
	return t.links[node*6+dim*2+d]
}

// step is the signed number of hops from a to b around a ring of size k,
// taking the shorter way (the + way on a tie).
func step(a, b, k int) int {
	d := ((b-a)%k + k) % k
	if d > k-d {
		return d - k
	}
	return d
}

// Hops is the number of links between nodes a and b.
func (t *Torus) Hops(a, b int) int {
	ca, cb := t.Coord(a), t.Coord(b)
	h := 0
	for dim := 0; dim < 3; dim++ {
		s := step(ca[dim], cb[dim], t.dims[dim])
		if s < 0 {
			s = -s
		}
		h += s
	}
	return h
}

// AppendRoute appends to route the links from node src to node dst under
// dimension-order routing (x, then y, then z; the shorter way around each
// ring) and returns it. It allocates nothing when route has room.
func (t *Torus) AppendRoute(route []*Link, src, dst int) []*Link {
	c := t.Coord(src)
	cd := t.Coord(dst)
	for dim := 0; dim < 3; dim++ {
		k := t.dims[dim]
		s := step(c[dim], cd[dim], k)
		dir := 1
		if s < 0 {
			dir, s = -1, -s
		}
		for ; s > 0; s-- {
			route = append(route, t.Link(t.Node(c), dim, dir))
			c[dim] = ((c[dim]+dir)%k + k) % k
		}
	}
	return route
}

// Shape3D returns the most nearly cubic shape x >= y >= z with x*y*z = nodes
// (a prime number of nodes gives a ring).
func Shape3D(nodes int) [3]int {
	best := [3]int{nodes, 1, 1}
	if nodes < 1 {
		return [3]int{1, 1, 1}
	}
	for z := 1; z*z*z <= nodes; z++ {
		if nodes%z != 0 {
			continue
		}
		rest := nodes / z
		for y := z; y*y <= rest; y++ {
			if rest%y != 0 {
				continue
			}
			x := rest / y
			if x-z < best[0]-best[2] {
				best = [3]int{x, y, z}
			}
		}
	}
	return best
}

package net

import (
	"fmt"
	"math"
	"strconv"

	"github.com/msgsim/msgsim/sim"
)

// MaxNodes bounds the size of the rings, ring tori and multistage
// switches this package builds, which build every link up front (the
// largest real machines modelled have 1,024 nodes; the bound keeps a bad
// shape from allocating without limit or overflowing).
const MaxNodes = 1 << 16

// MaxTorusNodes bounds the size of a torus NewTorus builds (the largest
// real machines modelled have 1,024 router nodes; what-if studies go to
// 524,288, a 1,048,576-PE T3D-like machine). The bound keeps a bad shape
// from allocating without limit or overflowing. A torus holds one pointer
// per virtual channel and per physical channel up front; the links
// themselves are built when first used, so memory follows the links
// traffic touches.
const MaxTorusNodes = 1 << 22

// Torus is a 3D torus of nodes (a dimension of size 1 has no links, so
// rings and 2D tori are special cases). Each node has, per dimension, a
// channel in the + direction and one in the - direction to its neighbours,
// each with two virtual channels: a route starts a dimension on virtual
// channel 0 and moves to 1 when it crosses the dimension's wraparound (the
// dateline), which keeps wormhole routing free of deadlock (Dally and Seitz;
// the T3D's scheme). A torus may carry several classes of traffic (virtual
// networks, e.g. requests and responses), each with its own pair of
// virtual channels. Each virtual channel is a Link with its own buffer and
// wormhole holding, so a head blocked on one never blocks another; all the
// virtual channels of a channel share its one physical Channel, so their
// bytes take turns on the wire (see Channel).
type Torus struct {
	name    string
	dims    [3]int
	n       int
	classes int
	latency sim.Time
	mbps    float64
	// links and chans are built when first asked for (a route crossing
	// them, an accessor), so a large torus costs little more than the
	// links its traffic touches.
	// Each holds, for every virtual or physical channel, 1 + where it is
	// in its slab (0: not built; never built in a dimension of size 1):
	// 4 bytes per channel that the collector never scans, and links and
	// channels allocated in blocks.
	links    []uint32 // ((node*3 + dim)*2 + dir)*2*classes + class*2 + vc (dir 0: +, 1: -)
	chans    []uint32 // (node*3 + dim)*2 + dir: the physical channels
	linkSlab slab[Link]
	chanSlab slab[Channel]
	order    [3]int // dimension order of routes
	// linkNames and chanNames name links and channels by their index in
	// links and chans, when asked for.
	chanNames *Names
	linkKind  *LinkKind // its links' latency, rate and names
}

// NewTorus builds a torus of dims[0]*dims[1]*dims[2] nodes whose links all
// have the given head latency and bandwidth, with one class of traffic.
// name prefixes link names. It fails on a dimension smaller than 1, more
// than MaxTorusNodes nodes, a negative latency, or a bandwidth that is
// negative or not finite.
func NewTorus(name string, dims [3]int, latency sim.Time, mbps float64) (*Torus, error) {
	return NewTorusClasses(name, dims, latency, mbps, 1)
}

// NewTorusClasses is NewTorus with classes virtual networks (1 to 4).
func NewTorusClasses(name string, dims [3]int, latency sim.Time, mbps float64, classes int) (*Torus, error) {
	switch {
	case classes < 1 || classes > 4:
		return nil, fmt.Errorf("torus %s: %d classes of traffic, want 1 to 4", name, classes)
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
	t := &Torus{name: name, dims: dims, n: n, classes: classes, latency: latency, mbps: mbps,
		links: make([]uint32, n*12*classes), chans: make([]uint32, n*6), order: [3]int{0, 1, 2}}
	t.linkKind, t.chanNames = NewLinkKind(NewNames(t.linkName), latency, mbps), NewNames(t.channelName)
	return t, nil
}

// channel returns the physical channel leaving node in dimension dim,
// direction d (0: +, 1: -), building it on first use; nil in a dimension
// of size 1.
func (t *Torus) channel(node, dim, d int) *Channel {
	if t.dims[dim] == 1 {
		return nil
	}
	i := (node*3+dim)*2 + d
	if k := t.chans[i]; k != 0 {
		return t.chanSlab.at(k - 1)
	}
	k, ch := t.chanSlab.alloc()
	*ch = Channel{names: t.chanNames, id: uint32(i)} // i < MaxTorusNodes*6
	t.chans[i] = k + 1
	return ch
}

// channelName is the name of channel chans[i]: fmt's "%s%v%c%c" of the
// torus's name, the coordinates, sign and dimension ("t3d[1 0 2]+x").
func (t *Torus) channelName(i uint32) string {
	d, dim, node := int(i%2), int(i/2%3), int(i/6)
	c := t.Coord(node)
	var num [32]byte // "[x y z]+x": coordinates of up to 7 digits fit
	b := append(strconv.AppendInt(append(num[:0], '['), int64(c[0]), 10), ' ')
	b = append(strconv.AppendInt(b, int64(c[1]), 10), ' ')
	b = append(strconv.AppendInt(b, int64(c[2]), 10), ']', "+-"[d], "xyz"[dim])
	return t.name + string(b)
}

// linkName is the name of link links[i]: its channel's name and its class
// and virtual channel ("t3d[1 0 2]+x.c0vc1").
func (t *Torus) linkName(i uint32) string {
	vc, class, ch := i%2, int(i/2)%t.classes, i/uint32(2*t.classes)
	return t.channelName(ch) + ".c" + strconv.Itoa(class) + "vc" + strconv.Itoa(int(vc))
}

// link returns a virtual channel (see index), building it and its
// physical channel on first use; nil in a dimension of size 1.
func (t *Torus) link(node, dim, d, class, vc int) *Link {
	i := t.index(node, dim, d, class, vc)
	if k := t.links[i]; k != 0 {
		return t.linkSlab.at(k - 1)
	}
	return t.build(i, node, dim, d)
}

// build builds virtual channel links[i] of the channel leaving node in
// dimension dim, direction d.
func (t *Torus) build(i, node, dim, d int) *Link {
	ch := t.channel(node, dim, d)
	if ch == nil {
		return nil
	}
	k, l := t.linkSlab.alloc()
	*l = Link{kind: t.linkKind, id: uint32(i), Phys: ch} // i < MaxTorusNodes*48
	t.links[i] = k + 1
	return l
}

// SetOrder changes the dimension order of routes (a permutation of 0, 1,
// 2; x, y, z is the default) at run time: routes computed from now on
// follow it. Only x, y, z order is free of deadlock with wormhole links.
func (t *Torus) SetOrder(order [3]int) error {
	seen := [3]bool{}
	for _, d := range order {
		if d < 0 || d > 2 || seen[d] {
			return fmt.Errorf("torus: dimension order %v is not a permutation of 0, 1, 2", order)
		}
		seen[d] = true
	}
	t.order = order
	return nil
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
// It is the channel's virtual channel 0.
func (t *Torus) Link(node, dim, dir int) *Link { return t.LinkVC(node, dim, dir, 0) }

// LinkVC is virtual channel vc (0 or 1) of class 0 of the channel leaving
// node in dimension dim, direction dir.
func (t *Torus) LinkVC(node, dim, dir, vc int) *Link { return t.LinkClassVC(node, dim, dir, 0, vc) }

// LinkClassVC is virtual channel vc of class class of the channel leaving
// node in dimension dim, direction dir (+1 or -1).
func (t *Torus) LinkClassVC(node, dim, dir, class, vc int) *Link {
	d := 0
	if dir < 0 {
		d = 1
	}
	return t.link(node, dim, d, class, vc)
}

func (t *Torus) index(node, dim, d, class, vc int) int {
	return ((node*3+dim)*2+d)*2*t.classes + class*2 + vc
}

// Channel is the physical channel leaving node in dimension dim, direction
// dir (+1 or -1), or nil in a dimension of size 1.
func (t *Torus) Channel(node, dim, dir int) *Channel {
	d := 0
	if dir < 0 {
		d = 1
	}
	return t.channel(node, dim, d)
}

// ChannelStats sums the statistics of every virtual channel of the
// physical channel leaving node in dimension dim, direction dir (+1 or -1);
// MaxQueue is the largest of theirs. Busy is the time bytes flowed over
// the wire (the physical channel's), not the time its virtual channels
// were held.
func (t *Torus) ChannelStats(node, dim, dir int) LinkStats {
	var s LinkStats
	d := 0
	if dir < 0 {
		d = 1
	}
	if k := t.chans[(node*3+dim)*2+d]; k != 0 {
		s.Busy = t.chanSlab.at(k - 1).Stats().Busy
	}
	for class := 0; class < t.classes; class++ {
		for vc := 0; vc < 2; vc++ {
			k := t.links[t.index(node, dim, d, class, vc)]
			if k == 0 {
				continue // never built: nothing crossed it
			}
			l := t.linkSlab.at(k - 1)
			x := l.Stats()
			s.Units += x.Units
			s.Bytes += x.Bytes
			s.Waits += x.Waits
			s.Waited += x.Waited
			s.MaxQueue = max(s.MaxQueue, x.MaxQueue)
			s.CRC += x.CRC
			s.Aborted += x.Aborted
		}
	}
	return s
}

// step is the signed number of hops from a to b around a ring of size k,
// taking the shorter way (the + way on a tie).
func step(a, b, k int) int {
	d := b - a // a and b are coordinates, in [0, k)
	if d < 0 {
		d += k
	}
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
// dimension-order routing (x, then y, then z unless SetOrder changed it;
// the shorter way around each ring, the + way on a tie) and returns it. It
// allocates nothing when route has room. It ignores links that are down
// (Route avoids them).
func (t *Torus) AppendRoute(route []*Link, src, dst int) []*Link {
	return t.appendRoute(route, src, dst, 0, t.order, 0)
}

// appendRoute routes in the given dimension order; bit d of longWay takes
// dimension d the longer way around.
func (t *Torus) appendRoute(route []*Link, src, dst, class int, order [3]int, longWay int) []*Link {
	c := t.Coord(src)
	cd := t.Coord(dst)
	node := src
	stride := [3]int{1, t.dims[0], t.dims[0] * t.dims[1]}
	for _, dim := range order {
		k := t.dims[dim]
		s := step(c[dim], cd[dim], k)
		if longWay&(1<<dim) != 0 && s != 0 {
			if s > 0 {
				s -= k
			} else {
				s += k
			}
		}
		dir, d := 1, 0
		if s < 0 {
			dir, d, s = -1, 1, -s
		}
		vc := 0
		x := c[dim]
		for ; s > 0; s-- {
			next := x + dir
			switch {
			case next == k:
				next, vc = 0, 1 // the dateline
			case next < 0:
				next, vc = k-1, 1
			}
			route = append(route, t.link(node, dim, d, class, vc))
			node += (next - x) * stride[dim]
			x = next
		}
		c[dim] = x
	}
	return route
}

// Route appends the route AppendRoute gives (on class's virtual channels),
// or, when one of its links is down, the first route that avoids every link
// that is down: the other dimension orders, then the longer way around some
// rings. It fails when every such route crosses a link that is down or the
// class does not exist.
func (t *Torus) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	if class < 0 || class >= t.classes {
		return route, fmt.Errorf("torus: traffic class %d, the torus has %d", class, t.classes)
	}
	base := len(route)
	route = t.appendRoute(route, src, dst, class, t.order, 0)
	if up(route[base:]) {
		return route, nil
	}
	orders := [7][3]int{t.order, {0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}}
	for longWay := 0; longWay < 8; longWay++ {
		for _, o := range orders {
			route = t.appendRoute(route[:base], src, dst, class, o, longWay)
			if up(route[base:]) {
				return route, nil
			}
		}
	}
	return route[:base], fmt.Errorf("no route from torus node %v to %v avoids the links that are down", t.Coord(src), t.Coord(dst))
}

func up(route []*Link) bool {
	for _, l := range route {
		if l.down {
			return false
		}
	}
	return true
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

// slab holds values built one at a time in blocks of slabBlock, never
// moved (pointers to them stay good), numbered in the order built.
type slab[T any] struct {
	blocks [][]T
	n      uint32
}

const slabBlock = 256

// alloc returns the number of a new zero value and the value.
func (s *slab[T]) alloc() (uint32, *T) {
	k := s.n
	if k%slabBlock == 0 {
		s.blocks = append(s.blocks, make([]T, slabBlock))
	}
	s.n++
	return k, &s.blocks[k/slabBlock][k%slabBlock]
}

// at is value k.
func (s *slab[T]) at(k uint32) *T { return &s.blocks[k/slabBlock][k%slabBlock] }

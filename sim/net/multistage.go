package net

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Multistage is a multistage switch network (the IBM SP's): a butterfly
// (k-ary n-fly) of switch chips, each an output-queued crossbar of Radix
// inputs and Radix outputs; an SP switch chip has 8 bidirectional ports,
// modelled as a 4 x 4 crossbar in the direction of travel (the SP's
// turnaround wiring is not modelled). Stages = ceil(log_radix(nodes)), so
// 16 nodes need 2 stages and 64 need 3; routing is by destination tag and
// every pair has exactly one route. A route is the source's link into the
// first stage, then one output link per stage, the last reaching the
// destination. Outputs are Buffered: a packet waiting for an output waits
// in the chip's buffer, not on the links behind it.
type Multistage struct {
	radix, stages, nodes, size int
	in                         []*Link   // in[src]: node to its first-stage chip
	out                        [][]*Link // out[s][a]: stage s output toward address a
}

// NewMultistage builds a switch for nodes nodes of the given radix (4 for
// the SP's 8-port chips), whose links have latency (a chip's and its
// cable's) and bandwidth in MB/s.
func NewMultistage(name string, nodes, radix int, latency sim.Time, mbps float64) (*Multistage, error) {
	if radix < 2 || nodes < 2 || nodes > MaxNodes {
		return nil, fmt.Errorf("switch %s: %d nodes of radix %d, want at least 2 of each and at most %d nodes", name, nodes, radix, MaxNodes)
	}
	m := &Multistage{radix: radix, nodes: nodes, size: 1}
	for m.size < nodes {
		m.size *= radix
		m.stages++
	}
	m.in = make([]*Link, nodes)
	for i := range m.in {
		m.in[i] = NewLink(fmt.Sprintf("%s.in%d", name, i), latency, mbps)
	}
	m.out = make([][]*Link, m.stages)
	for s := range m.out {
		m.out[s] = make([]*Link, m.size)
		for a := range m.out[s] {
			l := NewLink(fmt.Sprintf("%s.s%d.out%d", name, s, a), latency, mbps)
			l.Buffered = true
			m.out[s][a] = l
		}
	}
	return m, nil
}

// Stages is the number of stages of chips.
func (m *Multistage) Stages() int { return m.stages }

// Nodes is the number of nodes attached.
func (m *Multistage) Nodes() int { return m.nodes }

// In is node src's link into the switch.
func (m *Multistage) In(src int) *Link { return m.in[src] }

// Out is the output link of stage s toward address a (the last stage's
// output a reaches node a).
func (m *Multistage) Out(s, a int) *Link { return m.out[s][a] }

// AppendRoute appends the route from node src to node dst: at stage s the
// chip sets the address's s-th digit (most significant first, base radix)
// to the destination's, so after the last stage the address is dst.
func (m *Multistage) AppendRoute(route []*Link, src, dst int) []*Link {
	route = append(route, m.in[src])
	a := src
	w := m.size
	for s := 0; s < m.stages; s++ {
		w /= m.radix
		digit := dst / w % m.radix
		a = a - (a/w%m.radix)*w + digit*w
		route = append(route, m.out[s][a])
	}
	return route
}

// Route is AppendRoute, failing when a link of the route is down (there is
// no other route).
func (m *Multistage) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	if src < 0 || src >= m.nodes || dst < 0 || dst >= m.nodes {
		return route, fmt.Errorf("switch: no node %d or %d (%d nodes)", src, dst, m.nodes)
	}
	base := len(route)
	route = m.AppendRoute(route, src, dst)
	if !up(route[base:]) {
		return route[:base], fmt.Errorf("switch: the only route from node %d to node %d crosses a link that is down", src, dst)
	}
	return route, nil
}

// Package net holds the interconnect building blocks machines share: links
// with latency, bandwidth and occupancy; cut-through (wormhole) reservation
// of a whole route by one message; and topologies with their routing (a 3D
// torus with dimension-order routing).
//
// A message does not become one event per packet or per hop: Reserve walks
// its route once, at the time it is sent, and books every link for the
// message's whole length. A link busy until time T delays the next message
// that needs it, and a message blocked at one link keeps the links behind it
// busy (wormhole blocking), so contention emerges from occupancy rather than
// from a penalty term.
package net

import (
	"math"

	"github.com/msgsim/msgsim/sim"
)

// Link is one direction of a physical channel (or a network interface's
// injection or ejection port).
type Link struct {
	Name    string
	Latency sim.Time // delay of a message's head across the link (wire and router)
	// BytesPerSec is the link's data rate; 0 means unlimited.
	BytesPerSec float64

	free  sim.Time // busy until free
	msgs  uint64
	bytes uint64
	busy  sim.Time
}

// NewLink returns an idle link.
func NewLink(name string, latency sim.Time, mbps float64) *Link {
	return &Link{Name: name, Latency: latency, BytesPerSec: mbps * 1e6}
}

// FreeAt is the time from which the link is idle.
func (l *Link) FreeAt() sim.Time { return l.free }

// LinkStats counts what crossed a link.
type LinkStats struct {
	Messages uint64
	Bytes    uint64
	Busy     sim.Time // total time reserved
}

// Stats returns what crossed the link so far.
func (l *Link) Stats() LinkStats { return LinkStats{Messages: l.msgs, Bytes: l.bytes, Busy: l.busy} }

// Transit is the timing of one message through a route.
type Transit struct {
	Head sim.Time // the first byte reaches the destination
	Tail sim.Time // the last byte reaches the destination
	// Left is when the last byte left the source (entered the first link):
	// a sender that streams its data into the network is busy until then.
	Left sim.Time
}

// Latency is the sum of the links' head latencies: the time a message's
// head needs on an idle route.
func Latency(route []*Link) sim.Time {
	var d sim.Time
	for _, l := range route {
		d += l.Latency
	}
	return d
}

// Reserve sends a message of n bytes along route, its head ready to enter the
// first link at t, streamed by its source at no more than rate bytes per
// second (0: as fast as the links allow). The message is cut-through: its
// head crosses each link as soon as the link is free, and it occupies every
// link for its whole length at the slowest rate on the route. A link stays
// busy until the message's tail has crossed it, so a head blocked further on
// holds the links behind it. An empty route delivers at t plus the
// serialization time at rate.
func Reserve(route []*Link, t sim.Time, n int, rate float64) Transit {
	bw := rate
	if bw <= 0 {
		bw = math.Inf(1)
	}
	head := t
	for _, l := range route {
		if l.BytesPerSec > 0 && l.BytesPerSec < bw {
			bw = l.BytesPerSec
		}
		if l.free > head {
			head = l.free
		}
		head += l.Latency
	}
	ser := sim.Time(0)
	if !math.IsInf(bw, 1) {
		ser = sim.TransferTime(n, bw)
	}
	tail := head + ser
	// Walk back: the tail leaves link i once it has crossed the links
	// after it, so link i is free at tail minus their latencies.
	down := sim.Time(0)
	for i := len(route) - 1; i >= 0; i-- {
		l := route[i]
		free := tail - down
		start := free - ser - l.Latency
		if start < l.free {
			start = l.free
		}
		l.busy += free - start
		l.free = free
		l.msgs++
		l.bytes += uint64(n)
		down += l.Latency
	}
	left := tail - down
	if len(route) == 0 {
		left = tail
	}
	return Transit{Head: head, Tail: tail, Left: left}
}

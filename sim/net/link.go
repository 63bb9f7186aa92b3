// Package net holds the interconnect building blocks machines share: links
// that traffic competes for in simulated time, messages split into packets,
// and topologies with their routing (a 3D torus, SCI ringlets and a 2D torus
// of rings, a multistage switch).
//
// # The model
//
// A unit (a packet, or a whole message on the fast path) crosses a route of
// links. It asks for a link only when its head reaches it (an engine event
// at that simulated time) and holds it until its tail has entered it. A unit
// that finds a link busy waits in the link's queue. Where the link has no
// input buffer (wormhole, Link.Buffered false) the waiting head stalls the
// whole unit, so it keeps the links behind it busy; where it has one
// (an output-queued switch, a ring's bypass FIFO) the unit's body flows on
// into the buffer and the links behind it are released as its tail passes.
// Nothing is booked into the future: a link's release time becomes known
// only once nothing can stall the tail any more, so a later unit can use any
// gap an earlier one left, and units are served in simulated-time order.
//
// A unit's duration s is the time its bytes take to pass one point: the
// larger of its payload at the source's rate and its payload plus header at
// the slowest link of its route. Its head crosses link i in Latency; on an
// idle route its tail arrives at t + sum(Latency) + s, and it holds each link
// for s. Packets of one message are sent back to back: packet k+1 enters the
// first link when packet k's tail has, so on an idle route a message's tail
// arrives at t + sum(Latency) + sum(s_k), the same as the whole-message fast
// path (Config.Packets false), which sends one unit of duration sum(s_k).
//
// # Arbitration
//
// A free link is granted at once to a unit that asks when nobody waits.
// Otherwise, when it frees, it is granted by its Policy: RoundRobin chooses,
// among the input ports (the previous link of each waiting unit's route, or
// the source for the first link) the one granted least recently, and the
// longest-waiting unit of that port (FIFO within a port); PassThroughFirst
// serves units coming from another link (an SCI ring's bypass FIFO) before
// units the node injects, FIFO within each class.
//
// # Virtual channels share their physical channel
//
// A Link may be one virtual channel of a physical Channel (Link.Phys), as
// a torus's dateline channels and traffic classes are, and a network
// interface's port shared by classes. The Link is the virtual channel's
// buffer: it is held, wormhole fashion, as above, and a head that waits for
// one virtual channel never blocks a unit on another. The Channel is the
// wire: a unit's bytes flow over a link only while the unit also holds its
// Channel. A moving unit holds the Channel of every link it occupies; when
// its head stands still (waiting for a link or a Channel) it gives up the
// Channels of the links it occupies with wormhole holding, which carry no
// flits meanwhile, so another virtual channel's unit can use the wire.
// Before it moves again it collects them all, in the network's one order
// of Channels (the order in which standing units first needed them), holding those it has
// (reserved, not flowing) while it waits for the next: the order makes
// this wait free of deadlock, and a unit that holds Channels while waiting
// waits only for Channels. A unit waiting for a Channel is served when its
// holder's tail passes or the holder stands still, round-robin among the
// Channel's virtual channels (the one granted least recently first), FIFO
// within one: the hardware interleaves virtual channels flit by flit,
// which at the simulated unit sizes comes to taking turns unit by unit.
// Nothing is booked ahead: a Channel, like a link, is granted only to a
// unit whose head is at it, in simulated-time order.
//
// # The flow model
//
// With Config.Flow a message is instead one flow over its route whose bytes
// share the links' time max-min fairly with the other flows' (flow.go): far
// fewer events, no packet-only features.
//
// Layer: imports sim only; the machines' networks build on it.
package net

import (
	"math"

	"github.com/msgsim/msgsim/sim"
)

// Policy is how a link chooses among the units waiting for it.
type Policy uint8

const (
	// RoundRobin grants the input port granted least recently, FIFO
	// within a port.
	RoundRobin Policy = iota
	// PassThroughFirst grants units passing along the link's ring (whose
	// previous link has the same Ring) before units entering the ring at
	// the link's node (injected there, or coming from another ring): an
	// SCI ringlet's bypass FIFO has priority over the node's own output.
	// FIFO within each class.
	PassThroughFirst
)

// Link is one direction of a physical channel (or a network interface's
// injection or ejection port), or one virtual channel of it (see Phys):
// the buffer and wormhole holding a unit's head takes.
//
// A large machine builds millions of links, so a Link keeps only what
// every unit crossing it touches; what only contention, faults or a
// third input port need (its queue, its older inputs, its grant event, its
// CRC faults, its waiting statistics) is allocated the first time it is
// needed, and its name is derived from its id when asked for (Names).
type Link struct {
	kind *LinkKind // latency, data rate and naming, shared with its kind
	// Phys is the physical channel the link is a virtual channel of,
	// whose bandwidth it shares with the channel's other virtual channels;
	// nil: the link is a physical channel of its own.
	Phys *Channel
	// What every unit or flow crossing the link reads or counts comes
	// first, in the link's first cache line.
	units uint64    // LinkStats.Units
	bytes uint64    // LinkStats.Bytes
	fl    *flowLink // the flow model's state of the link (nil until a flow uses it)

	pending bool // a grant event is scheduled
	down    bool // see Network.LinkDown
	faulty  bool // CRC errors are injected (x.crc is set): units crossing draw them
	queued  bool // units wait in x.waiters (kept here: every unit asking reads it)
	// Buffered: a unit waiting for this link waits in a buffer at its
	// input (an output-queued switch port, a ring's bypass FIFO) and does
	// not hold the links behind it. False: wormhole, the waiting head
	// stalls its unit and every link it holds.
	Buffered bool
	// Policy chooses among waiting units.
	Policy Policy
	// Ring names the ring the link belongs to (PassThroughFirst); 0: none.
	Ring int32

	holder    *unit    // the unit granted last; it holds the link until freeAt
	freeAt    sim.Time // sim.Forever while the holder's release is unknown
	grantedAt sim.Time
	grants    uint64
	in        [2]input  // the input ports granted last and before (grants > 0); the others are in x.inputs
	x         *linkRare // nil until contention, a fault or a third input port needs it
	busy      sim.Time  // LinkStats.Busy
	id        uint32    // the link's name is kind.names' name of id
}

// linkRare is the part of a Link that only contention, faults and links
// with more than one input port use.
type linkRare struct {
	waiters  []*unit
	inputs   []input // input ports seen besides in, with their last grant
	grantFn  func()
	crc      *crcFaults // injected CRC errors, nil without (the common case)
	waits    uint64
	waited   sim.Time
	maxQueue int
	crcs     uint64
	aborted  uint64
}

func (l *Link) rare() *linkRare {
	if l.x == nil {
		l.x = &linkRare{}
	}
	return l.x
}

// waiters is the link's queue.
func (l *Link) waiters() []*unit {
	if l.x == nil {
		return nil
	}
	return l.x.waiters
}

// Names derives the names of links or channels from their ids, so that a
// topology that builds millions of them stores no name per link.
type Names struct{ name func(id uint32) string }

// NewNames returns the naming name gives.
func NewNames(name func(id uint32) string) *Names { return &Names{name: name} }

// fixedName names one link: the name NewLink was given.
func fixedName(name string) *Names {
	return &Names{name: func(uint32) string { return name }}
}

// Name is the link's name.
func (l *Link) Name() string { return l.kind.names.name(l.id) }

// Latency is the delay of a unit's head across the link (wire and router).
func (l *Link) Latency() sim.Time { return l.kind.latency }

// BytesPerSec is the link's data rate; 0 means unlimited.
func (l *Link) BytesPerSec() float64 { return l.kind.bytesPerSec }

// LinkKind is what links of one kind share: their head latency, data
// rate and naming. A topology of many links builds them from one kind.
type LinkKind struct {
	latency     sim.Time
	bytesPerSec float64
	names       *Names
}

// NewLinkKind returns the kind of links of the given head latency and
// bandwidth in MB/s (0: unlimited), named by names.
func NewLinkKind(names *Names, latency sim.Time, mbps float64) *LinkKind {
	return &LinkKind{latency: latency, bytesPerSec: mbps * 1e6, names: names}
}

// Link returns an idle link of the kind whose name is the kind's name of
// id, derived when asked for.
func (k *LinkKind) Link(id uint32) *Link {
	l := new(Link)
	k.InitLink(l, id)
	return l
}

// InitLink makes *l what Link(id) returns, in place: for a machine that
// keeps many ports in arrays (one allocation for many, not one each). l
// must not be copied afterwards.
func (k *LinkKind) InitLink(l *Link, id uint32) { *l = Link{kind: k, id: id} }

// crcFaults are the CRC errors injected on a link (faults.go).
type crcFaults struct {
	next  int      // the next next units crossing get a CRC error
	rate  float64  // probability of a CRC error per unit
	retry sim.Time // the link layer's retry delay
}

type input struct {
	from *Link
	last uint64
}

// NewLink returns an idle link of the given head latency and bandwidth in
// MB/s (0: unlimited).
func NewLink(name string, latency sim.Time, mbps float64) *Link {
	return NewLinkKind(fixedName(name), latency, mbps).Link(0)
}

// LinkStats counts what crossed a link.
type LinkStats struct {
	Units    uint64   // packets (or whole messages) that crossed
	Bytes    uint64   // bytes that crossed, headers included
	Busy     sim.Time // total time held (a virtual channel is held while its unit stands still; its Channel's Busy is the time bytes flowed)
	Waits    uint64   // units that found the link busy
	Waited   sim.Time // total time units waited for it
	MaxQueue int      // most units ever waiting at once
	CRC      uint64   // CRC errors (each retried)
	Aborted  uint64   // units lost on it when it went down (each resent)
}

// Stats returns what crossed the link so far.
func (l *Link) Stats() LinkStats {
	s := LinkStats{Units: l.units, Bytes: l.bytes, Busy: l.busy}
	if x := l.x; x != nil {
		s.Waits, s.Waited, s.MaxQueue, s.CRC, s.Aborted = x.waits, x.waited, x.maxQueue, x.crcs, x.aborted
	}
	return s
}

// minRate is the slowest link rate on route in bytes per second (+Inf when
// every link is unlimited).
func minRate(route []*Link) float64 {
	bw := math.Inf(1)
	for _, l := range route {
		if r := l.kind.bytesPerSec; r > 0 && r < bw {
			bw = r
		}
	}
	return bw
}

// inputOf is the port a unit enters link hop of its route from.
func inputOf(u *unit) *Link {
	if u.hop == 0 {
		return nil
	}
	return u.route[u.hop-1]
}

func (l *Link) lastGrant(from *Link) uint64 {
	for _, in := range l.in {
		if in.last > 0 && in.from == from {
			return in.last
		}
	}
	if l.x != nil {
		for _, in := range l.x.inputs {
			if in.from == from {
				return in.last
			}
		}
	}
	return 0
}

// noteGrant records a grant to the unit entering from input port from.
// The common case, the port granted last again (a message's units follow
// each other; or the link's first grant, when in[0] is still zero and
// from nil), is inlined at the call.
func (l *Link) noteGrant(from *Link) {
	if l.in[0].from == from {
		l.grants++
		l.in[0].last = l.grants
		return
	}
	l.noteOther(from)
}

// noteOther is noteGrant for a port other than the one granted last.
func (l *Link) noteOther(from *Link) {
	l.grants++
	switch {
	case l.in[0].last == 0:
	case l.in[1].last == 0 || l.in[1].from == from:
		l.in[1] = l.in[0]
	default:
		demote(&l.rare().inputs, l.in[1], from)
		l.in[1] = l.in[0]
	}
	l.in[0] = input{from: from, last: l.grants}
}

// demote puts front, the older of the two inputs granted last so far,
// into the list of older inputs ins in place of from's entry, which goes
// to the front: a link's next grant is often to the same port (a
// message's units follow each other), so the two granted last are kept
// inline in the Link or Channel. The order of the older inputs means
// nothing.
func demote(ins *[]input, front input, from *Link) {
	for i := range *ins {
		if (*ins)[i].from == from {
			(*ins)[i] = front
			return
		}
	}
	*ins = append(*ins, front)
}

// pick removes and returns the waiting unit the policy grants next.
func (l *Link) pick() *unit {
	best := 0
	waiters := l.x.waiters
	switch l.Policy {
	case PassThroughFirst:
		for i, u := range waiters {
			if in := inputOf(u); in != nil && l.Ring != 0 && in.Ring == l.Ring {
				best = i
				break
			}
		}
	default:
		prev := inputOf(waiters[0])
		bl := l.lastGrant(prev)
		for i := 1; i < len(waiters) && bl > 0; i++ {
			// A waiter from the port of the one before it cannot be
			// granted before it (FIFO within a port): skip the lookup.
			if from := inputOf(waiters[i]); from != prev {
				prev = from
				if g := l.lastGrant(from); g < bl {
					best, bl = i, g
				}
			}
		}
	}
	u := waiters[best]
	// A queue is short: shift it by hand rather than call copy.
	for i := best + 1; i < len(waiters); i++ {
		waiters[i-1] = waiters[i]
	}
	waiters[len(waiters)-1] = nil
	l.x.waiters = waiters[:len(waiters)-1]
	l.queued = len(waiters) > 1
	return u
}

// remove takes u out of the queue (a unit aborted while waiting).
func (l *Link) remove(u *unit) {
	waiters := l.waiters()
	for i, w := range waiters {
		if w == u {
			copy(waiters[i:], waiters[i+1:])
			waiters[len(waiters)-1] = nil
			l.x.waiters = waiters[:len(waiters)-1]
			l.queued = len(waiters) > 1
			return
		}
	}
}

// schedule arranges a grant when the link frees, if anyone waits and its
// release time is known. The test whether anyone waits is inlined at the
// call.
func (l *Link) schedule(eng *sim.Engine) {
	if l.queued && !l.pending {
		l.scheduleWaiter(eng)
	}
}

func (l *Link) scheduleWaiter(eng *sim.Engine) {
	if l.freeAt == sim.Forever || l.down {
		return
	}
	if l.x.grantFn == nil {
		// The grant when the link frees with units waiting (its body in
		// the closure rather than a bound method's wrapper: one call
		// fewer per grant).
		l.x.grantFn = func() {
			l.pending = false
			if len(l.waiters()) == 0 || l.down {
				return
			}
			if eng.Now() < l.freeAt {
				l.schedule(eng)
				return
			}
			l.pick().grant(l)
		}
	}
	l.pending = true
	eng.At(l.freeAt, l.x.grantFn)
}

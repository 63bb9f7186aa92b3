package net

import (
	"fmt"
	"math"
	"slices"

	"github.com/msgsim/msgsim/sim"
)

// Router finds routes. Route appends to route the links from endpoint src
// to endpoint dst (in the router's own numbering) for traffic of the given
// class (a virtual network: e.g. requests 0, responses 1; a router with one
// network ignores it) and returns it; it should avoid links that are down
// and return an error when no route is left. The route must depend only on
// its arguments and on which links are down: the units of one message
// take the route its first unit was given while no link went down or up
// (the network does not ask again for each unit).
type Router interface {
	Route(route []*Link, src, dst, class int) ([]*Link, error)
}

// FixedRouter is a Router whose routes depend on nothing but their
// arguments and on which links are down: nothing else (a dimension order
// changed at run time, as Torus.SetOrder does) changes them. The network
// then remembers the routes it is given and asks again only for a route it
// does not remember or after a link went down or up (a message asks for
// one, and its protocol's control messages ask for the same few over and
// over).
type FixedRouter interface {
	Router
	FixedRoutes()
}

// Msg is what a sender says about a message.
type Msg struct {
	Src, Dst int
	Class    int     // virtual network (see Router)
	Bytes    int     // payload
	Rate     float64 // the source's rate in bytes per second (0: unlimited)
}

// Handler is told what happens to a message. Every method runs in the
// engine loop at the simulated time it describes, never inside Send; none
// may block. The *Message is valid only during the call.
type Handler interface {
	// Sent: the message's last byte has left its source (a sender that
	// streams its data may reuse its buffer).
	Sent(m *Message)
	// Arrived: payload bytes [off, off+n) reached the destination (one
	// packet, or the whole message on the fast path). Packets may arrive
	// out of order when the network reorders.
	Arrived(m *Message, off, n int)
	// Delivered: every packet has arrived (after the last Arrived).
	Delivered(m *Message)
	// Failed: the message cannot be delivered (no route is left); no
	// further call follows. Bytes already Arrived stay arrived.
	Failed(m *Message, err error)
}

// QuietSender is a Handler with nothing to do when a message's last byte
// leaves its source (a remote store that the CPU has already retired, a
// message whose data was snapshot at the call): the network then spends
// no event on Sent, and never calls it.
type QuietSender interface {
	Handler
	IgnoresSent()
}

// Config is what a machine's network looks like to its traffic.
type Config struct {
	// MTU is the payload of a full packet in bytes; 0 means a message is
	// one packet whatever its size.
	MTU int
	// Header is the bytes a packet carries besides its payload (routing,
	// CRC); counted the same way on the fast path.
	Header int
	// Packets: each packet is its own unit (the packet model). False: a
	// message crosses in units of Unit bytes of payload, each lasting the
	// sum of its packets' durations (the fast path: identical timing
	// without contention).
	Packets bool
	// Unit is the payload of a fast-path unit, rounded up to whole
	// packets; 0 means a message crosses whole. Units of messages that
	// meet at a link interleave there as their packets would, at a
	// coarser grain; whole messages wait for each other instead.
	Unit int
	// Jitter, when positive, delays each unit's arrival at its destination
	// by a random time in [0, Jitter] drawn from the engine's generator,
	// so different packets may be delivered out of order (reproducibly for
	// a seed). The delay is in the destination adapter: it holds no link.
	Jitter sim.Time
	// LoseOnLinkDown: a unit on a link when it goes down, or waiting for
	// it, is lost and its message reported Failed, rather than sent again
	// from its source (a fabric whose links do not resend end to end: the
	// sender learns of the loss and recovers by itself).
	LoseOnLinkDown bool
	// Flow: each message is one flow whose bytes share the links of its
	// route max-min fairly with the other flows (the flow model, flow.go)
	// instead of units that take links one after the other; Packets and
	// Unit then only say how long a flow holds a link others wait for (a
	// unit's bytes at a time), and Jitter must be 0 (the flow model does
	// not reorder).
	Flow bool
	// FlowShareMin: on the flow model, a message of at most this many
	// payload bytes crosses at its own limit for its own duration, once it
	// holds its links, without taking a share of them (0: every message
	// shares). Control
	// messages (requests, acknowledgements, swaps) hold a link for tens of
	// nanoseconds; recomputing the sharing when each starts and ends is
	// most of the flow model's work and moves little.
	FlowShareMin int
}

// Validate rejects a negative size or time.
func (c Config) Validate() error {
	switch {
	case c.MTU < 0:
		return fmt.Errorf("net: negative MTU %d", c.MTU)
	case c.Header < 0:
		return fmt.Errorf("net: negative header size %d", c.Header)
	case c.Unit < 0:
		return fmt.Errorf("net: negative unit size %d", c.Unit)
	case c.Jitter < 0:
		return fmt.Errorf("net: negative jitter %v", c.Jitter)
	case c.FlowShareMin < 0:
		return fmt.Errorf("net: negative flow share minimum %d", c.FlowShareMin)
	case c.Flow && c.Jitter > 0:
		return fmt.Errorf("net: jitter %v reorders packets, which the flow model does not", c.Jitter)
	}
	return nil
}

// Network carries messages over a Router's links in an engine.
type Network struct {
	eng    *sim.Engine
	router Router
	cfg    Config
	units  []*unit    // pool
	msgs   []*Message // pool
	// channels numbers the physical Channels in the order standing units
	// first collect them: the one order in which every unit collects.
	channels uint64
	stats    Stats
	// unitBytes is the payload of a unit: MTU in the packet model, Unit
	// rounded up to whole packets on the fast path, 0 for whole messages;
	// unitWire is a full unit's bytes on a link, headers included.
	unitBytes, unitWire int
	// routing counts the changes that can change a route (a link going
	// down or up, a new router): a message's route is good while it has
	// not moved.
	routing uint64
	// kept remembers the routes a FixedRouter gave, by source,
	// destination and class (see keptFor); nil until the first, and for
	// another router.
	kept  []keptRoute
	fixed bool // the router is a FixedRouter
	// fl is the flow model's state (Config.Flow); nil for the unit model.
	fl      *flowState
	scratch []*Link // a route being found (the flow model)
}

// keptRoute is a route a FixedRouter gave, with what its units share.
type keptRoute struct {
	key     uint64 // keptKey; 0: none
	routing uint64 // the network's routing count when it was found
	links   []*Link
	bw      float64 // minRate(links)
	// s is the duration of a unit of size payload bytes at the source
	// rate rate on it (size -1: none yet).
	size int
	rate float64
	s    sim.Time
}

// keptBits sizes the remembered routes: 4,096 entries (290 KB). Most
// that miss are asked for the first time (an all-to-all of 128 PEs asks
// for 32,512 routes, two classes): 16,384 entries save 0.1 % of its
// instructions.
const keptBits = 12

// setRouter sets the router and whether the network remembers its routes.
func (n *Network) setRouter(r Router) {
	n.router = r
	n.routing++
	n.kept = nil
	_, n.fixed = r.(FixedRouter)
}

// keptFor is the entry that remembers the route from src to dst for
// class, and its key; nil when the network remembers no routes (or the
// arguments do not fit a key).
func (n *Network) keptFor(src, dst, class int) (*keptRoute, uint64) {
	if !n.fixed || uint(src) >= 1<<28 || uint(dst) >= 1<<28 || uint(class) >= 1<<7 {
		return nil, 0
	}
	if n.kept == nil {
		n.kept = make([]keptRoute, 1<<keptBits)
	}
	key := 1 | uint64(class)<<1 | uint64(dst)<<8 | uint64(src)<<36
	return &n.kept[(key*0x9E3779B97F4A7C15)>>(64-keptBits)], key
}

// Stats counts a network's traffic.
type Stats struct {
	Messages  uint64 // messages sent
	Units     uint64 // units injected (packets, or messages on the fast path, resends included)
	Resent    uint64 // units resent after a link went down under them
	Failed    uint64 // messages reported as failed
	Delivered uint64 // messages delivered
}

// New returns a network of the engine routing with router.
func New(eng *sim.Engine, router Router, cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Network{eng: eng, cfg: cfg}
	n.setRouter(router)
	if cfg.Flow {
		n.fl = &flowState{}
		n.fl.recompute = n.recomputeNow
	}
	switch {
	case cfg.Packets:
		n.unitBytes = cfg.MTU
	case cfg.Unit > 0 && cfg.MTU > 0:
		n.unitBytes = (cfg.Unit + cfg.MTU - 1) / cfg.MTU * cfg.MTU
	default:
		n.unitBytes = cfg.Unit
	}
	n.unitWire = n.unitBytes
	if cfg.MTU > 0 && n.unitBytes > cfg.MTU {
		n.unitWire += cfg.Header * ((n.unitBytes + cfg.MTU - 1) / cfg.MTU)
	} else {
		n.unitWire += cfg.Header
	}
	return n, nil
}

// Config is the network's configuration.
func (n *Network) Config() Config { return n.cfg }

// SetRouter changes the routing at run time: units injected from now on
// take the new router's routes, units in flight keep theirs.
func (n *Network) SetRouter(r Router) { n.setRouter(r) }

// Stats is the traffic so far.
func (n *Network) Stats() Stats { return n.stats }

// Message is a message in flight. Its exported fields are what the sender
// gave Send.
type Message struct {
	Msg
	Handler Handler

	net      *Network
	next     int // payload offset of the next packet to inject
	got      int // payload bytes arrived
	npackets int
	units    int32 // units injected and not yet arrived or aborted
	pending  int32 // message events scheduled (next packet or Sent, Failed)
	sent     bool  // Sent is scheduled or done
	quiet    bool  // the handler ignores Sent (QuietSender)
	done     bool  // Delivered or Failed has been called or scheduled
	routed   bool  // route holds the route of the message's last unit
	// route is the route of the message's last unit while more follow,
	// found when the network's routing count was route.routing; nil
	// until a message of several units uses the pooled Message.
	route *msgRoute
	// chainFn runs when the unit that had the chain has left the source:
	// the message's next packet follows it, or the message has left (left
	// chose which by next, which nothing changes meanwhile). Bound once: a
	// message has at most one such event pending.
	chainFn func()
}

// msgRoute is a message's last route, kept for its next units, with what
// they share.
type msgRoute struct {
	links   []*Link
	routing uint64
	bw      float64  // minRate(links)
	unitS   sim.Time // a full unit's duration on it; -1 until known
}

// Packets is the number of packets the message is split into.
func (m *Message) Packets() int { return m.npackets }

// Send sends msg.Bytes of payload from msg.Src to msg.Dst, streamed by the
// source at no more than msg.Rate bytes per second (0: as fast as the links
// allow), and tells h what becomes of it. Its first unit asks for its first
// link now.
func (n *Network) Send(msg Msg, h Handler) {
	if msg.Bytes < 0 {
		panic(fmt.Sprintf("net: message of %d bytes from %d to %d", msg.Bytes, msg.Src, msg.Dst))
	}
	var m *Message
	if k := len(n.msgs); k > 0 {
		m = n.msgs[k-1]
		n.msgs = n.msgs[:k-1]
	} else {
		m = &Message{net: n}
		// See chainFn; the body is in the closure itself rather than
		// a bound method's wrapper: one call fewer per event.
		m.chainFn = func() {
			if m.next < m.Bytes {
				m.injectEvent()
				return
			}
			m.notifySent()
		}
	}
	m.Msg, m.Handler = msg, h
	_, m.quiet = h.(QuietSender)
	m.next, m.units, m.pending, m.got = 0, 0, 0, 0
	m.sent, m.done, m.routed = false, false, false
	m.npackets = m.unitsFor(msg.Bytes)
	n.stats.Messages++
	if n.fl != nil {
		n.sendFlow(m)
		return
	}
	m.injectNext()
}

// packetTime is a unit's duration: payload at the source rate or payload
// plus header at the route's slowest link, whichever is longer.
func (n *Network) packetTime(payload int, rate, bw float64) sim.Time {
	var s sim.Time
	if rate > 0 {
		s = sim.TransferTime(payload, rate)
	}
	if !math.IsInf(bw, 1) {
		s = max(s, sim.TransferTime(payload+n.cfg.Header, bw))
	}
	return s
}

func (m *Message) injectEvent() {
	m.pending--
	if m.done {
		m.maybeFree()
		return
	}
	m.injectNext()
}

// injectNext injects the message's next unit: its next packet, or all of
// it on the fast path.
func (m *Message) injectNext() {
	off := m.next
	size := m.Bytes - off
	if u := m.net.unitBytes; u > 0 && size > u {
		size = u
	}
	m.next = off + size
	m.inject(off, size, true)
}

// inject sends payload [off, off+size) as one unit along a fresh route.
// chain: when its tail leaves the source, the next packet follows (or the
// message is reported sent).
func (m *Message) inject(off, size int, chain bool) {
	n := m.net
	u := n.unit()
	u.msg, u.off, u.n, u.chain = m, off, size, chain
	var bw float64
	var kept *keptRoute // the remembered route the unit took, if any
	if r := m.route; m.routed && r.routing == n.routing {
		// The message's earlier unit found this route and no link has
		// gone down or up since: it is still the one the router gives,
		// and still up. The unit shares it (nothing writes to it while
		// a unit of the message is in flight).
		u.route, bw = r.links, r.bw
		if cap(u.own) < len(r.links) {
			// Room in the unit for a route as long, as if it had
			// asked the router: a warm pool routes without allocating.
			u.own = slices.Grow(u.own[:0], len(r.links))
		}
	} else {
		var route []*Link
		e, key := n.keptFor(m.Src, m.Dst, m.Class)
		if e != nil && e.key == key && e.routing == n.routing {
			// The router gave this route and no link has gone down or
			// up since: it would give it again, all up.
			route, bw = append(u.own[:0], e.links...), e.bw
		} else {
			var err error
			route, err = n.router.Route(u.own[:0], m.Src, m.Dst, m.Class)
			if err == nil {
				for _, l := range route {
					if l.down {
						err = fmt.Errorf("its route crosses link %s, which is down", l.Name())
						break
					}
				}
			}
			if err != nil {
				u.own = route[:0]
				n.free(u)
				m.fail(fmt.Errorf("net: message of %d bytes from %d to %d: %w", m.Bytes, m.Src, m.Dst, err))
				return
			}
			bw = minRate(route)
			if e != nil {
				e.key, e.routing, e.links, e.bw, e.size = key, n.routing, append(e.links[:0], route...), bw, -1
			}
		}
		u.own = route[:0]
		u.route, kept = route, e
		if m.next < m.Bytes { // more units follow: they take this route
			if r == nil {
				r = &msgRoute{}
				m.route = r
			}
			if cap(r.links) < len(route) || m.units > 0 {
				// Pooled messages swap routes: room for any a run sees
				// at once, so a warm pool allocates nothing. Units in
				// flight (the route changed under them) keep the old.
				r.links = make([]*Link, 0, max(2*len(route), 32))
			}
			r.links, r.routing, r.bw, r.unitS, m.routed = append(r.links[:0], route...), n.routing, bw, -1, true
		}
	}
	if size == n.unitBytes && m.routed && m.route.routing == n.routing {
		// A full unit on the message's route: its duration is the
		// message's first full unit's.
		r := m.route
		if r.unitS < 0 {
			r.unitS = n.unitTime(size, m.Rate, bw)
		}
		u.s, u.wire = r.unitS, n.unitWire
	} else if e := kept; e != nil {
		// The remembered route's last unit time, if it was for as many
		// bytes at the same rate (a protocol's packets are of few sizes).
		if e.size != size || e.rate != m.Rate {
			e.size, e.rate, e.s = size, m.Rate, n.unitTime(size, m.Rate, bw)
		}
		u.s, u.wire = e.s, size+n.cfg.Header*m.unitsFor(size)
	} else {
		u.s, u.wire = n.unitTime(size, m.Rate, bw), size+n.cfg.Header*m.unitsFor(size)
	}
	if cap(u.theta) < len(u.route) {
		u.theta = make([]sim.Time, len(u.route), cap(u.own))
	}
	u.theta = u.theta[:len(u.route)]
	m.units++
	n.stats.Units++
	if len(u.route) == 0 {
		// Source and destination are one point: the tail arrives after
		// the unit's duration.
		t := n.eng.Now() + u.s
		u.left(t)
		u.arriveAt(t)
		return
	}
	u.request()
}

// unitTime is the duration of a unit of size bytes at the source's rate
// and the route's slowest link rate bw.
func (n *Network) unitTime(size int, rate, bw float64) sim.Time {
	if n.cfg.MTU == 0 || size <= n.cfg.MTU {
		return n.packetTime(size, rate, bw)
	}
	// The fast path: the sum of the packets' durations.
	full, last := size/n.cfg.MTU, size%n.cfg.MTU
	s := sim.Time(full) * n.packetTime(n.cfg.MTU, rate, bw)
	if last > 0 {
		s += n.packetTime(last, rate, bw)
	}
	return s
}

// unitsFor is the number of packets payload bytes make.
func (m *Message) unitsFor(size int) int {
	if mtu := m.net.cfg.MTU; mtu > 0 && size > mtu {
		return (size + mtu - 1) / mtu
	}
	return 1
}

// left is called when the unit's tail enters its first link at t: the
// message's next packet follows it, or the message has left its source.
func (u *unit) left(t sim.Time) {
	m := u.msg
	if !u.chain || m.done {
		return
	}
	u.chain = false
	if m.next < m.Bytes {
		m.pending++
		m.net.eng.At(t, m.chainFn)
		return
	}
	if !m.sent {
		m.sent = true
		if m.quiet {
			return
		}
		m.pending++
		m.net.eng.At(t, m.chainFn)
	}
}

func (m *Message) notifySent() {
	m.pending--
	if !m.done {
		m.Handler.Sent(m)
	}
	m.maybeFree()
}

// arrived records a unit's arrival at the destination.
func (m *Message) arrived(u *unit) {
	m.units--
	if m.done {
		m.maybeFree()
		return
	}
	m.got += u.n
	m.Handler.Arrived(m, u.off, u.n)
	if m.got == m.Bytes {
		m.done = true
		m.net.stats.Delivered++
		m.Handler.Delivered(m)
	}
	m.maybeFree()
}

// fail reports the message failed (from an event, never inside Send).
func (m *Message) fail(err error) {
	if m.done {
		m.maybeFree()
		return
	}
	m.done = true
	m.pending++
	// A failure is rare: its event binds its error rather than the
	// Message keeping a field and a function for it.
	m.net.eng.At(m.net.eng.Now(), func() { m.notifyFailed(err) })
}

func (m *Message) notifyFailed(err error) {
	m.pending--
	m.net.stats.Failed++
	m.Handler.Failed(m, err)
	m.maybeFree()
}

// maybeFree returns the message to the pool once nothing refers to it.
func (m *Message) maybeFree() {
	if m.done && m.units == 0 && m.pending == 0 && m.Handler != nil {
		m.Handler = nil
		m.net.msgs = append(m.net.msgs, m)
	}
}

// unit is a packet, or a whole message, crossing its route. Every
// message in flight has one or more, so it is kept small: indices into its
// route are 32 bits (a route is far shorter), and its one pending engine
// event (its head's next hop, or its arrival) runs one bound function.
type unit struct {
	net   *Network
	eng   *sim.Engine // net.eng, one load nearer
	msg   *Message
	off   int // payload offset in the message
	n     int // payload bytes
	wire  int // bytes on a link, headers included
	s     sim.Time
	route []*Link // its route: own, or its message's
	own   []*Link // the route the unit asked the router for
	// theta[i] is when, on the unit's moving clock (time minus frozen
	// time w), its tail enters route[i]: the link's release.
	theta     []sim.Time
	w         sim.Time   // time the unit stood still (a stalled head, a retry)
	waitFrom  sim.Time   // when its head stopped (waiting is true)
	waitPFrom sim.Time   // when it began to wait for waitP
	ev        sim.Handle // pending head or arrival event
	evFn      func()     // ev's function (see Network.unit)
	waitP     *Channel   // the Channel it waits for, if any
	// Physical channels a standing unit collects before it moves again:
	// need holds the route indices of the links whose Phys it needs, in
	// the network's order of Channels; need[:needAt] are collected.
	need     []int32
	needAt   int32
	waitVC   int32  // the route index of the link it needs waitP for
	hop      int32  // the link the head is on or waits for
	settled  int32  // route[:settled] have known release times
	gen      uint32 // bumped when the unit is freed or aborted
	chain    bool   // on leaving the source, the next packet follows
	waiting  bool
	resumed  bool // moving again after standing: its Channels start flowing
	arriving bool // ev is its arrival, not its head's next hop
}

func (n *Network) unit() *unit {
	if k := len(n.units); k > 0 {
		u := n.units[k-1]
		n.units = n.units[:k-1]
		return u
	}
	u := &unit{net: n, eng: n.eng}
	// The unit's pending event: its arrival, or its head at the end of
	// route[hop], which then asks for the next link. The body is in the
	// closure itself rather than a bound method's wrapper: one call fewer
	// per hop.
	u.evFn = func() {
		if u.arriving {
			u.arrive()
			return
		}
		u.ev = sim.Handle{}
		u.hop++
		u.request()
	}
	return u
}

func (n *Network) free(u *unit) {
	u.msg = nil
	u.gen++
	u.hop, u.settled, u.w, u.waiting = 0, 0, 0, false
	u.need, u.needAt, u.resumed, u.waitP, u.arriving = u.need[:0], 0, false, nil, false
	u.ev = sim.Handle{}
	n.units = append(n.units, u)
}

// request: the unit's head, moving, asks for route[hop]. The uncontended
// case (the virtual channel and its wire free, nobody waiting) is written
// out here: it is most of what a network event does.
func (u *unit) request() {
	hop := u.hop
	l := u.route[hop]
	now := u.eng.Now()
	if l.down {
		u.abort()
		return
	}
	if l.queued || now < l.freeAt {
		u.queue(l, now)
		return
	}
	// take, for a unit that was not waiting.
	var from *Link
	if hop > 0 {
		from = u.route[hop-1]
	}
	l.holder, l.freeAt, l.grantedAt = u, sim.Forever, now
	if l.in[0].from == from { // noteGrant's common case
		l.grants++
		l.in[0].last = l.grants
	} else {
		l.noteOther(from)
	}
	l.units++
	l.bytes += uint64(u.wire)
	if p := l.Phys; p != nil {
		if p.queued || now < p.freeAt {
			// The virtual channel is free, the wire busy: the head waits
			// in the virtual channel's buffer and the worm stands still.
			u.stand(now)
			u.collect()
			return
		}
		// p.take and p.flow.
		p.holder, p.freeAt = u, sim.Forever
		if p.in[0].from == l {
			p.grants++
			p.in[0].last = p.grants
		} else {
			p.noteOther(l)
		}
		p.flowing, p.flowFrom = true, now
	}
	u.move(l, now)
}

// queue: the head waits for l, which is busy or has a queue.
func (u *unit) queue(l *Link, now sim.Time) {
	u.stand(now)
	x := l.rare()
	x.waiters = append(x.waiters, u)
	l.queued = true
	x.waits++
	x.maxQueue = max(x.maxQueue, len(x.waiters))
	l.schedule(u.eng)
}

// stand: the head stops before route[hop] at now. Before a buffered link
// the body flows on into the buffer, so the links behind are released as
// the tail passes them, whatever happens ahead; before a wormhole link the
// worm stands still and gives up the physical channels of the links it
// occupies (no flit flows on them) while it keeps their virtual channels.
func (u *unit) stand(now sim.Time) {
	u.waiting = true
	u.waitFrom = now
	if u.route[u.hop].Buffered {
		u.settle(sim.Forever, u.hop-1)
		return
	}
	for i := u.settled; i < u.hop; i++ {
		if p := u.route[i].Phys; p != nil && p.holder == u && p.freeAt == sim.Forever {
			p.release(now)
		}
	}
}

// grant gives l (route[hop]), which the unit waited for, to the unit; it
// moves on once it has the physical channels it needs.
func (u *unit) grant(l *Link) {
	u.take(l)
	u.collect()
}

// take gives the virtual channel l (route[hop]) to the unit: its head
// enters l's buffer.
func (u *unit) take(l *Link) {
	now := u.eng.Now()
	l.holder = u
	l.freeAt = sim.Forever
	l.grantedAt = now
	l.noteGrant(inputOf(u))
	l.units++
	l.bytes += uint64(u.wire)
	if u.waiting {
		l.rare().waited += now - u.waitFrom
	}
}

// collect gathers, in the network's order of Channels, the physical
// channels of the links the standing unit occupies, route[settled:hop+1],
// then moves it. Taking them in one fixed order while holding the ones
// taken cannot deadlock; a unit that holds a Channel and waits for another
// keeps the first reserved (not flowing) meanwhile.
func (u *unit) collect() {
	n := u.net
	now := n.eng.Now()
	route, need := u.route, u.need[:0]
	// need in route order; sorted by seq only if some Channel is busy:
	// when the unit can take every one at once, the order it takes them
	// in changes nothing (each take touches its own Channel).
	sorted, free := true, true
	var last uint64
	for i := u.settled; i <= u.hop; i++ {
		p := route[i].Phys
		if p == nil {
			continue
		}
		seq := p.seq
		if seq == 0 {
			n.channels++
			seq = n.channels
			p.seq = seq
		}
		if seq < last {
			sorted = false
		}
		last = seq
		if free && !p.free(now) && (p.holder != u || p.freeAt != sim.Forever) {
			free = false
		}
		need = append(need, i)
	}
	if !sorted && !free {
		// Insertion sort by seq, stable: a unit occupies a few links.
		for k := 1; k < len(need); k++ {
			i := need[k]
			seq := route[i].Phys.seq
			j := k
			for ; j > 0 && route[need[j-1]].Phys.seq > seq; j-- {
				need[j] = need[j-1]
			}
			need[j] = i
		}
	}
	u.need, u.needAt = need, 0
	u.collectNext()
}

// collectNext takes the next physical channels the unit needs, waiting for
// the first that is busy; with all of them it moves.
func (u *unit) collectNext() {
	now := u.eng.Now()
	route, need := u.route, u.need
	for k := int(u.needAt); k < len(need); k++ {
		i := need[k]
		vc := route[i]
		p := vc.Phys
		if p.holder == u && p.freeAt == sim.Forever {
			continue // the route crosses the wire twice
		}
		if !p.free(now) {
			u.needAt = int32(k)
			p.wait(u, i, now)
			return
		}
		p.take(u, vc)
	}
	u.needAt = int32(len(need))
	u.resumed = true
	u.move(route[u.hop], now)
}

// move: the unit holds l, route[hop], and the physical channels of every
// link it occupies; its head enters l now.
func (u *unit) move(l *Link, now sim.Time) {
	hop := u.hop
	if u.waiting || u.resumed {
		u.resume(now)
	}
	theta, w := u.theta, u.w
	theta[hop] = now - w + u.s
	end := now + l.kind.latency
	// The head moves unobstructed until it reaches the end of l: every
	// held link whose tail passes by then is released (settle's first
	// test, here: most hops release nothing).
	if theta[u.settled]+w <= end {
		u.settle(end, hop)
	}
	eng := u.eng
	if retry := l.crcError(eng); retry > 0 {
		// The receiver finds a bad CRC: the unit is sent again over l
		// (the link layer's retry) and the worm stands still meanwhile.
		l.x.crcs++ // crcError found faults: x is there
		u.w += retry
		end += retry
		u.settle(end, hop)
	}
	if int(hop) == len(u.route)-1 {
		u.settle(sim.Forever, hop)
		u.arriveAt(end + u.s)
		return
	}
	u.ev = eng.At(end, u.evFn)
}

// resume: the unit that stood still moves again at now; the physical
// channels it collected start flowing.
func (u *unit) resume(now sim.Time) {
	if u.waiting {
		u.waiting = false
		u.w += now - u.waitFrom
	}
	if u.resumed {
		u.resumed = false
		for _, i := range u.need {
			if p := u.route[i].Phys; p.holder == u && !p.flowing {
				p.flow(now)
			}
		}
	}
}

// crcError reports the extra time of a CRC error's retry on a unit
// crossing l, or 0: the rest of the unit's transmission, the error
// reported back, and a second transmission.
func (l *Link) crcError(eng *sim.Engine) sim.Time {
	if !l.faulty {
		return 0
	}
	return l.crcDraw(eng)
}

// crcDraw is crcError on a link with faults injected.
func (l *Link) crcDraw(eng *sim.Engine) sim.Time {
	f := l.x.crc
	hit := false
	if f.next > 0 {
		f.next--
		hit = true
	} else if f.rate >= 1 {
		hit = true // certain: no random number drawn
	} else if f.rate > 0 && eng.Rand().Float64() < f.rate {
		hit = true
	}
	if !hit {
		return 0
	}
	return f.retry + l.holder.s + 2*l.kind.latency
}

// settle releases the held links route[settled:upto+1] whose release
// falls at or before limit, in route order (releases are increasing).
func (u *unit) settle(limit sim.Time, upto int32) {
	route, theta, w := u.route, u.theta, u.w
	i := u.settled
	for ; i <= upto; i++ {
		rel := theta[i] + w
		if rel > limit {
			break
		}
		l := route[i]
		if l.holder == u && l.freeAt == sim.Forever {
			l.freeAt = rel
			l.busy += rel - l.grantedAt
			if l.queued {
				l.schedule(u.eng)
			}
		}
		if p := l.Phys; p != nil && p.holder == u && p.freeAt == sim.Forever {
			// p.release(rel)
			if p.flowing {
				p.busy += rel - p.flowFrom
				p.flowing = false
			}
			p.freeAt = rel
			if p.queued {
				p.scheduleWaiter()
			}
		}
		if i == 0 {
			u.left(rel)
		}
	}
	u.settled = i
}

// arriveAt schedules the unit's arrival at t, later by the jitter.
func (u *unit) arriveAt(t sim.Time) {
	if j := u.net.cfg.Jitter; j > 0 {
		t += sim.Time(u.eng.Rand().Int64N(int64(j) + 1))
	}
	u.arriving = true
	u.ev = u.eng.At(t, u.evFn)
}

func (u *unit) arrive() {
	m := u.msg
	u.net.free(u)
	m.arrived(u)
}

// abort takes the unit off the network (a link went down under it, or its
// next link is down) and sends its payload again from the source on a
// fresh route, or reports the message failed when there is none, or when
// the network loses such units (LoseOnLinkDown): a unit is never silently
// lost.
func (u *unit) abort() {
	n := u.net
	eng := n.eng
	now := eng.Now()
	eng.Cancel(u.ev)
	for i := 0; i <= int(u.hop) && i < len(u.route); i++ {
		l := u.route[i]
		if l.holder == u && l.freeAt > now {
			if l.freeAt != sim.Forever {
				l.busy -= l.freeAt - now
			} else {
				l.busy += now - l.grantedAt
			}
			l.freeAt = now
			l.schedule(eng)
		}
		if p := l.Phys; p != nil && p.holder == u && p.freeAt > now {
			if p.freeAt != sim.Forever {
				p.busy -= p.freeAt - now
				p.freeAt = now
				p.schedule()
			} else {
				p.release(now)
			}
		}
	}
	if u.waiting {
		u.route[u.hop].remove(u)
	}
	if u.waitP != nil {
		u.waitP.remove(u)
	}
	m, off, size, chain := u.msg, u.off, u.n, u.chain
	m.units--
	n.free(u)
	if n.cfg.LoseOnLinkDown {
		m.fail(fmt.Errorf("net: message of %d bytes from %d to %d: a unit was lost on a link that went down", m.Bytes, m.Src, m.Dst))
		return
	}
	n.stats.Resent++
	if m.done {
		m.maybeFree()
		return
	}
	m.inject(off, size, chain)
}

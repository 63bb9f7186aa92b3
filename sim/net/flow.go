package net

import (
	"fmt"
	"math"
	"slices"

	"github.com/msgsim/msgsim/sim"
)

// # The flow model
//
// With Config.Flow, a message is one flow over its route rather than units
// that take links one after the other. Its head crosses the route's links
// in the sum of their latencies, as a unit's does; its bytes (payload plus
// a header per packet) flow over every link of the route at once. Alone, a
// flow runs at its own limit: the source's rate, or the route's slowest
// link, as a unit does; it then lasts as long as the unit model's whole
// message: its last byte leaves the source (Sent) at t + s and arrives
// (Arrived, then Delivered, once for the whole message) at t + s + the
// route's latencies.
//
// Flows that meet share each link's time max-min fairly (progressive
// filling): as a unit holds a link for the time its bytes take at its own
// rate, a flow at share x of a link's time sends at x times its limit; the
// shares of a link's flows add up to at most 1; and every flow's share
// rises together until a link is full, the flows on it are fixed, and so
// on. Where flows run at the link's rate this is max-min fair sharing of
// its bandwidth. The virtual channels of one physical Channel share the
// Channel.
//
// A message of at most Config.FlowShareMin payload bytes (a protocol's
// control message) crosses at its own limit and takes no share, once it
// holds its links.
//
// The shares change only when a flow starts, ends or gives its links up
// (below), and only for the flows
// that change can reach: those tied to it through links that more than
// one flow uses (a link with one flow limits nobody). A start or an end
// recomputes that component, nothing else; starts and ends at one
// simulated time are recomputed together, once.
//
// A flow holds links as a worm does. Every link of its route (a virtual
// channel, a physical channel of its own, a port) is held by the flows of
// one input port at a time (the previous link of their routes, or their
// source), as the unit model's link is held by one unit and serves one
// port's units in order. A flow takes its route's links in route order, as
// a worm's head would; one that finds a link held by another port's flows,
// or flows waiting for it, waits in the link's queue (FIFO) and sends
// nothing. Waiting for a wormhole link it keeps the links it has taken;
// waiting for a Buffered link (a switch's output queue, a ring's bypass
// FIFO) it gives them up, its body being in the link's input buffer. Only
// a flow that holds all its links from the last it waited for on shares
// their bandwidth. A holder of a link that others wait for gives all its
// links up at its next unit boundary (every unit's wire bytes, the unit
// model's unit: Config.Unit, or a packet in the packet model) and takes
// them again from its first, behind the waiters, as the unit model's next
// unit asks for them again; with whole messages (no unit) a flow keeps
// them until its last byte has left its source. The links are those the
// unit model routes the message over, so the two models agree on what
// blocks: the virtual channels of a torus's dateline and of each traffic
// class, and a network interface's ports.
//
// What packets do (reordering, CRC errors, links going down, a ring's bypass
// priority) is not in the flow model: machines reject a scenario that asks
// for both.

// flowRes is a bandwidth a flow uses: a physical Channel, or a Link that is
// its own physical channel.
type flowRes struct {
	flows []*flow
	stamp uint32 // flowState.stamp when last visited
	// The progressive filling's state while the resource is in a
	// component being recomputed.
	rem float64 // the share of its time not yet given to fixed flows
	cnt int32   // flows on it not yet fixed (0 when it is not tight)
	// mark is flowState.mark when sendFlow last put it in a flow's res.
	mark uint64
}

// flowLink is a link's state on the flow model. The network keeps them
// side by side (flowState.linkSlab), apart from the Links, so that a flow
// reads one small record per link of its route.
type flowLink struct {
	link *Link
	res  *flowRes // the bandwidth its bytes use; nil: unlimited
	lat  sim.Time // its latency
	// mark is flowState.mark when sendFlow last put it in a flow's hold
	// (beside lat, which sendFlow reads too).
	mark uint64
	// The flows holding the link (all entering it from input port port),
	// and those waiting for it, FIFO.
	holders []*flow
	port    *Link
	waiters []*flow
}

// tight reports whether the resource may limit one of its flows: more
// than one flow uses it (each would use all of it alone).
func (r *flowRes) tight() bool { return len(r.flows) > 1 }

// flow is a message crossing its route as one flow.
type flow struct {
	net   *Network
	msg   *Message
	res   []*flowRes  // the distinct bandwidths of its route
	hold  []*flowLink // the wormhole links of its route, in route order
	from  []*Link     // from[i]: the input port it enters hold[i] from (nil: its source)
	held  int32       // hold[base:held] are its; it waits for hold[held] if not all
	base  int32       // hold[:base] it gave up, waiting for a Buffered link
	s     sim.Time    // its duration alone
	pos   []int32     // pos[i]: its index in res[i].flows
	lat   sim.Time    // the route's latencies: its head's time to the destination
	limit float64     // its own limit, bytes per second
	rate  float64     // its share now, bytes per second
	left  float64     // wire bytes not yet sent at upd
	upd   sim.Time
	ev    sim.Handle // its end (last byte sent), or its arrival
	evFn  func()
	stamp uint32
	idx   int32 // its index in the component being recomputed
	fixed bool  // its rate is set in the current filling
	sent  bool  // its last byte has left: ev is its arrival
	// active: it holds all its links and shares their bandwidth (or,
	// short, crosses in its own time).
	active bool
	// yield: a flow from another input port waits for one of its links:
	// at its next unit boundary (yieldEv) it gives them all up and takes
	// them again, as the unit model's next unit would.
	yield   bool
	yieldEv sim.Handle
	yieldFn func()
	wire    float64 // its bytes on a link, headers included
}

// flowState is a network's flows.
type flowState struct {
	pool      []*flow
	stamp     uint32
	pending   bool       // a recomputation is scheduled at the current time
	seeds     []*flowRes // resources whose flows it recomputes
	newbies   []*flow    // flows started since the last recomputation and on no seed
	comp      []*flow    // scratch: the component being recomputed
	cres      []*flowRes // scratch: its tight resources
	rateBuf   []float64  // scratch: its rates
	recompute func()
	// mark numbers the flows sendFlow builds: a link or resource whose
	// mark is the current one is already in the flow being built (a route
	// that crosses a link or a wire twice), found in one comparison
	// rather than a search of the flow's lists.
	mark uint64
	// linkSlab and resSlab hold the flowLinks and the flowRes (a chunk
	// at a time, so that those of one network lie together).
	linkSlab []flowLink
	resSlab  []flowRes
	// Recomputations and flows recomputed, for tests and profiles.
	recomputes, recomputed uint64
}

// flowLinkOf is link l's state on the flow model, made the first time.
func (fs *flowState) flowLinkOf(l *Link) *flowLink {
	if l.fl != nil {
		return l.fl
	}
	if len(fs.linkSlab) == cap(fs.linkSlab) {
		fs.linkSlab = make([]flowLink, 0, 256)
	}
	fs.linkSlab = append(fs.linkSlab, flowLink{link: l, lat: l.kind.latency})
	fl := &fs.linkSlab[len(fs.linkSlab)-1]
	// The bandwidth its bytes use: its physical Channel's, or its own;
	// none for an unlimited link.
	if l.kind.bytesPerSec > 0 {
		if p := l.Phys; p != nil {
			if p.fr == nil {
				p.fr = fs.newRes()
			}
			fl.res = p.fr
		} else {
			fl.res = fs.newRes()
		}
	}
	l.fl = fl
	return fl
}

func (fs *flowState) newRes() *flowRes {
	if len(fs.resSlab) == cap(fs.resSlab) {
		fs.resSlab = make([]flowRes, 0, 256)
	}
	fs.resSlab = append(fs.resSlab, flowRes{})
	return &fs.resSlab[len(fs.resSlab)-1]
}

func (n *Network) newFlow() *flow {
	fs := n.fl
	if k := len(fs.pool); k > 0 {
		f := fs.pool[k-1]
		fs.pool = fs.pool[:k-1]
		return f
	}
	f := &flow{net: n}
	f.evFn = func() {
		if f.sent {
			f.arrive()
			return
		}
		f.end()
	}
	f.yieldFn = f.yieldNow
	return f
}

// sendFlow starts message m as a flow.
func (n *Network) sendFlow(m *Message) {
	var route []*Link
	var bw float64
	e, key := n.keptFor(m.Src, m.Dst, m.Class)
	if e != nil && e.key == key && e.routing == n.routing {
		route, bw = e.links, e.bw
	} else {
		var err error
		route, err = n.router.Route(n.scratch[:0], m.Src, m.Dst, m.Class)
		n.scratch = route[:0]
		if err == nil {
			for _, l := range route {
				if l.down {
					err = fmt.Errorf("its route crosses link %s, which is down", l.Name())
					break
				}
			}
		}
		if err != nil {
			m.fail(fmt.Errorf("net: message of %d bytes from %d to %d: %w", m.Bytes, m.Src, m.Dst, err))
			return
		}
		bw = minRate(route)
		if e != nil {
			e.key, e.routing, e.links, e.bw, e.size = key, n.routing, append(e.links[:0], route...), bw, -1
			route = e.links
		}
	}
	f := n.newFlow()
	f.msg, f.sent, f.fixed, f.ev = m, false, false, sim.Handle{}
	m.units = 1
	n.stats.Units++
	wire := m.Bytes + n.cfg.Header*m.npackets
	s := n.unitTime(m.Bytes, m.Rate, bw)
	var lat sim.Time
	f.res, f.pos, f.hold, f.from, f.held, f.base = f.res[:0], f.pos[:0], f.hold[:0], f.from[:0], 0, 0
	fs := n.fl
	fs.mark++
	mark := fs.mark
	// A short flow takes no share (Config.FlowShareMin): whether any
	// link limits it is all that matters of its resources, which it
	// then does not read.
	short := m.Bytes <= n.cfg.FlowShareMin
	for i, l := range route {
		l.units++
		l.bytes += uint64(wire)
		fl := l.fl
		if fl == nil {
			fl = fs.flowLinkOf(l)
		}
		lat += fl.lat
		if fl.mark != mark {
			fl.mark = mark
			var from *Link
			if i > 0 {
				from = route[i-1]
			}
			f.hold, f.from = append(f.hold, fl), append(f.from, from)
		}
		r := fl.res
		if r == nil {
			continue // unlimited
		}
		if short {
			if len(f.res) == 0 {
				f.res = append(f.res, r)
			}
			continue
		}
		if r.mark == mark {
			continue // a wire the route crosses twice
		}
		r.mark = mark
		f.res = append(f.res, r)
	}
	f.lat, f.upd, f.left = lat, n.eng.Now(), float64(wire)
	f.wire, f.active, f.yield = float64(wire), false, false
	if s <= 0 || len(f.res) == 0 {
		// Nothing limits it but its own duration: it shares and
		// holds nothing.
		f.res, f.hold = f.res[:0], f.hold[:0]
		f.limit, f.rate = math.Inf(1), math.Inf(1)
		f.finishAt(n.eng.Now() + s)
		return
	}
	if m.Bytes <= n.cfg.FlowShareMin {
		// Too short to share (Config.FlowShareMin): it crosses in its
		// own duration once it holds its links.
		f.res = f.res[:0]
		f.limit, f.rate, f.s = math.Inf(1), 0, s
		if f.take() {
			f.start()
		}
		return
	}
	f.limit = float64(wire) * float64(sim.Second) / float64(s)
	f.rate, f.s = 0, s
	if f.take() {
		f.start()
	}
}

// take takes the flow's links from hold[held] on, in route order, until
// one is held by flows from another input port or has flows waiting (it
// then waits in that link's queue, its holders yield at their next unit
// boundary, and take reports false) or it has them all.
func (f *flow) take() bool {
	for int(f.held) < len(f.hold) {
		x := f.hold[f.held]
		from := f.from[f.held]
		if len(x.holders) > 0 && (x.port != from || len(x.waiters) > 0) {
			if x.link.Buffered {
				// It waits in the link's input buffer, its body
				// out of the links behind it: it gives them up.
				f.releaseRange(f.base, f.held)
				f.base = f.held
			}
			x.waiters = append(x.waiters, f)
			for _, h := range x.holders {
				if !h.yield {
					h.yield = true
					h.planYield()
				}
			}
			return false
		}
		x.holders = append(x.holders, f)
		x.port = from
		f.held++
	}
	return true
}

// release gives up the flow's links; a link no flow holds any more goes to
// the first flow waiting for it, and to those after it from the same input
// port; a flow that then has all its links starts.
func (f *flow) release() {
	f.releaseRange(f.base, f.held)
	f.held, f.base = 0, 0
}

// releaseRange gives up hold[lo:hi] (see release).
func (f *flow) releaseRange(lo, hi int32) {
	for _, x := range f.hold[lo:hi] {
		k := slices.Index(x.holders, f)
		last := len(x.holders) - 1
		x.holders[k] = x.holders[last]
		x.holders[last] = nil
		x.holders = x.holders[:last]
		for len(x.waiters) > 0 {
			g := x.waiters[0]
			from := g.from[g.held]
			if len(x.holders) > 0 && x.port != from {
				break
			}
			copy(x.waiters, x.waiters[1:])
			x.waiters[len(x.waiters)-1] = nil
			x.waiters = x.waiters[:len(x.waiters)-1]
			x.holders = append(x.holders, g)
			x.port = from
			g.held++
			if g.take() {
				g.start()
			}
		}
	}
}

// planYield schedules the flow's yield at its next unit boundary at its
// rate now (again when its rate changes).
func (f *flow) planYield() {
	n := f.net
	if !f.yield || !f.active || f.rate <= 0 || math.IsInf(f.rate, 1) || n.unitBytes <= 0 {
		return
	}
	now := n.eng.Now()
	sent := f.wire - (f.left - f.rate*float64(now-f.upd)/float64(sim.Second))
	uw := float64(n.unitWire)
	next := (math.Floor(sent/uw+1e-9) + 1) * uw
	if next >= f.wire {
		return // its end comes first and releases its links
	}
	n.eng.Cancel(f.yieldEv)
	d := max(sim.Time(math.Ceil((next-sent)*float64(sim.Second)/f.rate-1e-6)), 1)
	f.yieldEv = n.eng.At(now+d, f.yieldFn)
}

// yieldNow: the flow's unit ends while others wait for one of its links:
// it gives its links up and takes them again from its first, waiting
// behind them.
func (f *flow) yieldNow() {
	f.yieldEv = sim.Handle{}
	if !f.active || f.sent || f.msg == nil {
		return
	}
	waited := false
	for _, x := range f.hold[f.base:f.held] {
		waited = waited || len(x.waiters) > 0
	}
	f.yield = false
	if !waited {
		return
	}
	n := f.net
	now := n.eng.Now()
	if f.rate > 0 {
		f.left = max(f.left-f.rate*float64(now-f.upd)/float64(sim.Second), 0)
	}
	f.upd, f.rate, f.active = now, 0, false
	n.eng.Cancel(f.ev)
	f.ev = sim.Handle{}
	f.leave()
	f.release()
	if f.take() {
		f.start()
	}
}

// start: the flow holds all its links; it shares their bandwidth from now.
func (f *flow) start() {
	n := f.net
	f.upd, f.active = n.eng.Now(), true
	for _, x := range f.hold[f.base:] {
		f.yield = f.yield || len(x.waiters) > 0
	}
	fs := n.fl
	alone := true
	f.pos = f.pos[:0]
	for _, r := range f.res {
		f.pos = append(f.pos, int32(len(r.flows)))
		r.flows = append(r.flows, f)
		if r.tight() {
			fs.seed(r)
			alone = false
		}
	}
	if alone {
		// Alone on every link: its own limit, until another flow meets
		// it (which recomputes it).
		f.rate = f.limit
		if f.left == f.wire {
			f.finishAt(n.eng.Now() + f.s)
		} else {
			f.finishAt(n.eng.Now() + sim.Time(math.Ceil(f.left*float64(sim.Second)/f.rate-1e-6)))
		}
		f.planYield()
		return
	}
	fs.newbies = append(fs.newbies, f)
	n.schedule()
}

// seed marks r for the next recomputation.
func (fs *flowState) seed(r *flowRes) {
	if r.stamp == fs.stamp+1 {
		return
	}
	r.stamp = fs.stamp + 1
	fs.seeds = append(fs.seeds, r)
}

// schedule arranges the recomputation at the current time.
func (n *Network) schedule() {
	fs := n.fl
	if fs.pending {
		return
	}
	fs.pending = true
	n.eng.At(n.eng.Now(), fs.recompute)
}

// finishAt schedules the flow's end (its last byte leaving) at t.
func (f *flow) finishAt(t sim.Time) {
	f.ev = f.net.eng.At(t, f.evFn)
}

// end: the flow's last byte leaves its source; it gives its share back now
// and its tail arrives after the route's latencies.
func (f *flow) end() {
	n := f.net
	now := n.eng.Now()
	f.leave()
	f.res = f.res[:0]
	f.left, f.rate, f.sent, f.active, f.yield = 0, 0, true, false, false
	n.eng.Cancel(f.yieldEv)
	f.yieldEv = sim.Handle{}
	f.release()
	clear(f.hold)
	clear(f.from)
	f.hold, f.from = f.hold[:0], f.from[:0]
	m := f.msg
	if !m.sent {
		m.sent = true
		if !m.quiet && !m.done {
			m.Handler.Sent(m)
		}
	}
	f.ev = n.eng.At(now+f.lat, f.evFn)
}

// leave takes the flow off its resources' flows (it sends nothing more
// for now) and marks them for recomputation.
func (f *flow) leave() {
	n := f.net
	fs := n.fl
	for i, r := range f.res {
		if r.tight() {
			fs.seed(r)
		}
		// Remove f: the last flow takes its place.
		k := f.pos[i]
		last := len(r.flows) - 1
		if int(k) != last {
			g := r.flows[last]
			r.flows[k] = g
			g.pos[slices.Index(g.res, r)] = k
		}
		r.flows[last] = nil
		r.flows = r.flows[:last]
		if r.tight() {
			fs.seed(r)
		}
	}
	if len(f.res) > 0 && len(fs.seeds) > 0 {
		n.schedule()
	}
}

// arrive: the flow's tail reaches the destination.
func (f *flow) arrive() {
	n := f.net
	m := f.msg
	f.msg, f.ev = nil, sim.Handle{}
	n.fl.pool = append(n.fl.pool, f)
	m.units = 0
	if m.done {
		m.maybeFree()
		return
	}
	if m.Bytes > 0 {
		m.got = m.Bytes
		m.Handler.Arrived(m, 0, m.Bytes)
	}
	m.done = true
	n.stats.Delivered++
	m.Handler.Delivered(m)
	m.maybeFree()
}

// recomputeNow sets the rates of the flows tied through tight resources to
// the seeds and to the flows started since the last time, max-min fairly,
// and moves their ends.
func (n *Network) recomputeNow() {
	fs := n.fl
	fs.pending = false
	now := n.eng.Now()
	fs.stamp += 2 // stamp+1 marked the seeds; stamp+2 marks this visit
	st := fs.stamp
	comp, cres := fs.comp[:0], fs.cres[:0]
	// The component: the flows on the seeds and the new flows, then every
	// flow on a tight resource of a flow in it.
	add := func(f *flow) {
		if f.stamp != st {
			f.stamp = st
			comp = append(comp, f)
		}
	}
	for _, r := range fs.seeds {
		for _, f := range r.flows {
			add(f)
		}
	}
	for _, f := range fs.newbies {
		if f.active && !f.sent && f.msg != nil {
			add(f)
		}
	}
	for i := 0; i < len(comp); i++ {
		for _, r := range comp[i].res {
			if r.stamp == st {
				continue
			}
			r.stamp = st
			if !r.tight() {
				r.cnt = 0
				continue
			}
			r.rem, r.cnt = 1, int32(len(r.flows))
			cres = append(cres, r)
			for _, g := range r.flows {
				add(g)
			}
		}
	}
	fs.seeds, fs.newbies = fs.seeds[:0], fs.newbies[:0]
	fs.recomputes++
	fs.recomputed += uint64(len(comp))
	// Progressive filling over the component's tight resources.
	shares := fs.shares(comp, cres)
	for i, f := range comp {
		rate := shares[i] * f.limit
		if f.ev.Valid() && math.Abs(rate-f.rate) <= 1e-12*f.rate {
			continue // unchanged, but for rounding: its end stays
		}
		if f.rate > 0 {
			f.left -= f.rate * float64(now-f.upd) / float64(sim.Second)
			f.left = max(f.left, 0)
		}
		f.upd, f.rate = now, rate
		n.eng.Cancel(f.ev)
		d := math.Ceil(f.left*float64(sim.Second)/rate - 1e-6)
		f.finishAt(now + sim.Time(d))
		f.planYield()
	}
	fs.comp, fs.cres = comp[:0], cres[:0]
}

// shares fills comp's shares of time progressively over the tight
// resources cres (rem and cnt set): every unfixed flow's share rises
// together until it reaches 1 (its own limit) or a resource's shares add up
// to 1; those flows are fixed at that level; and so on. The shares are
// returned in comp's order.
func (fs *flowState) shares(comp []*flow, cres []*flowRes) []float64 {
	rates := fs.rateBuf[:0]
	for range comp {
		rates = append(rates, 0)
	}
	fs.rateBuf = rates
	for i, f := range comp {
		f.idx, f.fixed = int32(i), false
	}
	left := len(comp)
	for left > 0 {
		level := math.Inf(1)
		for _, r := range cres {
			if r.cnt > 0 {
				level = min(level, r.rem/float64(r.cnt))
			}
		}
		level = min(level, 1)
		tol := level * (1 + 1e-12)
		fixedAny := false
		fix := func(f *flow) {
			f.fixed = true
			rates[f.idx] = level
			left--
			fixedAny = true
			for _, r := range f.res {
				if r.stamp == fs.stamp && r.cnt > 0 {
					r.rem -= level
					r.cnt--
				}
			}
		}
		if tol >= 1 {
			for _, f := range comp {
				if !f.fixed {
					fix(f)
				}
			}
		}
		for _, r := range cres {
			if r.cnt > 0 && r.rem/float64(r.cnt) <= tol {
				for _, f := range r.flows {
					if !f.fixed {
						fix(f)
					}
				}
			}
		}
		if !fixedAny {
			break // cannot happen: something is at the level
		}
	}
	return rates
}

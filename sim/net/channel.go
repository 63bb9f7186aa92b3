package net

import "github.com/msgsim/msgsim/sim"

// Channel is a physical channel: the wire whose bandwidth the virtual
// channels multiplexed on it share (the Links whose Phys it is; they have
// the channel's latency and data rate). A virtual channel keeps its own
// buffer and wormhole holding; the Channel decides whose bytes flow. A
// unit's bytes cross the virtual channel only while the unit holds the
// Channel: it takes it when its head enters the virtual channel and keeps
// it until its tail has passed, but gives it up whenever it stands still
// (its head waits downstream), so a stalled worm never keeps the wire
// busy. A moving worm holds the Channel of every link it occupies (not yet
// passed by its tail); a worm that resumes collects them again, in the
// network's fixed order of Channels (see the package comment). Units
// waiting for a Channel are served round-robin among its virtual channels,
// FIFO within one.
//
// Like a Link, a Channel keeps inline only what every unit crossing it
// touches; its queue and what only contention uses are allocated when
// first needed, and its name is derived from its id when asked for.
type Channel struct {
	holder   *unit
	freeAt   sim.Time // sim.Forever while its holder's release is unknown
	flowFrom sim.Time
	seq      uint64 // the network's order of Channels; 0 until first needed
	grants   uint64 // ChannelStats.Grants
	busy     sim.Time
	in       [2]input     // the virtual channels granted last and before (grants > 0); the others are in x.inputs
	x        *channelRare // nil until contention or a second virtual channel needs it
	names    *Names
	fr       *flowRes // the flow model's use of the channel
	id       uint32   // the channel's name is names.Name(id)
	flowing  bool     // the holder's bytes are flowing (not merely reserved)
	pending  bool
	queued   bool // units wait in x.waiters (kept here: every unit asking reads it)
}

// channelRare is the part of a Channel that only contention and channels
// with more than one virtual channel in use need.
type channelRare struct {
	waiters  []*unit
	inputs   []input // virtual channels seen besides in, with their last grant
	grantFn  func()
	eng      *sim.Engine
	waits    uint64
	waited   sim.Time
	maxQueue int
}

func (c *Channel) rare() *channelRare {
	if c.x == nil {
		c.x = &channelRare{}
	}
	return c.x
}

// waiters is the channel's queue.
func (c *Channel) waiters() []*unit {
	if c.x == nil {
		return nil
	}
	return c.x.waiters
}

// ChannelStats counts a physical channel's use.
type ChannelStats struct {
	Grants   uint64   // times a unit took the channel (again after each stall)
	Busy     sim.Time // total time bytes flowed over it
	Waits    uint64   // times a unit found it busy
	Waited   sim.Time // total time units waited for it
	MaxQueue int      // most units ever waiting at once
}

// NewChannel returns an idle physical channel; set the Phys of its virtual
// channels to it.
func NewChannel(name string) *Channel { return &Channel{names: fixedName(name)} }

// InitNamedChannel makes *c an idle physical channel, in place (see
// LinkKind.InitLink), whose name is names' name of id, derived when asked
// for. c must not be copied afterwards.
func InitNamedChannel(c *Channel, names *Names, id uint32) { *c = Channel{names: names, id: id} }

// Name is the channel's name.
func (c *Channel) Name() string { return c.names.name(c.id) }

// Stats returns the channel's use so far.
func (c *Channel) Stats() ChannelStats {
	s := ChannelStats{Grants: c.grants, Busy: c.busy}
	if x := c.x; x != nil {
		s.Waits, s.Waited, s.MaxQueue = x.waits, x.waited, x.maxQueue
	}
	return s
}

// free reports whether a unit asking at now may take the channel at once.
func (c *Channel) free(now sim.Time) bool { return !c.queued && now >= c.freeAt }

// take gives the channel to u, arriving through virtual channel vc; its
// bytes do not flow yet.
func (c *Channel) take(u *unit, vc *Link) {
	c.holder, c.freeAt, c.flowing = u, sim.Forever, false
	// As Link.noteGrant does.
	if c.in[0].from == vc {
		c.grants++
		c.in[0].last = c.grants
		return
	}
	c.noteOther(vc)
}

// noteOther records a grant through a virtual channel other than the one
// granted last.
func (c *Channel) noteOther(vc *Link) {
	c.grants++
	switch {
	case c.in[0].last == 0:
	case c.in[1].last == 0 || c.in[1].from == vc:
		c.in[1] = c.in[0]
	default:
		demote(&c.rare().inputs, c.in[1], vc)
		c.in[1] = c.in[0]
	}
	c.in[0] = input{from: vc, last: c.grants}
}

// flow starts the holder's bytes flowing at now.
func (c *Channel) flow(now sim.Time) {
	c.flowing = true
	c.flowFrom = now
}

// release ends the holder's use at t (>= its flow start), or at once when
// it only reserved the channel.
func (c *Channel) release(t sim.Time) {
	if c.flowing {
		c.busy += t - c.flowFrom
		c.flowing = false
	}
	c.freeAt = t
	c.schedule()
}

func (c *Channel) lastGrant(vc *Link) uint64 {
	for _, in := range c.in {
		if in.last > 0 && in.from == vc {
			return in.last
		}
	}
	if c.x != nil {
		for _, in := range c.x.inputs {
			if in.from == vc {
				return in.last
			}
		}
	}
	return 0
}

// wait queues u, which needs the channel for its link route[i].
func (c *Channel) wait(u *unit, i int32, now sim.Time) {
	u.waitP, u.waitVC, u.waitPFrom = c, i, now
	x := c.rare()
	x.waiters = append(x.waiters, u)
	c.queued = true
	x.waits++
	x.maxQueue = max(x.maxQueue, len(x.waiters))
	if x.grantFn == nil {
		x.eng = u.eng
		x.grantFn = c.grantNext
	}
	c.schedule()
}

// schedule arranges a grant when the channel frees, if anyone waits and
// its release time is known. The test whether anyone waits is inlined
// at the call.
func (c *Channel) schedule() {
	if c.queued {
		c.scheduleWaiter()
	}
}

func (c *Channel) scheduleWaiter() {
	if c.pending || c.freeAt == sim.Forever {
		return
	}
	c.pending = true
	c.x.eng.At(c.freeAt, c.x.grantFn)
}

// grantNext runs when the channel frees with units waiting: the virtual
// channel granted least recently wins, FIFO within it.
func (c *Channel) grantNext() {
	c.pending = false
	x := c.x
	if len(x.waiters) == 0 {
		return
	}
	now := x.eng.Now()
	if now < c.freeAt {
		c.schedule()
		return
	}
	best := 0
	prev := x.waiters[0].vcWaited()
	bl := c.lastGrant(prev)
	for i := 1; i < len(x.waiters) && bl > 0; i++ {
		// FIFO within a virtual channel: as Link.pick.
		if vc := x.waiters[i].vcWaited(); vc != prev {
			prev = vc
			if g := c.lastGrant(vc); g < bl {
				best, bl = i, g
			}
		}
	}
	u := x.waiters[best]
	c.dequeue(best)
	x.waited += now - u.waitPFrom
	u.waitP = nil
	c.take(u, u.route[u.waitVC])
	u.needAt++
	u.collectNext()
}

func (c *Channel) dequeue(i int) {
	w := c.x.waiters
	for k := i + 1; k < len(w); k++ { // as Link.pick
		w[k-1] = w[k]
	}
	w[len(w)-1] = nil
	c.x.waiters = w[:len(w)-1]
	c.queued = len(w) > 1
}

// remove takes u out of the queue (a unit aborted while waiting).
func (c *Channel) remove(u *unit) {
	for i, w := range c.waiters() {
		if w == u {
			c.dequeue(i)
			return
		}
	}
}

func (u *unit) vcWaited() *Link { return u.route[u.waitVC] }

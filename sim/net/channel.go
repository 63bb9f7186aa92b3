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
type Channel struct {
	Name string

	holder   *unit
	freeAt   sim.Time // sim.Forever while its holder's release is unknown
	flowing  bool     // the holder's bytes are flowing (not merely reserved)
	flowFrom sim.Time
	seq      uint64 // the network's order of Channels; 0 until first needed
	waiters  []*unit
	inputs   []input // virtual channels seen, with their last grant
	grants   uint64
	pending  bool
	grantFn  func()
	eng      *sim.Engine

	stats ChannelStats
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
func NewChannel(name string) *Channel { return &Channel{Name: name} }

// Stats returns the channel's use so far.
func (c *Channel) Stats() ChannelStats { return c.stats }

// free reports whether a unit asking at now may take the channel at once.
func (c *Channel) free(now sim.Time) bool { return len(c.waiters) == 0 && now >= c.freeAt }

// take gives the channel to u, arriving through virtual channel vc; its
// bytes do not flow yet.
func (c *Channel) take(u *unit, vc *Link) {
	c.holder = u
	c.freeAt = sim.Forever
	c.flowing = false
	c.grants++
	c.stats.Grants++
	for i := range c.inputs {
		if c.inputs[i].from == vc {
			// To the front, as Link.noteGrant does.
			c.inputs[i] = c.inputs[0]
			c.inputs[0] = input{from: vc, last: c.grants}
			return
		}
	}
	c.inputs = append(c.inputs, input{from: vc, last: c.grants})
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
		c.stats.Busy += t - c.flowFrom
		c.flowing = false
	}
	c.freeAt = t
	c.schedule()
}

func (c *Channel) lastGrant(vc *Link) uint64 {
	for _, in := range c.inputs {
		if in.from == vc {
			return in.last
		}
	}
	return 0
}

// wait queues u, which needs the channel for its link route[i].
func (c *Channel) wait(u *unit, i int, now sim.Time) {
	u.waitP, u.waitVC, u.waitPFrom = c, i, now
	c.waiters = append(c.waiters, u)
	c.stats.Waits++
	c.stats.MaxQueue = max(c.stats.MaxQueue, len(c.waiters))
	if c.grantFn == nil {
		c.eng = u.net.eng
		c.grantFn = c.grantNext
	}
	c.schedule()
}

// schedule arranges a grant when the channel frees, if anyone waits and
// its release time is known.
func (c *Channel) schedule() {
	if c.pending || len(c.waiters) == 0 || c.freeAt == sim.Forever {
		return
	}
	c.pending = true
	c.eng.At(c.freeAt, c.grantFn)
}

// grantNext runs when the channel frees with units waiting: the virtual
// channel granted least recently wins, FIFO within it.
func (c *Channel) grantNext() {
	c.pending = false
	if len(c.waiters) == 0 {
		return
	}
	now := c.eng.Now()
	if now < c.freeAt {
		c.schedule()
		return
	}
	best := 0
	bl := c.lastGrant(c.waiters[0].vcWaited())
	for i := 1; i < len(c.waiters) && bl > 0; i++ {
		if g := c.lastGrant(c.waiters[i].vcWaited()); g < bl {
			best, bl = i, g
		}
	}
	u := c.waiters[best]
	c.dequeue(best)
	c.stats.Waited += now - u.waitPFrom
	u.waitP = nil
	c.take(u, u.route[u.waitVC])
	u.needAt++
	u.collectNext()
}

func (c *Channel) dequeue(i int) {
	copy(c.waiters[i:], c.waiters[i+1:])
	c.waiters[len(c.waiters)-1] = nil
	c.waiters = c.waiters[:len(c.waiters)-1]
}

// remove takes u out of the queue (a unit aborted while waiting).
func (c *Channel) remove(u *unit) {
	for i, w := range c.waiters {
		if w == u {
			c.dequeue(i)
			return
		}
	}
}

func (u *unit) vcWaited() *Link { return u.route[u.waitVC] }

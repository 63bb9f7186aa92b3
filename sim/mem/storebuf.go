package mem

import "github.com/msgsim/msgsim/sim"

// sbEntry is one buffered store: a word, or a whole bulk copy.
type sbEntry struct {
	a     Addr
	n     int
	small [8]byte
	big   []byte
	// shared: big is shared bytes (Memory.SharedView), held, not copied,
	// and never written; the drain shares them (Memory.WriteShared).
	shared bool
}

func (e *sbEntry) bytes() []byte {
	if e.big != nil {
		return e.big
	}
	return e.small[:e.n]
}

// enqueue appends a store to the buffer. The caller has made room. Shared
// bytes (shared true) are held, not copied.
func (c *CPU) enqueue(a Addr, b []byte, shared bool) {
	e := sbEntry{a: a, n: len(b), shared: shared}
	if shared {
		e.big = b
	} else if len(b) <= len(e.small) {
		copy(e.small[:], b)
	} else {
		e.big = c.getBuf(len(b))
		copy(e.big, b)
	}
	c.sb = append(c.sb, e)
	if !c.draining {
		c.draining = true
		c.eng.After(c.nextDrain(), c.drainFn)
	}
}

// drain makes one buffered store globally visible: the oldest (fifo), or a
// random one among those with no older store to the same line (reordered).
func (c *CPU) drain() {
	i := 0
	if c.cfg.StoreBuffer.Order == OrderReordered && len(c.sb) > 1 {
		c.eligible = c.eligible[:0]
		for j := range c.sb {
			if !c.olderSameLine(j) {
				c.eligible = append(c.eligible, j)
			}
		}
		// One eligible store leaves no choice: no random number is drawn
		// for it (a zero-width draw would make a run look seed-dependent).
		if len(c.eligible) > 1 {
			i = c.eligible[c.eng.Rand().IntN(len(c.eligible))]
		} else {
			i = c.eligible[0]
		}
	}
	e := c.sb[i]
	copy(c.sb[i:], c.sb[i+1:])
	c.sb[len(c.sb)-1] = sbEntry{}
	c.sb = c.sb[:len(c.sb)-1]
	c.writeThroughAs(e.a, e.bytes(), e.shared)
	if e.big != nil && !e.shared {
		c.free = append(c.free, e.big)
	}
	c.sbWait.WakeAll()
	if len(c.sb) > 0 {
		c.eng.After(c.nextDrain(), c.drainFn)
	} else {
		c.draining = false
	}
}

// nextDrain is the delay to the next drain: drain_cycles, plus a random
// [0, drain_jitter_cycles) if that is wider than one picosecond (a
// narrower range holds only 0: no random number is drawn for it).
func (c *CPU) nextDrain() sim.Time {
	if c.drainJitter <= 1 {
		return c.drainDelay
	}
	return c.drainDelay + sim.Time(c.eng.Rand().Int64N(int64(c.drainJitter)))
}

// olderSameLine reports whether an older entry than j touches a line j touches.
func (c *CPU) olderSameLine(j int) bool {
	lo, hi := c.lineOf(c.sb[j].a), c.lineOf(c.sb[j].a+Addr(c.sb[j].n-1))
	for k := 0; k < j; k++ {
		l2, h2 := c.lineOf(c.sb[k].a), c.lineOf(c.sb[k].a+Addr(c.sb[k].n-1))
		if l2 <= hi && lo <= h2 {
			return true
		}
	}
	return false
}

// forward overlays this CPU's buffered stores, oldest first, on b (the bytes
// at a as memory or the cache has them).
func (c *CPU) forward(a Addr, b []byte) {
	if !c.cfg.StoreBuffer.Forwarding {
		return
	}
	end := a + Addr(len(b))
	for k := range c.sb {
		e := &c.sb[k]
		ea, ee := e.a, e.a+Addr(e.n)
		if ea >= end || a >= ee {
			continue
		}
		lo, hi := max(a, ea), min(end, ee)
		copy(b[lo-a:hi-a], e.bytes()[lo-ea:hi-ea])
	}
}

func (c *CPU) getBuf(n int) []byte {
	for i := len(c.free) - 1; i >= 0; i-- {
		if cap(c.free[i]) >= n {
			b := c.free[i][:n]
			c.free[i] = c.free[len(c.free)-1]
			c.free = c.free[:len(c.free)-1]
			return b
		}
	}
	return make([]byte, n)
}

// forwards reports whether a buffered store this CPU forwards to its own
// loads overlaps [a, a+n).
func (c *CPU) forwards(a Addr, n int) bool {
	if !c.cfg.StoreBuffer.Forwarding {
		return false
	}
	end := a + Addr(n)
	for k := range c.sb {
		if e := &c.sb[k]; e.a < end && a < e.a+Addr(e.n) {
			return true
		}
	}
	return false
}

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

// storeBuf is a CPU's store buffer, built with the CPU when its model has
// one (StoreBuffer.Depth > 0): a machine whose CPUs have none (the T3D's
// million PEs) keeps none of this.
type storeBuf struct {
	sb          []sbEntry
	draining    bool
	drainDelay  sim.Time
	drainJitter sim.Time // span of the random extra drain delay; 0: none
	drainFn     func()   // the CPU's drain, bound once
	wait        sim.WaitQueue
	eligible    []int
}

// buffered is the CPU's buffered stores, oldest first (none without a
// store buffer).
func (c *CPU) buffered() []sbEntry {
	if c.sbuf == nil {
		return nil
	}
	return c.sbuf.sb
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
	s := c.sbuf
	s.sb = append(s.sb, e)
	if pl := c.poll; pl != nil && pl.armed {
		pl.written(a, len(b)) // another thread's store: this CPU's loads see it
	}
	if !s.draining {
		s.draining = true
		c.eng.After(c.nextDrain(), s.drainFn)
	}
}

// drain makes one buffered store globally visible: the oldest (fifo), or a
// random one among those with no older store to the same line (reordered).
func (c *CPU) drain() {
	s := c.sbuf
	i := 0
	if c.cfg.StoreBuffer.Order == OrderReordered && len(s.sb) > 1 {
		s.eligible = s.eligible[:0]
		for j := range s.sb {
			if !c.olderSameLine(j) {
				s.eligible = append(s.eligible, j)
			}
		}
		// One eligible store leaves no choice: no random number is drawn
		// for it (a zero-width draw would make a run look seed-dependent).
		if len(s.eligible) > 1 {
			i = s.eligible[c.eng.Rand().IntN(len(s.eligible))]
		} else {
			i = s.eligible[0]
		}
	}
	e := s.sb[i]
	copy(s.sb[i:], s.sb[i+1:])
	s.sb[len(s.sb)-1] = sbEntry{}
	s.sb = s.sb[:len(s.sb)-1]
	c.writeThroughAs(e.a, e.bytes(), e.shared)
	if e.big != nil && !e.shared {
		c.release(e.big)
	}
	s.wait.WakeAll()
	if len(s.sb) > 0 {
		c.eng.After(c.nextDrain(), s.drainFn)
	} else {
		s.draining = false
	}
}

// nextDrain is the delay to the next drain: drain_cycles, plus a random
// [0, drain_jitter_cycles) if that is wider than one picosecond (a
// narrower range holds only 0: no random number is drawn for it).
func (c *CPU) nextDrain() sim.Time {
	s := c.sbuf
	if s.drainJitter <= 1 {
		return s.drainDelay
	}
	return s.drainDelay + sim.Time(c.eng.Rand().Int64N(int64(s.drainJitter)))
}

// olderSameLine reports whether an older entry than j touches a line j touches.
func (c *CPU) olderSameLine(j int) bool {
	sb := c.sbuf.sb
	lo, hi := c.lineOf(sb[j].a), c.lineOf(sb[j].a+Addr(sb[j].n-1))
	for k := 0; k < j; k++ {
		l2, h2 := c.lineOf(sb[k].a), c.lineOf(sb[k].a+Addr(sb[k].n-1))
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
	sb := c.buffered()
	for k := range sb {
		e := &sb[k]
		ea, ee := e.a, e.a+Addr(e.n)
		if ea >= end || a >= ee {
			continue
		}
		lo, hi := max(a, ea), min(end, ee)
		copy(b[lo-a:hi-a], e.bytes()[lo-ea:hi-ea])
	}
}

func (c *CPU) getBuf(n int) []byte {
	s := c.scratch()
	for i := len(s.free) - 1; i >= 0; i-- {
		if cap(s.free[i]) >= n {
			b := s.free[i][:n]
			s.free[i] = s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
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
	sb := c.buffered()
	for k := range sb {
		if e := &sb[k]; e.a < end && a < e.a+Addr(e.n) {
			return true
		}
	}
	return false
}

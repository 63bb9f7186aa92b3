package mem

import (
	"encoding/binary"

	"github.com/msgsim/msgsim/sim"
)

// StoreWords is Store of each word in turn at a, a+8, ... (8 bytes each),
// for a buffer no other processor reads before the last store's time (a
// packet or header a process builds in its own memory before it sends it).
// Without a store buffer, where the engine merges p's steps (not bound to
// a Core, no schedule exploration, not run step by step), the words are
// written at once and their stores' times slept as one run of steps
// (sim.Proc.SleepSteps): the same events in the same order as Store by
// Store, so the process resumes at the same time and in the same order
// among same-time events (nobody reads the words before then), with one
// coroutine switch pair instead of one per store. Otherwise it is Store of
// each word.
func (c *CPU) StoreWords(p *sim.Proc, a Addr, words ...uint64) {
	if c.polling {
		c.notInPoll("StoreWords")
	}
	if !c.merges(p) {
		for i, w := range words {
			c.Store(p, a+Addr(8*i), 8, w)
		}
		return
	}
	var b [8]byte
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[:], w)
		c.writeThrough(a+Addr(8*i), b[:])
	}
	c.stats.Stores += uint64(len(words))
	p.SleepSteps(sim.Steps{N: len(words), D: c.clock.Cycles(c.cfg.Costs.StoreCycles)})
}

// merges reports whether a run of this CPU's timed steps whose effects
// only p's program sees (its own stores without a store buffer, its own
// cache's invalidations) can be done at once and their times slept as one
// run of steps: the engine merges p's steps (sim.Engine.Merging: not run
// step by step, p has the processor to itself and no explorer needs each
// step's footprint), and p's stores need no bus transaction (no snooping
// bus).
func (c *CPU) merges(p *sim.Proc) bool {
	return c.cfg.StoreBuffer.Depth == 0 && c.bus == nil && c.eng.Merging(p)
}

// StoreNow is Store's effect at once, counted as a store, without its
// time: for a model that charges a run of its steps as one run of steps
// (sim.Proc.SleepSteps; as PeekUncached and CountUncached do for loads),
// which charges StoreCycles itself. It reports false and does nothing when the CPU has a store
// buffer (a store may have to wait for room in it) or is on a snooping bus
// (a store may need a bus transaction): Store then.
func (c *CPU) StoreNow(a Addr, size int, v uint64) bool {
	if c.cfg.StoreBuffer.Depth > 0 || c.bus != nil {
		return false
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	c.stats.Stores++
	c.writeThrough(a, b[:size])
	return true
}

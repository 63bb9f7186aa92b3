package mem

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// StoreRun runs fill once: a run of stores the program makes to its own
// bytes, one after another (a packet header or a request block it
// builds). fill may only store (Store) and compute (Compute, Execute,
// Delay), and
// what it stores must not depend on when it runs: it reads nothing
// another processor writes. Run step by step, it is fill as written.
//
// Where nothing can observe the difference, the run is one event, not one
// per store (merging): fill runs at once, each Store given the instant it
// would be issued at (one store after the previous operation), and the
// process then sleeps until the run's end. Each store still becomes
// visible at its own instant: the memory holds the run's stores aside, and
// anything that reads or writes bytes in their range meanwhile (another
// processor's load or store, a put reading them or landing on them, a
// peek) first makes visible those whose instant has come; from then on
// each remaining one is made visible at its instant by an event of its
// own, so that a spinner that starts watching them is woken when the
// store lands. A store whose instant another agent's event shares is
// visible to that event here, while a store issued on its own is visible
// to it only if the store's event was scheduled first (as Poll's loads).
//
// The CPU merges a run when the engine merges p's steps
// (sim.Engine.Merging), stores take time, the CPU has no store buffer and
// is on no snooping bus, and no other run is held on its memory. When a
// spinner or a poll already watches bytes of the run, its stores are made
// visible one by one at their instants as p sleeps between them. A fill
// that does anything else than the operations above (a load, a fence, a
// sleep of its own) is a bug in the calling model: the CPU panics.
func (c *CPU) StoreRun(p *sim.Proc, fill func()) {
	if c.polling {
		if c.filling {
			fill() // inside a merged run's fill: part of it
			return
		}
		c.notInPoll("StoreRun")
	}
	store := c.clock.Cycles(c.cfg.Costs.StoreCycles)
	if store <= 0 || c.sbuf != nil || c.bus != nil || c.mem.held != nil || !c.eng.Merging(p) {
		fill()
		return
	}
	r := c.run
	if r == nil {
		r = &storeRun{cpu: c}
		r.stores = r.first[:0]
		c.run = r
	}
	now := p.Now()
	r.proc, r.store, r.vt = p, store, now
	r.stores, r.next, r.timed = r.stores[:0], 0, false
	r.lo, r.hi = ^Addr(0), 0
	c.polling, c.filling = true, true
	fill()
	c.polling, c.filling = false, false
	if p.Now() != now {
		panic(fmt.Sprintf("cpu %s: a store run's fill took time of its own (it slept or waited): it may only store and compute (a bug in the calling model)", c.name))
	}
	c.stats.Stores += uint64(len(r.stores))
	switch {
	case len(r.stores) == 0:
		p.Sleep(r.vt - now)
	case c.mem.watches(r.lo, r.hi):
		r.oneByOne()
	default:
		c.mem.held = r
		p.Sleep(r.vt - now)
		r.finish()
	}
	r.proc = nil
}

// storeRun is a CPU's store run in progress (StoreRun), kept for reuse.
type storeRun struct {
	cpu   *CPU
	proc  *sim.Proc // the storing process; nil between runs
	store sim.Time  // one store
	vt    sim.Time  // the instant fill's next operation is issued at
	// stores are the run's stores in issue order; stores[:next] are
	// visible. [lo, hi) bounds their bytes.
	stores []heldStore
	first  [2]heldStore // stores' first array: a run of a word or two takes no other
	next   int
	lo, hi Addr
	// timed: something looked at the run's bytes before the run's end;
	// each remaining store is made visible at its instant (tick, ev).
	timed    bool
	ev       sim.Handle
	tickFn   func() // tick, bound the first time the run is timed
	applying bool   // a held store is being written: its own touch is not a look
}

// heldStore is one store of a run: size bytes of v at a, issued at at.
type heldStore struct {
	a    Addr
	v    uint64
	at   sim.Time
	size uint8
}

// add is a Store inside a merged run's fill.
func (r *storeRun) add(p *sim.Proc, a Addr, size int, v uint64) {
	if p != r.proc {
		panic(fmt.Sprintf("cpu %s: a store run's fill stores for process %s while %s runs it (a bug in the calling model)", r.cpu.name, p.Name(), r.proc.Name()))
	}
	r.cpu.mem.check(a, size)
	r.stores = append(r.stores, heldStore{a: a, v: v, at: r.vt, size: uint8(size)})
	r.vt += r.store
	r.lo, r.hi = min(r.lo, a), max(r.hi, a+Addr(size))
}

// advance is d of the fill's own work (Compute, Delay) inside a merged run.
func (r *storeRun) advance(p *sim.Proc, d sim.Time) {
	if p != r.proc {
		panic(fmt.Sprintf("cpu %s: a store run's fill computes for process %s while %s runs it (a bug in the calling model)", r.cpu.name, p.Name(), r.proc.Name()))
	}
	r.vt += max(d, 0)
}

// apply makes store i visible, as Store would have: memory (waking the
// spinners and polls watching it) and this CPU's cached copies.
func (r *storeRun) apply(i int) {
	h := &r.stores[i]
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h.v)
	r.applying = true
	r.cpu.writeThrough(h.a, b[:h.size])
	r.applying = false
}

// due makes visible every held store issued at or before t.
func (r *storeRun) due(t sim.Time) {
	for r.next < len(r.stores) && r.stores[r.next].at <= t {
		r.apply(r.next)
		r.next++
	}
}

// touched: something other than the run reads or writes [a, a+n) of the
// memory while the run is held. The stores due by now become visible
// first; if the look falls in the run's range, the rest become visible at
// their instants.
func (r *storeRun) touched(a Addr, n int) {
	if r.applying || a >= r.hi || a+Addr(n) <= r.lo {
		return
	}
	r.due(r.cpu.eng.Now())
	if !r.timed {
		r.timed = true
		r.schedule()
	}
}

// schedule arranges the next held store's landing at its instant.
func (r *storeRun) schedule() {
	if r.next < len(r.stores) {
		if r.tickFn == nil {
			r.tickFn = r.tick
		}
		r.ev = r.cpu.eng.At(r.stores[r.next].at, r.tickFn)
	}
}

// tick: the next held store's instant has come (timed).
func (r *storeRun) tick() {
	r.ev = sim.Handle{}
	r.due(r.cpu.eng.Now())
	r.schedule()
}

// finish: the run's end; every store is visible and the memory holds the
// run no more.
func (r *storeRun) finish() {
	r.cpu.eng.Cancel(r.ev)
	r.ev = sim.Handle{}
	r.due(sim.Forever)
	r.cpu.mem.held = nil
}

// oneByOne runs the recorded stores as Store would, each visible at its
// instant while the process sleeps between them: for a run whose bytes a
// spinner or a poll already watches.
func (r *storeRun) oneByOne() {
	p := r.proc
	for i := range r.stores {
		p.Sleep(r.stores[i].at - p.Now())
		r.apply(i)
	}
	r.next = len(r.stores)
	p.Sleep(r.vt - p.Now())
}

// watches reports whether a spinner or an armed poll watches bytes of
// [lo, hi).
func (m *Memory) watches(lo, hi Addr) bool {
	for _, w := range m.watchers {
		if w.watches(lo, hi) {
			return true
		}
	}
	for _, pl := range m.polls {
		if pl.armed && lo < pl.hi && pl.lo < hi {
			return true
		}
	}
	return false
}

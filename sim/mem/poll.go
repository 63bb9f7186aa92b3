package mem

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Poll runs check once: one poll of a loop that reads memory, its loads
// timed as issued one after another. check may only load uncached
// (LoadUncached), compute (Compute, Delay) and poll (a Poll inside it is
// part of it), and must leave nothing behind but what its result depends
// on: the CPU may run it again from the start. It returns check's result.
//
// Where nothing can observe the difference, the poll is one event, not
// one per load (merging): check runs at once, each LoadUncached returning
// what memory holds now and being given the instant it would be issued at
// (one uncached load after the previous operation), and the process then
// sleeps until the poll's end. While it sleeps the CPU watches the bytes
// the poll loaded: a write that lands at time w on a word a load issued at
// or after w read, and changes what that load read, makes the CPU run
// check again at w, replaying it: the loads issued before w return what
// they read, the later ones read memory as it is at w, and the poll ends
// when the new run says. The loads read what the same loads issued one by
// one would, except for a write landing at the very instant of a load,
// which that load reads here, while a load issued on its own reads it only
// if the write's event was scheduled before the load's. The run of check that a write causes happens in
// the writer's event, so check must not depend on which process runs it;
// when it moves the poll's end, the process's wake-up is scheduled afresh
// there (sim.Proc.WakeAt). Among the events of the
// poll's last instant the process resumes in the order of that one
// wake-up, scheduled when the poll started or was last moved, not of a
// last load's.
//
// The CPU merges a poll when the engine merges p's steps
// (sim.Engine.Merging: not step by step, no schedule explorer, p alone on
// its processor), no store is buffered, the CPU is on no snooping bus and
// an uncached load takes time; otherwise check runs as is, each load its
// own event. A merged check that does anything else than the operations
// above (a cached load, a store, a peek, a sleep of its own), or that does
// not issue the same loads in the same order when its loads return the same
// values, is a bug in the calling model: the CPU panics.
func (c *CPU) Poll(p *sim.Proc, check func() bool) bool {
	if c.polling { // inside a merged poll's check: part of it
		if c.filling {
			c.notInPoll("Poll")
		}
		return check()
	}
	load := c.clock.Cycles(c.cfg.Costs.UncachedLoadCycles)
	if load <= 0 || c.bus != nil || !c.eng.Merging(p) || len(c.buffered()) > 0 || (c.poll != nil && c.poll.proc != nil) {
		return check()
	}
	pl := c.poll
	if pl == nil {
		pl = &pollState{cpu: c}
		c.poll = pl
		c.mem.polls = append(c.mem.polls, pl)
	}
	now := p.Now()
	pl.proc, pl.check, pl.load, pl.start = p, check, load, now
	pl.recs = pl.recs[:0]
	pl.run(now)
	if p.Now() != now {
		panic(fmt.Sprintf("cpu %s: a poll's check took time of its own (it slept or waited): it may only load uncached and compute (a bug in the calling model)", c.name))
	}
	if pl.end > now {
		pl.armed = true
		p.Sleep(pl.end - now)
		pl.armed = false
	}
	c.stats.Uncached += uint64(len(pl.recs))
	r := pl.result
	pl.proc, pl.check = nil, nil
	return r
}

// pollState is a CPU's merged poll in progress (Poll), kept for reuse.
type pollState struct {
	cpu   *CPU
	proc  *sim.Proc // the polling process; nil between polls
	check func() bool
	load  sim.Time // one uncached load
	start sim.Time // the poll's first instant
	end   sim.Time // the instant the last run of check ends
	// recs are the loads of the last run of check in issue order, what
	// they read and when they are issued.
	recs []pollLoad
	// runs are the starts of recs' runs of increasing addresses (a cyclic
	// scan's loads form at most two), for finding the loads a write hits;
	// [lo, hi) bounds the bytes loaded.
	runs   []int32
	lo, hi Addr
	// The run of check in progress: its next load is recs[k], its next
	// operation is issued at vt, and its loads issued before cut return
	// what they read in the run before (a replay).
	k      int
	vt     sim.Time
	cut    sim.Time
	result bool
	armed  bool   // the process sleeps to end: writes are checked
	reruns uint64 // runs of check a write caused (tests)
}

// pollLoad is one load of a poll: size bytes at a read v, issued at at.
type pollLoad struct {
	a    Addr
	v    uint64
	at   sim.Time
	size int
}

// maxPollRuns is the most runs of increasing addresses the loads a write
// hits are looked up in by binary search; beyond, one pass over them all.
const maxPollRuns = 8

// run runs check from the poll's start, replaying the loads issued before
// now, and indexes what it loaded.
func (pl *pollState) run(now sim.Time) {
	c := pl.cpu
	pl.k, pl.vt, pl.cut = 0, pl.start, now
	c.polling = true
	pl.result = pl.check()
	c.polling = false
	if pl.k < len(pl.recs) {
		if pl.recs[pl.k].at < now {
			panic(fmt.Sprintf("cpu %s: a poll's check returned after %d loads when run again with the same values, against %d before: it is not deterministic (a bug in the calling model)", c.name, pl.k, len(pl.recs)))
		}
		pl.recs = pl.recs[:pl.k]
	}
	pl.end = pl.vt
	pl.runs = pl.runs[:0]
	pl.lo, pl.hi = ^Addr(0), 0
	for i := range pl.recs {
		r := &pl.recs[i]
		if i == 0 || r.a <= pl.recs[i-1].a {
			pl.runs = append(pl.runs, int32(i))
		}
		pl.lo, pl.hi = min(pl.lo, r.a), max(pl.hi, r.a+Addr(r.size))
	}
}

// loadUncached is LoadUncached inside a merged poll's check.
func (pl *pollState) loadUncached(p *sim.Proc, a Addr, size int) uint64 {
	if p != pl.proc {
		panic(fmt.Sprintf("cpu %s: a poll's check loads for process %s while %s polls (a bug in the calling model)", pl.cpu.name, p.Name(), pl.proc.Name()))
	}
	k, at := pl.k, pl.vt
	pl.k++
	pl.vt += pl.load
	if k < len(pl.recs) && pl.recs[k].at < pl.cut {
		r := &pl.recs[k]
		if r.a != a || r.size != size || r.at != at {
			panic(fmt.Sprintf("cpu %s: a poll's check, run again with the same values, issued load %d of %d bytes at %#x at %v, against %d bytes at %#x at %v before: it is not deterministic (a bug in the calling model)",
				pl.cpu.name, k, size, a, at, r.size, r.a, r.at))
		}
		return r.v
	}
	v := pl.cpu.peekUncached(a, size)
	pl.recs = append(pl.recs[:k], pollLoad{a: a, v: v, at: at, size: size})
	return v
}

// advance is d of the check's own work (Compute, Delay) inside a merged
// poll.
func (pl *pollState) advance(p *sim.Proc, d sim.Time) {
	if p != pl.proc {
		panic(fmt.Sprintf("cpu %s: a poll's check computes for process %s while %s polls (a bug in the calling model)", pl.cpu.name, p.Name(), pl.proc.Name()))
	}
	pl.vt += max(d, 0)
}

// written is a write of [a, a+n) to the memory (or into this CPU's store
// buffer) while the poll sleeps: if it changes what a load issued at or
// after now read, check runs again now and the poll's end moves to where
// the new run ends.
func (pl *pollState) written(a Addr, n int) {
	if a >= pl.hi || a+Addr(n) <= pl.lo {
		return
	}
	now := pl.proc.Now()
	if len(pl.recs) == 0 || pl.recs[len(pl.recs)-1].at < now || !pl.changes(a, n, now) {
		return
	}
	pl.reruns++
	old := pl.end
	pl.run(now)
	if pl.end != old {
		pl.proc.WakeAt(pl.end)
	}
}

// changes reports whether a load of the poll issued at or after now read
// bytes of [a, a+n) and memory now holds something else there.
func (pl *pollState) changes(a Addr, n int, now sim.Time) bool {
	end := a + Addr(n)
	if len(pl.runs) > maxPollRuns {
		for i := range pl.recs {
			if pl.hits(&pl.recs[i], a, end, now) {
				return true
			}
		}
		return false
	}
	for ri, s := range pl.runs {
		e := len(pl.recs)
		if ri+1 < len(pl.runs) {
			e = int(pl.runs[ri+1])
		}
		// The first load of the run that may reach past a (loads are at
		// most 8 bytes, at increasing addresses).
		lo, hi := int(s), e
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if pl.recs[mid].a+8 > a {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		for j := lo; j < e && pl.recs[j].a < end; j++ {
			if pl.hits(&pl.recs[j], a, end, now) {
				return true
			}
		}
	}
	return false
}

// hits reports whether load r, issued at or after now, read bytes of
// [a, end) that memory now holds otherwise.
func (pl *pollState) hits(r *pollLoad, a, end Addr, now sim.Time) bool {
	return r.at >= now && r.a < end && r.a+Addr(r.size) > a && pl.cpu.peekUncached(r.a, r.size) != r.v
}

// notInPoll panics: op is not one a merged poll's check (or a merged
// store run's fill) may do.
func (c *CPU) notInPoll(op string) {
	if c.filling {
		panic(fmt.Sprintf("cpu %s: %s inside a store run's fill: a fill may only store and compute (a bug in the calling model)", c.name, op))
	}
	panic(fmt.Sprintf("cpu %s: %s inside a poll's check: a check may only load uncached and compute (a bug in the calling model)", c.name, op))
}

// advanceRun is d of the program's own work (Compute, Delay) inside a
// merged poll's check or store run's fill.
func (c *CPU) advanceRun(p *sim.Proc, d sim.Time) {
	if c.filling {
		c.run.advance(p, d)
		return
	}
	c.poll.advance(p, d)
}

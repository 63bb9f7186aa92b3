package sim

import (
	"slices"

	"github.com/msgsim/msgsim/sim/internal/calendar"
)

// This file is the engine's hook for a schedule explorer: when several
// processes are ready at the same simulated time (after a declared
// scheduling point, Point, or, WithMemoryPoints, before any memory
// operation through sim/mem), a Chooser installed WithChooser picks
// which runs first (or, WithPreemption, deschedules the process at the
// point), and is told the footprint of every
// step (what it touched: simulated memory, mutexes, processes it woke, the
// state its process shares with its threads), so that it can tell
// independent steps from dependent ones. Without a Chooser the engine
// keeps its own order (first scheduled, first run) and the hook costs one
// nil check per event in Run. Everything the explorer keeps is behind one
// pointer of the Engine, an *Explorer.

// Explorer is the state of a schedule explorer attached to an engine:
// its Chooser and settings, and the bookkeeping of the run it explores.
// Engine.Hooks gives it while a Chooser is installed (nil otherwise); its
// methods are safe on nil, which is how sim/mem asks them.
type Explorer struct {
	chooser Chooser // picks among same-time ready processes; nil: engine order
	cands   []candidate
	items   []calendar.Pending[Time, action] // the calendar's items at the current time (choose)
	alts    []Alt
	foot    []uint64 // footprint of the running step
	preempt bool     // the chooser may deschedule processes (WithPreemption)
	memOn   bool     // memory operations are scheduling points (WithMemoryPoints)
	desched []*Proc  // processes descheduled by the chooser
	// deviations counts the chooser's picks other than the engine's order (positions)
	deviations uint64
}

// exploring reports whether a Chooser is installed.
func (e *Engine) exploring() bool { return e.x != nil && e.x.chooser != nil }

// explorer is e's explorer state, made on first use.
func (e *Engine) explorer() *Explorer {
	if e.x == nil {
		e.x = &Explorer{}
		if e.fp != nil {
			e.fp.x = e.x
		}
	}
	return e.x
}

// Footprint is where a model reports each access it makes (a memory:
// TouchRange) for a schedule explorer's footprint of the running step: a
// no-op but for one test unless a Chooser is installed. A model gets it
// once (Hooks.Footprint) and keeps it; a nil Footprint records nothing.
type Footprint struct {
	x *Explorer // the engine's explorer state, once it has one
}

// TouchRange adds the bytes [a, a+n) of the memory named by key to the
// footprint of the running step (exploring only).
func (f *Footprint) TouchRange(key, a uint64, n int) {
	if f != nil && f.x != nil {
		f.x.TouchRange(key, a, n)
	}
}

// Chooser is the installed Chooser (nil on a nil Explorer).
func (x *Explorer) Chooser() Chooser {
	if x == nil {
		return nil
	}
	return x.chooser
}

// MemoryPoints reports whether memory operations are scheduling points
// (WithMemoryPoints, on an engine that explores): sim/mem asks it before
// every operation and calls Proc.MemoryPoint only when it is true.
func (x *Explorer) MemoryPoints() bool { return x != nil && x.memOn && x.chooser != nil }

// TouchRange adds the bytes [a, a+n) of the memory named by key to the
// footprint of the running step (exploring only).
func (x *Explorer) TouchRange(key, a uint64, n int) {
	if x != nil && x.chooser != nil && n > 0 {
		x.touchRange(key, a, n)
	}
}

// Alt is one alternative at a choice point: an actor (a process) that may
// take the next step.
type Alt struct {
	// ID is the actor's identity, stable across runs of the same model (a
	// process's spawn index): an explorer recognises the same actor at
	// later choice points by it.
	ID int
	// Object names what the actor's next step touches (a lock, a queue, a
	// context-id mask), as the model announced it at a scheduling point
	// (Proc.Point); "" if it did not. It is part of the step's footprint.
	Object string
	// Label describes the step, for printed schedules.
	Label string
}

// Chooser picks one of the alternatives at a choice point (alts has at
// least one element; the first is the one the engine would run). Pick
// returns the index of the one to run, or -1 to abandon the run (an
// explorer pruning a schedule it knows to be redundant): the engine then
// stops as Stop does. Ran reports the footprint of the step just taken:
// the keys it touched (Key, TouchRange), or all when it may have touched
// anything (an engine callback, whose effects on a model's state are not
// tracked); a step the model took without a Pick (a callback) has id -1.
// Two steps are independent when their key sets are disjoint and neither
// is all.
type Chooser interface {
	Pick(alts []Alt) int
	Ran(id int, keys []uint64, all bool)
}

// Key is the footprint key of a named object (FNV-1a of its name): the same
// in every run of a model.
func Key(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h
}

// footGrain is the granularity of memory footprints: 64-byte blocks.
const footGrain = 6

// touch adds key to the footprint of the running step (exploring only).
func (e *Engine) touch(key uint64) {
	if e.exploring() {
		e.x.foot = append(e.x.foot, key)
	}
}

func (x *Explorer) touchRange(key, a uint64, n int) {
	for b := a >> footGrain; b <= (a+uint64(n)-1)>>footGrain; b++ {
		x.foot = append(x.foot, (key^b)*0x9e3779b97f4a7c15)
	}
}

// ShareState declares that p and q share state outside simulated memory
// (the threads of one MPI process share its queues and requests): every
// step of either is dependent on every step of the other.
func (p *Proc) ShareState(q *Proc) { p.rare().domain = q.domainKey() }

func (p *Proc) domainKey() uint64 {
	x := p.rare()
	if x.domain == 0 {
		x.domain = procKey(int(p.id))
	}
	return x.domain
}

// deschedID is the Alt ID of descheduling process id.
func deschedID(id int) int { return -2 - id }

func procKey(id int) uint64 { return Key("proc") ^ uint64(id+1)*0xbf58476d1ce4e5b9 }

// step runs one event under the chooser: a process picked among those
// ready at time at, or a callback; it reports false when the chooser
// abandoned the run.
func (e *Engine) step(at Time, it action) bool {
	x := e.x
	x.foot = x.foot[:0]
	if p := it.proc; p != nil {
		if p = e.choose(at, p); p == nil {
			return !e.stopped
		}
		x.foot = append(x.foot, procKey(int(p.id)), p.domainKey())
		if o := p.object(); o != "" {
			x.foot = append(x.foot, Key(o))
		}
		e.resume(p)
		x.chooser.Ran(int(p.id), x.foot, false)
		e.wakeStranded()
		return true
	}
	it.fn()
	x.chooser.Ran(-1, x.foot, true)
	e.wakeStranded()
	return true
}

// wakeStranded makes ready every descheduled process none of whose
// siblings (the processes sharing its state) can go on: each has ended,
// is descheduled or waits on a mutex or a condition. A descheduled thread
// whose siblings wait for it (a lock it holds, a signal it would send)
// is put back on the CPU, as
// an OS scheduler with nothing else to run in the process would:
// descheduling delays a thread, it does not starve it while the rest of
// the program polls.
func (e *Engine) wakeStranded() {
	x := e.x
	if len(x.desched) == 0 {
		return
	}
	out := x.desched[:0]
	for _, d := range x.desched {
		if e.siblingActive(d) {
			out = append(out, d)
		} else {
			d.Wake()
		}
	}
	x.desched = out
}

// MemoryPoints reports whether p's memory operations are scheduling
// points: an explorer chooses among them (WithMemoryPoints). Memory models
// test it on every operation and call MemoryPoint only when it is true.
func (p *Proc) MemoryPoints() bool { return p.eng.x.MemoryPoints() }

// SetStepByStep turns off (on: true) every mechanism that runs several
// timed steps of a process as one event (mem.CPU.Poll's run of
// loads, a machine's merged operations): each step is then its own event.
// Simulated times are the same either way; tests compare the two.
func (e *Engine) SetStepByStep(on bool) { e.stepByStep = on }

// Merging reports whether a mechanism may run several timed steps of p as
// one event: not when the engine runs step by step, not while a chooser
// explores schedules (whose choices name every step), and not for a
// process bound to a Core (whose steps the core books one by one).
func (e *Engine) Merging(p *Proc) bool {
	return !e.stepByStep && !e.exploring() && p.core == nil
}

// SpinPolls reports whether p, in a spin whose last poll found nothing
// and took time, is to poll again at once, each poll its own timed steps,
// rather than sleep until what it watches is written: the engine runs step
// by step (SetStepByStep), no chooser explores (its choices would multiply
// with every poll), p is bound to no Core (which books a spinner's polls
// as its own work), the run goes on, and some event is pending (else
// nothing can ever end the spin: p blocks, and the run ends in a livelock
// report, as with a sleeping spin). Spinners that wait on one another
// poll until the run's limits.
func (p *Proc) SpinPolls() bool {
	e := p.eng
	if !e.stepByStep || e.exploring() || p.core != nil || e.halt {
		return false
	}
	if e.cal.LaneLen() > 0 {
		return true
	}
	_, ok := e.cal.NextFuture()
	return ok
}

// Point is a scheduling point the model offers: p is about to take a step
// touching object (a lock, a queue, a mask; "" if unknown) described by
// what. Under a Chooser p yields, so that every process ready at this time
// is an alternative and the step is named in it; without one it costs a
// nil check.
func (p *Proc) Point(object, what string) {
	if !p.eng.exploring() {
		return
	}
	x := p.rare()
	x.object, x.point = object, what
	p.Yield()
	x.object, x.point = "", ""
	p.eng.undeschedule(p)
}

// MemoryPoint is the scheduling point of a memory operation (sim/mem
// calls it when Engine.MemoryPoints): p is about to perform the operation
// described by what on the memory block named by object. It is Point,
// except that passing it does not end the descheduling of p's siblings
// (WithPreemption): a descheduled thread stays off the CPU while the
// others run on through their memory operations.
func (p *Proc) MemoryPoint(object, what string) {
	if !p.eng.exploring() {
		return
	}
	x := p.rare()
	x.object, x.point = object, what
	p.Yield()
	x.object, x.point = "", ""
}

// undeschedule makes ready the processes descheduled while p, which shares
// their state, had not yet passed a scheduling point, blocked or ended.
func (e *Engine) undeschedule(p *Proc) {
	x := e.x
	if x == nil || len(x.desched) == 0 {
		return
	}
	k := p.domainKey()
	out := x.desched[:0]
	for _, d := range x.desched {
		if d != p && d.domainKey() == k {
			d.Wake()
		} else {
			out = append(out, d)
		}
	}
	x.desched = out
}

// siblingActive reports whether a process sharing p's state can go on:
// it has not ended, is not descheduled and does not wait on a Mutex or a
// Cond, which another thread of the process must release (it may wait
// for anything else: a message, which another process sends).
func (e *Engine) siblingActive(p *Proc) bool {
	k := p.domainKey()
	for _, q := range e.procs {
		if q == p || q.x == nil || q.x.domain != k || q.state == stateDone {
			continue
		}
		if q.state == stateBlocked && (q.x.mutex != nil || q.x.cond || (e.x != nil && slices.Contains(e.x.desched, q))) {
			continue
		}
		return true
	}
	return false
}

// wakeDescheduled makes every descheduled process ready when nothing else
// can run; it reports whether there was one.
func (e *Engine) wakeDescheduled() bool {
	x := e.x
	if x == nil || len(x.desched) == 0 {
		return false
	}
	for _, d := range x.desched {
		d.Wake()
	}
	x.desched = x.desched[:0]
	return true
}

// candidate is a pending resumption of a process at the current time.
type candidate struct {
	p   *Proc
	ev  *action // its event in the calendar (nil: the one popped)
	h   Handle  // the event's handle (zero in the lane)
	seq uint64
}

// choose asks the chooser which of the processes ready at time at runs
// instead of p, the one the calendar popped. The two resumptions swap
// places: the chosen process runs now and p takes its place in the
// calendar, so nothing is added or removed. It returns nil when the
// chooser abandons the run.
func (e *Engine) choose(at Time, p *Proc) *Proc {
	if p.state == stateDone {
		return p
	}
	x := e.x
	cands := append(x.cands[:0], candidate{p: p})
	x.items = e.cal.PendingAt(at, x.items[:0])
	for _, it := range x.items {
		if a := it.Payload; a.proc != nil && a.proc.state != stateDone {
			cands = append(cands, candidate{p: a.proc, ev: a, h: it.Handle, seq: it.Seq})
		}
	}
	// The engine's own order after p: sequence order.
	for i := 2; i < len(cands); i++ {
		for j := i; j > 1 && cands[j].seq < cands[j-1].seq; j-- {
			cands[j], cands[j-1] = cands[j-1], cands[j]
		}
	}
	x.cands = cands
	alts := x.alts[:0]
	for _, cd := range cands {
		alts = append(alts, cd.p.alt())
	}
	canDesched := x.preempt && p.point() != "" && e.siblingActive(p)
	if canDesched {
		alts = append(alts, Alt{ID: deschedID(int(p.id)), Object: p.object(), Label: p.name + ": is descheduled before it " + p.point()})
	}
	x.alts = alts
	k := x.chooser.Pick(alts)
	if k != 0 {
		x.deviations++
	}
	if k == len(cands) && canDesched {
		p.state = stateBlocked
		p.reason, p.since = "descheduled at: "+p.point(), e.now
		x.desched = append(x.desched, p)
		x.chooser.Ran(deschedID(int(p.id)), []uint64{procKey(int(p.id))}, false)
		return nil
	}
	if k < 0 || k >= len(cands) {
		e.stopped, e.halt = true, true
		return nil
	}
	if k == 0 {
		return p
	}
	ch := cands[k]
	ch.ev.proc = p
	p.sleep, ch.p.sleep = ch.h, Handle{}
	return ch.p
}

// alt describes p as an alternative.
func (p *Proc) alt() Alt {
	if pt := p.point(); pt != "" {
		return Alt{ID: int(p.id), Object: p.object(), Label: p.name + ": " + pt}
	}
	what := "resumes"
	switch p.state {
	case stateSleeping:
		what = "ends its work"
	case stateReady:
		if p.yield == nil {
			what = "starts"
		}
	}
	return Alt{ID: int(p.id), Label: p.name + ": " + what}
}

// positions is a hash of where every process is: its state, the
// scheduling point it waits at or what it is blocked on, and, when busy,
// how long until it resumes (relative to now, so that the same positions
// at two times hash alike), and the number of choices so far that were
// not the engine's own order. With a hash of the model's shared state it
// is a state fingerprint: a run under a Chooser that meets one twice has
// gone round a cycle taking only the engine's own order (a bounded
// explorer's deviations cannot repeat for ever; the cycle can), if what
// the hash leaves out does not matter there. It
// describes only the processes: what the model keeps elsewhere (its Go
// variables, memory it does not hash) is the model's to add or leave out.
func (e *Engine) positions() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	if e.x != nil {
		mix(e.x.deviations)
	} else {
		mix(0)
	}
	for _, p := range e.procs {
		mix(uint64(p.id))
		mix(uint64(p.state))
		switch p.state {
		case stateSleeping:
			if p.sleep.Valid() {
				mix(uint64(p.sleep.At() - e.now))
			}
		case stateBlocked:
			mix(Key(p.blockReason()))
		}
		mix(Key(p.point()))
		mix(Key(p.object()))
	}
	return h
}

// StateSet is the states a model's loop met at its head, each the model's
// hash of its shared state with where every process is (positions). A
// model that retries a loop asks Repeats at its head: under a schedule
// explorer, meeting a state again is a cycle the scheduler can repeat for
// ever, a livelock found in a few rounds instead of by a retry count.
// Without an explorer it never repeats: the model keeps its own count.
type StateSet struct{ seen map[uint64]bool }

// Repeats records p's engine's current state, the model's hash state
// mixed with every process's position, and reports whether the set met it
// before. It is always false when no explorer chooses the schedule.
func (s *StateSet) Repeats(p *Proc, state uint64) bool {
	e := p.eng
	if !e.exploring() {
		return false
	}
	h := (e.positions() ^ state) * 1099511628211
	if s.seen == nil {
		s.seen = map[uint64]bool{}
	}
	if s.seen[h] {
		return true
	}
	s.seen[h] = true
	return false
}

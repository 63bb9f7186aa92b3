package sim

import (
	"fmt"
	"iter"
	"runtime/debug"
	"strconv"
	"strings"
)

type procState uint8

const (
	stateReady    procState = iota // scheduled to run
	stateRunning                   // the one running now
	stateSleeping                  // in Sleep, resumes at a known time
	stateBlocked                   // waits for Wake
	stateDone                      // returned (or killed)
)

// killed unwinds a process's coroutine when its run ends.
type killed struct{}

// Proc is a simulated process (a rank, a thread, an interrupt handler): plain
// Go code run as a coroutine. Its methods may be called only from its own
// code, except Wake and the accessors.
type Proc struct {
	eng      *Engine
	name     string
	next     func() (struct{}, bool)
	stop     func()
	yield    func(struct{}) bool
	id       int32 // the index in spawn order (Engine.procs)
	state    procState
	daemon   bool
	spinning bool
	reason   string
	why      fmt.Stringer // BlockSpinning's reason, formatted only when needed
	since    Time
	core     *Core  // the processor it shares with handlers, if any
	sleep    Handle // its pending wake-up while in Sleep (slow path)
	then     func() // run on the engine's stack once the process has parked (BlockThen)
	x        *procRare
	steps    *procSteps // its SleepSteps, allocated on first use
}

// procRare is the part of a Proc that only schedule exploration and
// mutexes use, allocated when first needed: a machine of a million PEs
// has a million processes that use neither.
type procRare struct {
	object string // at a scheduling point (Point): what its next step touches
	point  string // and what the step is
	domain uint64 // footprint key of the state it shares with other processes (ShareState)
	mutex  *Mutex // the mutex it is blocked on, if any (deadlock reports)
	cond   bool   // it waits on a Cond (schedule exploration: Engine.siblingActive)
}

// rare returns p's rare part, allocating it on first use.
func (p *Proc) rare() *procRare {
	if p.x == nil {
		p.x = &procRare{}
	}
	return p.x
}

// object and point are p's scheduling point (Point), "" outside one.
func (p *Proc) object() string {
	if p.x == nil {
		return ""
	}
	return p.x.object
}

func (p *Proc) point() string {
	if p.x == nil {
		return ""
	}
	return p.x.point
}

// mutex is the mutex p is blocked on, if any.
func (p *Proc) mutex() *Mutex {
	if p.x == nil {
		return nil
	}
	return p.x.mutex
}

// Spawn creates a process that starts running fn at the current time.
func (e *Engine) Spawn(name string, fn func(p *Proc)) *Proc {
	p := &Proc{eng: e, id: int32(len(e.procs)), name: name}
	seq := func(yield func(struct{}) bool) {
		p.yield = yield
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(killed); !ok {
					e.Fail(&ProcessPanic{Proc: p.name, At: e.now, Value: r, Stack: string(debug.Stack())})
				}
			}
		}()
		fn(p)
	}
	p.next, p.stop = iter.Pull(seq)
	e.procs = append(e.procs, p)
	e.live++
	p.state = stateReady
	e.resumeAt(p, e.now)
	return p
}

// NumberedNames returns prefix0, prefix1, ..., prefix<n-1>, substrings of
// one string: two allocations for the names of a million processes or
// PEs, not a million.
func NumberedNames(prefix string, n int) []string {
	var b strings.Builder
	b.Grow(n * (len(prefix) + len(strconv.Itoa(n))))
	names := make([]string, n)
	var num [20]byte
	for i := range names {
		b.WriteString(prefix)
		b.Write(strconv.AppendInt(num[:0], int64(i), 10))
	}
	all, start := b.String(), 0
	for i := range names {
		end := start + len(prefix) + len(strconv.AppendInt(num[:0], int64(i), 10))
		names[i] = all[start:end]
		start = end
	}
	return names
}

// SpawnDaemon is Spawn for a server process (a progress engine, an interrupt
// handler) that may stay blocked forever: it is not a deadlock when the
// other processes have finished.
func (e *Engine) SpawnDaemon(name string, fn func(p *Proc)) *Proc {
	p := e.Spawn(name, fn)
	p.daemon = true
	return p
}

// resume hands control to p until it blocks or returns.
func (e *Engine) resume(p *Proc) {
	if p.state == stateDone {
		return
	}
	if p.core != nil {
		if t, ok := p.core.held(p); ok { // a handler has the processor
			p.state = stateReady
			e.resumeAt(p, t)
			return
		}
	}
	e.cur = p
	p.state = stateRunning
	if e.trace != nil {
		e.trace.State(e.now, p, "running")
	}
	e.resumes++
	_, ok := p.next()
	e.cur = nil
	if f := p.then; f != nil {
		p.then = nil
		if e.driving { // on another process's stack: Run does it next
			e.then, e.halt = f, true
		} else {
			f()
		}
	}
	if !ok {
		p.state = stateDone
		e.live--
		if e.trace != nil {
			e.trace.State(e.now, p, "")
		}
		if e.x != nil && e.x.preempt {
			e.undeschedule(p)
		}
	}
}

func (p *Proc) kill() {
	p.state = stateDone
	p.stop()
}

// park suspends the running process until the engine resumes it (or runs
// the engine loop itself until then when it can: Engine.dispatch; not
// when BlockThen left work that must run on the engine's stack first).
func (p *Proc) park() {
	if p.then == nil && p.eng.dispatch(p) {
		return
	}
	if !p.yield(struct{}{}) {
		panic(killed{})
	}
}

// Name is the process's name, as given to Spawn.
func (p *Proc) Name() string { return p.name }

// ID is the process's index in spawn order.
func (p *Proc) ID() int { return int(p.id) }

// Engine is the engine the process runs in.
func (p *Proc) Engine() *Engine { return p.eng }

// Now is the current simulated time.
func (p *Proc) Now() Time { return p.eng.now }

// Sleep suspends the process for d of simulated time (the cost of work it
// does). A non-positive d returns at once.
//
// A handler process bound to a Core does handler work: it starts when
// earlier handler work on that core ends and, if the core preempts, delays
// the application's computing by d (see Core).
func (p *Proc) Sleep(d Time) {
	if d <= 0 {
		return
	}
	if c := p.core; c != nil && c.app != p {
		d = c.book(p, d)
	}
	if p.eng.advance(d) {
		return
	}
	p.state = stateSleeping
	if p.eng.trace != nil {
		p.eng.trace.State(p.eng.now, p, "busy")
	}
	p.sleep = p.eng.cal.Schedule(p.eng.now+d, p.eng.now, action{proc: p})
	p.park()
}

// Bound reports whether p shares a processor with others through a Core
// (its sleeps are booked there and may be moved by preemption).
func (p *Proc) Bound() bool { return p.core != nil }

// Yield lets every other process ready at the current time run first.
func (p *Proc) Yield() {
	p.state = stateReady
	p.eng.cal.Ready(action{proc: p})
	p.park()
}

// Block suspends the process until another process or callback calls Wake.
// reason says what it waits on; it appears in deadlock reports and traces.
func (p *Proc) Block(reason string) {
	p.block(reason, false)
}

// BlockThen is Block that first runs fn, on the engine's stack, once the
// process has parked and before anything else happens: as if the process
// ran fn just before blocking. fn must not wait. It is for work that
// starts at this instant and goes deep (injecting a message into a
// network), so that it does not grow the process's own stack: a process
// of a million-PE run costs the stack it parks with.
func (p *Proc) BlockThen(reason string, fn func()) {
	p.then = fn
	p.block(reason, false)
}

// BlockSpinning is Block for a process that, in the machine it models, is
// busy-polling a location: if nothing can ever wake it the run ends in a
// livelock rather than a deadlock report. The reason (a Reason, or any
// fmt.Stringer) is formatted only when a report or a trace needs it: a
// spin that the run wakes, as nearly all are, costs no formatting.
func (p *Proc) BlockSpinning(why fmt.Stringer) {
	p.why = why
	p.block("", true)
	p.why = nil
}

// Reason is a reason for BlockSpinning given as a plain string.
type Reason string

func (r Reason) String() string { return string(r) }

func (p *Proc) block(reason string, spinning bool) {
	p.state = stateBlocked
	p.reason = reason
	p.spinning = spinning
	p.since = p.eng.now
	if p.eng.trace != nil { // the state string is built only when traced
		if spinning {
			p.eng.trace.State(p.eng.now, p, "spin: "+p.blockReason())
		} else {
			p.eng.trace.State(p.eng.now, p, "wait: "+p.blockReason())
		}
	}
	p.park()
	p.spinning = false
	p.reason = ""
}

// blockReason is what a blocked process waits on.
func (p *Proc) blockReason() string {
	if p.why != nil {
		return p.why.String()
	}
	return p.reason
}

// Blocked reports whether p waits in Block, BlockThen or BlockSpinning.
func (p *Proc) Blocked() bool { return p.state == stateBlocked }

// Wake makes a blocked process ready at the current time. Waking a process
// that is not blocked does nothing and reports false.
func (p *Proc) Wake() bool {
	if p.state != stateBlocked {
		return false
	}
	p.eng.touch(procKey(int(p.id)))
	p.state = stateReady
	p.eng.resumeAt(p, p.eng.now)
	return true
}

// WakeAt makes p resume at time t (now if t is earlier); it reports
// whether p was blocked or sleeping. A blocked process becomes ready at t,
// and Wake calls before t do nothing: one event, the resumption itself,
// for a waker that already knows when the process will notice (a
// spinner's next poll). A wake that an earlier Wake should override is a
// callback instead: Engine.After(d, func() { p.Wake() }). A process in
// Sleep ends its sleep at t instead, for a waker that knows a timed
// operation of p is cut short or extended by what happened meanwhile
// (mem.CPU.Poll: a write that lands in the middle of a poll of
// many words); its wake-up is scheduled afresh (a new sequence number, as
// if p had scheduled it now). A process bound to a Core (Bound) is not to
// have its sleeps moved: they are booked on the core.
func (p *Proc) WakeAt(t Time) bool {
	e := p.eng
	t = max(t, e.now)
	switch {
	case p.state == stateBlocked:
		e.touch(procKey(int(p.id)))
		p.state = stateReady
		e.resumeAt(p, t)
	case p.state != stateSleeping || !p.sleep.Valid():
		return false
	case p.sleep.At() != t:
		e.cal.Cancel(p.sleep)
		p.sleep = e.cal.Schedule(t, e.now, action{proc: p})
	}
	return true
}

func (p *Proc) waiter() Waiter {
	reason := p.blockReason()
	switch p.state {
	case stateReady, stateRunning:
		reason = "runnable"
	case stateSleeping:
		reason = "busy (sleeping)"
	}
	return Waiter{Proc: p.name, Reason: reason, Since: p.since, Spinning: p.spinning}
}

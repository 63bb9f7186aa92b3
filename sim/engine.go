package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/msgsim/msgsim/sim/internal/calendar"
)

// action is what an event does: resume a process, or call fn.
type action struct {
	proc *Proc
	fn   func()
}

// Handle names a scheduled callback so that it can be cancelled. Its
// Valid reports whether it names an event (the zero Handle does not), its
// At the time the event was scheduled for.
type Handle = calendar.Handle[Time]

// Limits bound a run so that none hangs. Zero means no limit.
type Limits struct {
	MaxEvents uint64        // events executed
	MaxTime   Time          // simulated time
	MaxWall   time.Duration // wall-clock time
	// NoProgress is how long processes may retry with no progress before
	// the run is a livelock (Engine.Retry; 0: DefaultNoProgress; negative:
	// never).
	NoProgress Time
}

// Engine runs one simulation. It is a value: nothing about it is global.
// Only one process runs at a time, resumed by Run's loop, so simulated code
// needs no locks.
type Engine struct {
	now Time
	// stepByStep turns the merging of steps off (SetStepByStep).
	stepByStep bool
	cal        calendar.Calendar[Time, action]
	rng        *rand.Rand
	procs      []*Proc
	live       int // processes not yet finished
	cur        *Proc
	limits     Limits
	horizon    Time   // limits.MaxTime, or Forever: no event later runs
	maxEv      uint64 // limits.MaxEvents, or no limit: no more events run
	events     uint64
	// resumes counts the times a process's coroutine was entered (by Run,
	// or from another process's stack: dispatch), each a coroutine switch
	// into it and one back; a process that goes on without parking
	// (Sleep's fast path) or whose own resumption its own loop runs is not
	// counted: it switched nothing. Tests read it.
	resumes uint64
	// lastProgress and retries are the livelock detector's (Retry).
	lastProgress Time
	retries      []retrying
	check        uint64 // the next event count at which Run looks at the limits (a multiple of 4,096, or maxEv+1)
	err          error
	stopped      bool
	halt         bool        // err, stopped or then is set: the loops look at them
	trace        Tracer      // records process states (WithTracer), or nil
	src          *drawSource // rng's source: notes the first draw (WithRandUse)

	// x is the schedule explorer's state (choose.go): nil until one of its
	// options is set (Set: WithChooser, WithPreemption, WithMemoryPoints);
	// a run explores while it holds a Chooser (exploring).
	x *Explorer

	driving   bool      // a process's dispatch is resuming another (no nesting deeper)
	then      func()    // a BlockThen's work left for Run by a process resumed in dispatch
	wallStart time.Time // when Run started (Limits.MaxWall)

	evc EventCounter // counts events by what they run (WithEventCounter), or nil
	fp  *Footprint   // what Hooks.Footprint hands out, made on first ask
}

// NewEngine returns an engine whose random generator is seeded with seed.
func NewEngine(seed uint64) *Engine {
	src := &drawSource{}
	src.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
	return &Engine{
		rng:     rand.New(src),
		src:     src,
		horizon: Forever,
		maxEv:   math.MaxUint64,
		check:   0x1000,
	}
}

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// Rand is the engine's seeded generator: the only source of randomness a
// model may use.
func (e *Engine) Rand() *rand.Rand { return e.rng }

// SetLimits bounds the next Run.
func (e *Engine) SetLimits(l Limits) {
	e.limits = l
	e.horizon, e.maxEv = Forever, math.MaxUint64
	if l.MaxTime > 0 {
		e.horizon = l.MaxTime
	}
	if l.MaxEvents > 0 {
		e.maxEv = l.MaxEvents
	}
	e.setCheck()
}

// setCheck sets the next event count at which Run checks the limits: the
// next multiple of 4,096 (the wall clock), or the first past MaxEvents if
// that comes first. A process's loop (dispatch) and Sleep's fast path
// (advance) leave that event to Run.
func (e *Engine) setCheck() {
	e.check = (e.events | 0xfff) + 1
	if e.maxEv < e.check-1 {
		e.check = e.maxEv + 1
	}
}

// Events is the number of events executed so far.
func (e *Engine) Events() uint64 { return e.events }

// Current is the running process, or nil inside a callback.
func (e *Engine) Current() *Proc { return e.cur }

// After schedules fn to run d from now. fn runs in the engine loop, not in a
// process: it must not block.
func (e *Engine) After(d Time, fn func()) Handle {
	return e.cal.After(e.now, d, action{fn: fn})
}

// At schedules fn at absolute time t (not earlier than now).
func (e *Engine) At(t Time, fn func()) Handle {
	return e.cal.Schedule(max(t, e.now), e.now, action{fn: fn})
}

// Cancel removes a scheduled callback; it reports whether it was pending.
func (e *Engine) Cancel(h Handle) bool {
	if !h.Valid() {
		return false
	}
	return e.cal.Cancel(h)
}

// Fail stops the run with err (the first failure wins). Models call it when
// they detect something no run may continue past.
func (e *Engine) Fail(err error) {
	if e.err == nil && err != nil {
		e.err = err
		e.halt = true
	}
}

// Stop ends the run after the current event, without error, even if
// processes are still blocked.
func (e *Engine) Stop() { e.stopped, e.halt = true, true }

// resumeAt schedules p to continue at time t.
func (e *Engine) resumeAt(p *Proc, t Time) {
	if t == e.now {
		e.cal.Ready(action{proc: p})
		return
	}
	e.cal.Schedule(t, e.now, action{proc: p})
}

// advance is the fast path of Sleep: when no other event can happen before
// the running process would resume (nothing in the lane, the calendar's
// earliest event strictly later), time simply moves forward and the process
// goes on without a trip through the calendar or a coroutine switch. The
// result is the same as the slow path's; it counts as an event so that
// limits still bound the run.
func (e *Engine) advance(d Time) bool {
	t := e.now + d
	if e.cal.LaneLen() != 0 || e.halt || e.trace != nil || t > e.horizon || e.events+1 >= e.check {
		return false
	}
	if m, ok := e.cal.NextFuture(); ok && m <= t {
		return false
	}
	e.now = t
	e.events++
	if e.evc != nil {
		e.evc.Event(nil, nil, false)
	}
	return true
}

// dispatch is the engine loop: it takes events in (time, sequence) order
// and runs them, a callback by calling it and a process by resuming it,
// until the run halts (it failed, was stopped, hit a limit, or a process
// left BlockThen work for Run) or nothing is pending. Run calls it with
// self nil. A process about to park calls it with itself (self), on its
// own stack: callbacks due before anything else run right here, another
// process due next is resumed from here (its coroutine entered from
// self's rather than from Run's), and when the next event is self's own
// resumption self simply goes on (dispatch reports true). A process
// resumed from there does not resume others in turn (e.driving: no
// nesting deeper than one), and BlockThen work it leaves goes to Run
// (e.then), so that it runs on the engine's stack as BlockThen says. A
// process's loop stops and reports false, leaving the event to Run, at
// the first event that needs Run: a limit to check or report, a process
// bound to a Core, a traced or explored run (the chooser must see every
// same-time choice and every callback's footprint, choose.go). A
// hand-over to another process costs two coroutine switches either way (a
// coroutine gives control back only to the one that resumed it); what is
// saved is the two switches to Run and back whenever self's own
// resumption comes before anything only Run does. A callback that panics
// in a process's loop is reported as a panic of that process (a model bug
// either way).
func (e *Engine) dispatch(self *Proc) bool {
	if self != nil && (e.trace != nil || self.core != nil || e.exploring()) {
		return false // Run records what a traced or explored step did
	}
	c := &e.cal
	for !e.halt {
		var s int32         // 0: the lane's head
		if !c.LaneFirst() { // the common case needs no Front
			var ok bool
			if s, ok = c.Front(e.now); !ok {
				return false
			}
		}
		at, a := c.Event(s, e.now)
		if self != nil && ((a.proc != nil && a.proc != self && (e.driving || a.proc.core != nil)) ||
			at > e.horizon || e.events+1 >= e.check) {
			return false
		}
		c.Take(s)
		if at > e.horizon {
			e.now = e.limits.MaxTime
			e.limitHit("simulated time", e.limits.MaxTime.String())
			return false
		}
		e.now = at
		if e.events++; e.events >= e.check && !e.checkLimits() {
			return false
		}
		if e.evc != nil {
			e.evc.Event(a.fn, a.proc, a.proc != nil && a.proc.state == stateSleeping)
		}
		switch {
		case a.proc == nil && !e.exploring():
			if self == nil {
				a.fn()
				continue
			}
			e.cur = nil
			a.fn()
			e.cur = self
		case e.exploring():
			e.step(at, a)
		case a.proc == self:
			self.state = stateRunning
			return true
		case self == nil:
			e.resume(a.proc)
		default:
			e.driving = true
			e.resume(a.proc)
			e.driving = false
			e.cur = self
		}
	}
	return false
}

// checkLimits, at the event count e.check, stops the run at the event or
// wall-time limit (it reports false) or sets the next check.
func (e *Engine) checkLimits() bool {
	if e.events > e.maxEv {
		e.limitHit("events", fmt.Sprint(e.limits.MaxEvents))
		return false
	}
	if e.limits.MaxWall > 0 && time.Since(e.wallStart) > e.limits.MaxWall {
		e.limitHit("wall time", e.limits.MaxWall.String())
		return false
	}
	e.setCheck()
	return true
}

// Run executes events until none remain, a limit is hit, the run is stopped
// or a model fails. It returns nil when every non-daemon process finished;
// a *DeadlockError or *LivelockError when processes remain blocked with
// nothing scheduled; a *LimitError; or the error a model passed to Fail.
func (e *Engine) Run() error {
	e.wallStart = time.Now()
	defer e.killAll()
	for {
		e.dispatch(nil)
		if e.err != nil || e.stopped {
			return e.err
		}
		if f := e.then; f != nil { // left by a process's loop: before anything else
			e.then, e.halt = nil, false
			f()
			continue
		}
		if !e.wakeDescheduled() {
			return e.stuckError()
		}
	}
}

// Tracer records what processes do, for timelines (sim/trace.Trace). The
// engine calls State when a process's state changes ("running", "busy",
// "wait: " or "spin: " and the reason, "" when it ended), Mark and Flow
// for a model's marks and arrows (Proc.Mark, Proc.Flow). A traced run
// runs every event from Run's loop. WithTracer attaches one.
type Tracer interface {
	State(now Time, p *Proc, state string)
	Mark(now Time, p *Proc, name string)
	Flow(from *Proc, at Time, p *Proc, now Time, name string)
}

// Mark records an instant event (a packet sent, a lock taken) on p's
// timeline, when the run is traced.
func (p *Proc) Mark(name string) {
	if p != nil && p.eng.trace != nil {
		p.eng.trace.Mark(p.eng.now, p, name)
	}
}

// Flow records, when the run is traced, an arrow named name from from's
// timeline at time at (an earlier instant, such as a store) to p's
// timeline now (such as the load that read the store's value), which
// Perfetto draws between the slices or marks at its two ends. Record a
// Mark at each end so that the arrow has something to bind to.
func (p *Proc) Flow(from *Proc, at Time, name string) {
	if p != nil && from != nil && p.eng.trace != nil {
		p.eng.trace.Flow(from, at, p, p.eng.now, name)
	}
}

// EventCounter is told of every event the engine runs, before it runs
// (sim/evcount.Counts): a callback fn, a process p's resumption (slept:
// its Sleep ended, else it was woken or starts), or neither when time
// moved forward in place (Sleep's fast path, a SleepSteps step with
// nothing due before its end), which counts as an event too.
// WithEventCounter attaches one.
type EventCounter interface {
	Event(fn func(), p *Proc, slept bool)
}

// stuckError reports the processes left blocked when nothing is scheduled.
func (e *Engine) stuckError() error {
	var waiting []Waiter
	spinning := false
	for _, p := range e.procs {
		if p.state == stateDone || p.daemon {
			continue
		}
		waiting = append(waiting, p.waiter())
		spinning = spinning || p.spinning
	}
	if len(waiting) == 0 {
		return nil
	}
	if held := e.locksHeld(); len(held) > 0 || !spinning {
		return &DeadlockError{At: e.now, Waiting: waiting, Held: held}
	}
	return &LivelockError{At: e.now, Waiting: waiting}
}

// locksHeld describes, when nothing can run, each mutex that a stuck
// process waits for and another stuck process holds: the holder waits
// (or spins) for something that cannot happen while it holds the lock,
// which is a deadlock even when the holder busy-polls (a lock held across
// a blocking wait, papers/mpich2-threads.txt section 4).
func (e *Engine) locksHeld() []string {
	var out []string
	for _, p := range e.procs {
		m := p.mutex()
		if p.state != stateBlocked || m == nil || m.holder == nil || m.holder.state == stateDone {
			continue
		}
		h := m.holder
		out = append(out, fmt.Sprintf("%s waits for mutex %s, held by %s, which %s", p.name, m.name, h.name, h.waiter().doing()))
	}
	return out
}

// limitHit stops the run with a *LimitError.
func (e *Engine) limitHit(what, limit string) {
	var waiting []Waiter
	for _, p := range e.procs {
		if p.state != stateDone && !p.daemon {
			waiting = append(waiting, p.waiter())
		}
	}
	e.Fail(&LimitError{Limit: what, Value: limit, At: e.now, Events: e.events, Waiting: waiting})
}

// killAll unwinds every process still suspended, so that no coroutine
// outlives its run.
func (e *Engine) killAll() {
	for _, p := range e.procs {
		if p.state != stateDone {
			p.kill()
		}
	}
}

// Waiter describes a process that did not finish: what it waits on and since
// when.
type Waiter struct {
	Proc     string
	Reason   string
	Since    Time
	Spinning bool
}

func (w Waiter) String() string {
	kind := "blocked"
	if w.Spinning {
		kind = "spinning"
	}
	return fmt.Sprintf("%s %s since %v: %s", w.Proc, kind, w.Since, w.Reason)
}

// doing says what the waiter does, for a cycle report.
func (w Waiter) doing() string {
	if w.Spinning {
		return "spins: " + w.Reason
	}
	return "waits: " + w.Reason
}

func listWaiters(ws []Waiter) string {
	s := ""
	for _, w := range ws {
		s += "\n  " + w.String()
	}
	return s
}

// DeadlockError: nothing is scheduled and processes are blocked, or wait
// for mutexes that processes stuck themselves hold (Held says which).
type DeadlockError struct {
	At      Time
	Waiting []Waiter
	Held    []string // "t1 waits for mutex m, held by t0, which ..."
}

func (d *DeadlockError) Error() string {
	s := fmt.Sprintf("deadlock at %v: nothing scheduled, %d process(es) blocked:%s", d.At, len(d.Waiting), listWaiters(d.Waiting))
	if len(d.Held) > 0 {
		s += "\nlocks held by waiting processes:"
		for _, h := range d.Held {
			s += "\n  " + h
		}
	}
	return s
}

// LivelockError: processes spin on locations that can never change for them
// (nothing else is scheduled, or a spin exceeded its limit).
type LivelockError struct {
	At      Time
	Waiting []Waiter
	// Retries, when the livelock is retries with no progress for Window
	// (Engine.Retry): who retried what, how often, since when; no
	// progress since NoProgressSince.
	Retries         []string
	NoProgressSince Time
	Window          Time
}

func (l *LivelockError) Error() string {
	if len(l.Retries) > 0 {
		return fmt.Sprintf("livelock at %v: process(es) retrying with no progress:%s\nprocesses:%s", l.At, l.retryReport(), listWaiters(l.Waiting))
	}
	return fmt.Sprintf("livelock at %v: process(es) spinning with no possible progress:%s", l.At, listWaiters(l.Waiting))
}

// LimitError: a run hit one of its Limits.
type LimitError struct {
	Limit   string
	Value   string
	At      Time
	Events  uint64
	Waiting []Waiter
}

func (l *LimitError) Error() string {
	return fmt.Sprintf("limit on %s (%s) reached at %v after %d events; unfinished processes:%s", l.Limit, l.Value, l.At, l.Events, listWaiters(l.Waiting))
}

// ProcessPanic is the error a run returns when a process's code panicked
// (a model bug): which process, when, and the stack.
type ProcessPanic struct {
	Proc  string
	At    Time
	Value any
	Stack string
}

func (p *ProcessPanic) Error() string {
	return fmt.Sprintf("process %s panicked at %v: %v\n%s", p.Proc, p.At, p.Value, p.Stack)
}

// IsDeadlock reports whether err is (or wraps) a DeadlockError.
func IsDeadlock(err error) bool { var d *DeadlockError; return errors.As(err, &d) }

// IsLivelock reports whether err is (or wraps) a LivelockError.
func IsLivelock(err error) bool { var l *LivelockError; return errors.As(err, &l) }

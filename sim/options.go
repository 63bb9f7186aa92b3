package sim

import "sync/atomic"

// Option is one thing attached to an engine or set on it with Set: what
// observes a run (a Tracer, an EventCounter, a flag for random draws) and
// what steers it (a schedule explorer's Chooser and its settings). Most
// runs set none.
type Option func(e *Engine)

// Set applies opts in order.
func (e *Engine) Set(opts ...Option) {
	for _, o := range opts {
		o(e)
	}
}

// WithTracer makes t record what the run's processes do (nil: nothing).
func WithTracer(t Tracer) Option { return func(e *Engine) { e.trace = t } }

// WithEventCounter makes c count the events the engine runs from now on
// (nil: none).
func WithEventCounter(c EventCounter) Option { return func(e *Engine) { e.evc = c } }

// WithRandUse makes the engine set flag when its generator draws a number
// (at once if it has drawn one already). A run whose engines all leave
// flag false drew no random number: its results do not depend on the
// seed, and a report can say so. flag may be shared by engines running in
// parallel.
func WithRandUse(flag *atomic.Bool) Option {
	return func(e *Engine) {
		e.src.flag = flag
		if e.src.seen {
			flag.Store(true)
		}
	}
}

// WithChooser installs c to pick among the processes ready at the same
// simulated time (a sim/explore Path, a replayed explore.Schedule); nil
// restores the engine's order.
func WithChooser(c Chooser) Option {
	return func(e *Engine) { e.explorer().chooser = c }
}

// WithMemoryPoints makes every operation a process performs on simulated
// memory through sim/mem's CPU (loads, stores, atomics, copies; fences
// are not: they touch no location) and every machine memory verb it
// issues (mem.VerbPoint: puts, gets, remote atomics) a scheduling point
// while a Chooser is installed (Proc.MemoryPoint): WithPreemption the
// chooser may then deschedule a thread before any of them, not only where
// the model declared a point (Point). Off by default; when off, or without
// a Chooser, a memory operation pays one test (Explorer.MemoryPoints).
func WithMemoryPoints(on bool) Option { return func(e *Engine) { e.explorer().memOn = on } }

// WithPreemption lets the chooser also deschedule a process waiting at a
// scheduling point (an OS scheduler delaying a thread): it stays off the
// CPU until a process sharing its state (ShareState: another thread of
// its process) has passed a declared scheduling point (Point, not
// MemoryPoint) or ended, or none of them can go on (wakeStranded), or
// nothing else can run. Off by default: the alternatives are then only
// the orders of same-time steps.
func WithPreemption(on bool) Option { return func(e *Engine) { e.explorer().preempt = on } }

// Hooks are what is attached to an engine (Set): each nil when absent.
type Hooks struct {
	Tracer       Tracer
	EventCounter EventCounter
	// Explorer is the schedule explorer's state while a Chooser is
	// installed.
	Explorer *Explorer
	// Footprint is where a model reports its accesses to an explorer,
	// the same for the engine's life: a model that reports every access
	// keeps it and pays a test an access instead of asking for the hooks
	// each time.
	Footprint *Footprint
}

// Hooks are what is attached to the engine now.
func (e *Engine) Hooks() Hooks {
	if e.fp == nil {
		e.fp = &Footprint{x: e.x}
	}
	h := Hooks{Tracer: e.trace, EventCounter: e.evc, Footprint: e.fp}
	if e.exploring() {
		h.Explorer = e.x
	}
	return h
}

package sim

// Steps is a run of N timed steps of D each: N sleeps of D in a row, as a
// model that charges each of a process's steps (a store, a load, a line
// invalidated) sleeps them.
type Steps struct {
	N int
	D Time
}

// procSteps is a process's SleepSteps state, allocated when it first
// uses it (a million-PE machine's processes that never do pay one pointer
// each).
type procSteps struct {
	runs []Steps // the steps to sleep, from runs[ri]
	ri   int
	fn   func() // p.step, bound once
	// SleepBlockThen's work for the end of its sleep (then), and the
	// callback that runs it there (p.sleptThen, bound once).
	then      func()
	thenStart func()
}

// SleepSteps is Sleep of each step of runs in turn (runs in order, each
// run's steps one after the other), for steps whose effects only p's own
// program sees (they were done at once, or nobody reads them before the
// last step ends). It runs the same events in the same order as the
// sleeps, one per step: at each step's end a callback takes the place p's
// wake-up would take among the events of that instant and, when it runs,
// schedules the next step's end (or, after the last step, p's
// resumption), as p's next Sleep would. So p resumes at the same time and
// in the same order among same-time events as after the sleeps (a merged
// sleep scheduled at the first step would go ahead of any event set for
// its end by something that ran inside the run). What it saves is p's
// coroutine: p parks once, and its steps' ends run as callbacks (by Run,
// or on the stack of whichever process runs the loop). Steps that nothing
// else is due before or at their end are run by moving time forward, as
// Sleep's fast path does, and still count as an event each.
//
// A process bound to a Core, or a run a chooser explores, sleeps the
// steps one by one: the core books each, and the chooser sees each.
func (p *Proc) SleepSteps(runs ...Steps) {
	e := p.eng
	if p.core != nil || e.exploring() {
		for _, r := range runs {
			for range r.N {
				p.Sleep(r.D)
			}
		}
		return
	}
	p.setSteps(runs)
	for {
		d, ok := p.nextStep()
		if !ok {
			return
		}
		if p.stepsDone() { // that was the last step: Sleep's own
			p.Sleep(d)
			return
		}
		if e.advance(d) {
			continue
		}
		p.state = stateSleeping
		if e.trace != nil {
			e.trace.State(e.now, p, "busy")
		}
		p.sleep = Handle{}
		e.cal.Schedule(e.now+d, e.now, action{fn: p.steps.fn})
		p.park()
		return
	}
}

// step ends one step of p's SleepSteps: it schedules the next step's end,
// or p's resumption after the last step, from where p's wake-up would have
// run. Steps that end before anything
// else is due are run at once by moving time forward (Sleep's fast path).
func (p *Proc) step() {
	e := p.eng
	for {
		d, ok := p.nextStep()
		if !ok {
			e.resumeAt(p, e.now)
			return
		}
		if p.stepsDone() {
			p.sleep = e.cal.Schedule(e.now+d, e.now, action{proc: p})
			return
		}
		if !e.advance(d) {
			e.cal.Schedule(e.now+d, e.now, action{fn: p.steps.fn})
			return
		}
	}
}

// setSteps makes runs p's steps to sleep (a copy: the caller's runs may
// go, and p's buffer is reused, so nothing is allocated once it is large
// enough).
func (p *Proc) setSteps(runs []Steps) {
	st := p.steps
	if st == nil {
		st = &procSteps{}
		st.fn = p.step
		p.steps = st
	}
	st.runs, st.ri = append(st.runs[:0], runs...), 0
	st.skipEmpty()
}

// nextStep takes the next step of p's runs; it reports false when none is
// left.
func (p *Proc) nextStep() (Time, bool) {
	st := p.steps
	if st.done() {
		return 0, false
	}
	r := &st.runs[st.ri]
	if r.N--; r.N == 0 {
		st.ri++
		st.skipEmpty()
	}
	return r.D, true
}

// stepsDone reports whether no step of p's runs is left.
func (p *Proc) stepsDone() bool { return p.steps.done() }

// done reports whether no step is left.
func (st *procSteps) done() bool { return st.ri == len(st.runs) }

// skipEmpty passes the runs of no step (no step, or no time: a sleep of
// no time returns at once) at the head of the runs.
func (st *procSteps) skipEmpty() {
	for st.ri < len(st.runs) && (st.runs[st.ri].N <= 0 || st.runs[st.ri].D <= 0) {
		st.ri++
	}
}

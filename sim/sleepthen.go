package sim

// SleepBlockThen is Sleep(d) followed by BlockThen(reason, fn): the
// process works for d (a machine operation's start-up), then, at the
// instant its Sleep would end and in the place its wake-up would take
// among that instant's events, fn starts what it waits for (a message
// into the network) and the process blocks until a Wake. fn runs on the
// engine's stack once the process has parked, as BlockThen's does, and
// must not wait.
//
// Where the engine merges steps (Engine.Merging) and the run is not
// traced, the process parks once: the sleep's end is a callback that
// blocks it and runs fn, where Sleep then BlockThen would resume it only
// for it to block again at the same instant. The callback is scheduled
// when the sleep's wake-up would be (the same time and sequence), so
// every event runs in the same order either way, and a Wake meanwhile
// does nothing, as it would to a sleeping process. Step by step (or
// traced, explored, or bound to a Core) it is Sleep then BlockThen.
func (p *Proc) SleepBlockThen(d Time, reason string, fn func()) {
	e := p.eng
	if d <= 0 || e.trace != nil || !e.Merging(p) {
		p.Sleep(d)
		p.BlockThen(reason, fn)
		return
	}
	if e.advance(d) {
		p.BlockThen(reason, fn)
		return
	}
	st := p.steps
	if st == nil {
		st = &procSteps{}
		st.fn = p.step
		p.steps = st
	}
	if st.thenStart == nil {
		st.thenStart = p.sleptThen
	}
	st.then = fn
	p.state = stateSleeping
	p.sleep = Handle{} // not to be moved (WakeAt): its end is not a wake-up
	e.cal.Schedule(e.now+d, e.now, action{fn: st.thenStart})
	p.reason = reason
	p.park()
	p.spinning = false
	p.reason = ""
}

// sleptThen ends a SleepBlockThen's sleep: the process blocks as
// BlockThen would have it (since now) and its work starts.
func (p *Proc) sleptThen() {
	st := p.steps
	fn := st.then
	st.then = nil
	p.state = stateBlocked
	p.spinning = false
	p.since = p.eng.now
	fn()
}

package sim

// Core is one processor of a node that an application process shares with
// handler processes (interrupt handlers, message-arrival and completion
// threads). A machine gives each node a Core, binds the rank's process to it
// with BindApp and the handler threads with BindHandler, and says whether a
// handler preempts the application or runs beside it.
//
// Handler work is the simulated time a handler process spends in Sleep
// (its own Compute and every mem.CPU operation that charges time). Handler
// work on one Core is serialized: a handler that starts working while
// another's work is in progress begins when that ends (the node has one
// processor for its handlers).
//
// Preempting (a uniprocessor node, as the IBM SP's Power2 nodes of
// papers/armci-sp.txt section 2.5): while the application is computing
// (sleeping in simulated work) a handler's work delays the application's
// completion by the handler's time: its pending wake-up is pushed later by
// exactly that time (the calendar cancels and reinserts it; no event is
// added). While the application is blocked (waiting), the processor is idle
// and nothing is delayed; but an application made ready while handler work
// is in progress resumes only when that work ends. A spinner's pending poll
// (sim.Proc.WakeAt) is treated the same way: it cannot run before the
// handler work ends.
//
// Sharing (an SMP node whose second processor runs the handlers): handler
// work never delays the application.
//
// A core with no application and several handler processes is one
// processor time-shared by equals (the threads of a process on a
// uniprocessor): their work is serialized first come, first served, and
// with SetSwitch each change of the process working costs a context
// switch.
type Core struct {
	eng     *Engine
	name    string
	preempt bool
	app     *Proc
	busy    Time // end of the handler work booked so far
	stats   CoreStats
	last    *Proc // the handler that booked work last
	switchD Time  // cost of changing the working handler (SetSwitch)
}

// SetSwitch makes every change of the handler process whose work the core
// runs cost d more work (a context switch).
func (c *Core) SetSwitch(d Time) { c.switchD = d }

// CoreStats counts what handlers did on a Core.
type CoreStats struct {
	HandlerWork Time // total handler work booked
	AppDelay    Time // time the application waited for handler work (preempting cores)
	Switches    int  // context switches charged (SetSwitch)
}

// NewCore returns a processor named name; preempt says whether handler work
// preempts the application (true) or runs beside it (false).
func (e *Engine) NewCore(name string, preempt bool) *Core {
	return &Core{eng: e, name: name, preempt: preempt}
}

// Name is the core's name.
func (c *Core) Name() string { return c.name }

// Preempts reports whether handler work preempts the application.
func (c *Core) Preempts() bool { return c.preempt }

// App is the application process bound to the core, or nil.
func (c *Core) App() *Proc { return c.app }

// Stats returns the handler work so far.
func (c *Core) Stats() CoreStats { return c.stats }

// BindApp makes p the core's application process (one per core; a later
// call replaces it).
func (c *Core) BindApp(p *Proc) {
	if c.app != nil && c.app.core == c {
		c.app.core = nil
	}
	c.app = p
	p.core = c
}

// BindHandler makes p a handler process of the core: its Sleep is handler
// work.
func (c *Core) BindHandler(p *Proc) {
	if p == c.app {
		c.app = nil
	}
	p.core = c
}

// book reserves d of handler work for h, which is about to sleep: it starts
// when earlier handler work ends, and with preemption it pushes the
// computing application's completion back by d. It returns how long h
// sleeps from now.
func (c *Core) book(h *Proc, d Time) Time {
	now := c.eng.now
	if c.switchD > 0 && c.last != nil && c.last != h {
		d += c.switchD
		c.stats.Switches++
	}
	c.last = h
	start := max(now, c.busy)
	c.busy = start + d
	c.stats.HandlerWork += d
	if a := c.app; c.preempt && a != nil && a.state == stateSleeping && a.sleep.At() > start {
		a.sleep = c.eng.cal.Move(a.sleep, a.sleep.At()+d)
		c.stats.AppDelay += d
	}
	return c.busy - now
}

// held reports until when the application must wait for handler work
// before it may run (preempting cores only).
func (c *Core) held(p *Proc) (Time, bool) {
	if !c.preempt || p != c.app || c.busy <= c.eng.now {
		return 0, false
	}
	c.stats.AppDelay += c.busy - c.eng.now
	return c.busy, true
}

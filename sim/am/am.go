// Package am runs message-arrival handlers (active messages) on a node: a
// machine's network calls Endpoint.Arrive at the time a message arrives,
// with the handler to run and its data, and the handler runs on the node in
// one of two ways (papers/armci-sp.txt sections 2.3-2.5, LAPI on the IBM SP;
// papers/scampi-sci.txt, a progress engine driven by the process's polls):
//
//   - Polling: arrivals wait in a queue until a process of the node polls
//     (Poll, or WaitUntil, which polls until a condition holds); the poller
//     runs the handlers inline, at its own cost.
//   - Interrupt: an arrival at a node whose handler thread is asleep raises
//     an interrupt. After InterruptLatency the handler thread runs, pays
//     InterruptCost of processor time and then handles arrivals until none
//     is left, including those that arrive while it is still active: they
//     pay no interrupt of their own ("only the first get request issued to
//     a particular remote processor is processed in the interrupt mode, the
//     following ones are received when processing has not been completed",
//     section 2.5). Then it sleeps again.
//
// Each arrival runs its header handler, which may return a completion
// handler (LAPI's model). In interrupt mode the completion handler runs in
// a separate completion thread once the header handler has returned and the
// message's data has arrived (Arrival.DataAt), after CompletionCost of
// processor time for the hand-off; in polling mode a poll runs, inline and
// in arrival order, the completions whose data has arrived.
//
// The handler and completion threads are bound to the node's sim.Core as
// handler processes: their work preempts the application or runs beside it
// as the machine's Core says. Costs are Params the machine passes; this
// package has no machine's numbers. An Endpoint allocates nothing per
// arrival in steady state (arrival records are recycled).
//
// Layer: imports sim only; the machines whose networks deliver active
// messages (machines/sp) build on it.
package am

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Mode is how arrivals reach their handlers.
type Mode uint8

// The modes.
const (
	Polling   Mode = iota + 1 // handlers run when a process of the node polls
	Interrupt                 // an interrupt wakes a handler thread
)

func (m Mode) String() string {
	switch m {
	case Polling:
		return "polling"
	case Interrupt:
		return "interrupt"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode reads "polling" or "interrupt".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "polling":
		return Polling, nil
	case "interrupt":
		return Interrupt, nil
	}
	return 0, fmt.Errorf("unknown progress mode %q (want polling or interrupt)", s)
}

// Params are an endpoint's mode and costs, given by the machine.
type Params struct {
	Mode Mode
	// PollCost is the processor time of one look at the arrival queue,
	// charged to the poller whether or not it finds something.
	PollCost sim.Time
	// DispatchCost is the library's processor time per arrival before its
	// header handler runs, in both modes.
	DispatchCost sim.Time
	// InterruptLatency is the time from an arrival at a node whose handler
	// thread sleeps to that thread running (delivery and scheduling: not
	// processor time of the node).
	InterruptLatency sim.Time
	// InterruptCost is the processor time the handler thread spends taking
	// the interrupt and being switched in, before it handles arrivals.
	InterruptCost sim.Time
	// CompletionCost is the processor time of handing one completion
	// handler to the completion thread (interrupt mode).
	CompletionCost sim.Time
	// WaitPolls makes a process waiting in WaitUntil poll the network even
	// in interrupt mode (handlers run inline at its cost, and no interrupt
	// is raised while it waits). Otherwise, in interrupt mode, WaitUntil
	// blocks and the handler threads do the work.
	WaitPolls bool
}

// Validate reports a mode that is not known or a negative cost.
func (p Params) Validate() error {
	if p.Mode != Polling && p.Mode != Interrupt {
		return fmt.Errorf("progress mode %v: want polling or interrupt", p.Mode)
	}
	for _, c := range []struct {
		name string
		v    sim.Time
	}{{"PollCost", p.PollCost}, {"DispatchCost", p.DispatchCost}, {"InterruptLatency", p.InterruptLatency},
		{"InterruptCost", p.InterruptCost}, {"CompletionCost", p.CompletionCost}} {
		if c.v < 0 {
			return fmt.Errorf("%s: negative (%v)", c.name, c.v)
		}
	}
	return nil
}

// Header is a header handler: it runs on the receiving node in process p
// (the poller, or the handler thread), charging its work to p, and returns
// the completion handler to run once the message's data has arrived, or
// nil. a is valid only until the completion handler returns (or the header
// handler, without one); a handler must not block.
type Header func(p *sim.Proc, a *Arrival) Completion

// Completion is a completion handler (see Header).
type Completion func(p *sim.Proc, a *Arrival)

// Arrival is one message as its receiver's handlers see it.
type Arrival struct {
	Header Header    // the handler the message names
	Src    int       // the sending node
	Args   [4]uint64 // small arguments carried in the header
	Data   []byte    // the payload, if the network delivers it as bytes
	Ctx    any       // anything else the machine or stack passes along
	// DataAt is when the message's last data packet has arrived, as the
	// network knows it when it delivers the header; at or before the
	// arrival for a message that fits in its first packet. A completion
	// handler does not run before it.
	DataAt sim.Time

	at   sim.Time
	comp Completion
}

// At is when the message arrived (Arrive was called).
func (a *Arrival) At() sim.Time { return a.at }

// Stats counts an endpoint's work.
type Stats struct {
	Arrivals    uint64 // messages that arrived
	Polls       uint64 // simulated looks at the queue (Poll, WaitUntil; a waiter's idle polls are not simulated)
	ByPoll      uint64 // header handlers run by a polling process
	Interrupts  uint64 // interrupts raised
	ByInterrupt uint64 // header handlers run by the handler thread
	Completions uint64 // completion handlers run
}

// Endpoint receives one node's arrivals and runs their handlers.
type Endpoint struct {
	eng       *sim.Engine
	name      string
	par       Params
	q         fifo // arrivals not yet handled
	cq        fifo // completions waiting for their data or their thread
	free      []*Arrival
	handler   *sim.Proc // interrupt mode: the handler thread
	completer *sim.Proc // interrupt mode: the completion thread
	idle      bool      // the handler thread sleeps, waiting for an interrupt
	raised    bool      // an interrupt is on its way to it
	pollers   int       // processes waiting in WaitUntil that poll
	waiting   []waiter
	dataFn    func()
	stats     Stats
}

// waiter is a process blocked in WaitUntil, and its poll phase.
type waiter struct {
	p              *sim.Proc
	polls          bool
	polled, period sim.Time
}

// New returns the endpoint of node name. In interrupt mode it spawns the
// handler and completion threads as daemons bound to core as handler
// processes (core may be nil: they then delay nothing).
func New(eng *sim.Engine, name string, core *sim.Core, par Params) (*Endpoint, error) {
	if err := par.Validate(); err != nil {
		return nil, fmt.Errorf("am endpoint %s: %w", name, err)
	}
	ep := &Endpoint{eng: eng, name: name, par: par}
	ep.dataFn = ep.dataArrived
	if par.Mode == Interrupt {
		ep.handler = eng.SpawnDaemon(name+" interrupt handler", ep.serve)
		ep.completer = eng.SpawnDaemon(name+" completion handler", ep.complete)
		if core != nil {
			core.BindHandler(ep.handler)
			core.BindHandler(ep.completer)
		}
	}
	return ep, nil
}

// Name is the endpoint's node name.
func (ep *Endpoint) Name() string { return ep.name }

// Mode is the endpoint's progress mode.
func (ep *Endpoint) Mode() Mode { return ep.par.Mode }

// Stats returns the counts so far.
func (ep *Endpoint) Stats() Stats { return ep.stats }

// Pending is the number of arrivals whose header handler has not run yet.
func (ep *Endpoint) Pending() int { return ep.q.n }

// Arrive delivers a message now. The network calls it at the arrival time
// (from a callback or a process; it does not block). In interrupt mode, with
// no process polling, it raises an interrupt if the handler thread sleeps
// and none is on its way.
func (ep *Endpoint) Arrive(a Arrival) {
	if a.Header == nil {
		ep.eng.Fail(fmt.Errorf("am endpoint %s: arrival from node %d at %v has no header handler", ep.name, a.Src, ep.eng.Now()))
		return
	}
	r := ep.record()
	*r = a
	r.at, r.comp = ep.eng.Now(), nil
	ep.q.push(r)
	ep.stats.Arrivals++
	if ep.par.Mode == Polling || ep.pollers > 0 {
		ep.wakeWaiters()
		return
	}
	if ep.idle && !ep.raised {
		ep.raised = true
		ep.stats.Interrupts++
		ep.handler.Mark("interrupt")
		ep.handler.WakeAt(ep.eng.Now() + ep.par.InterruptLatency)
	}
}

func (ep *Endpoint) record() *Arrival {
	if n := len(ep.free); n > 0 {
		r := ep.free[n-1]
		ep.free = ep.free[:n-1]
		return r
	}
	return new(Arrival)
}

func (ep *Endpoint) release(a *Arrival) {
	*a = Arrival{}
	ep.free = append(ep.free, a)
}

// Poll is one look at the arrival queue by p: it costs PollCost and runs,
// inline at p's cost, the header handlers of every arrival queued (and of
// those arriving meanwhile) and, in polling mode, the completions whose data
// has arrived. It returns the number of header handlers run.
func (ep *Endpoint) Poll(p *sim.Proc) int {
	ep.stats.Polls++
	p.Sleep(ep.par.PollCost)
	n := 0
	for {
		if ep.q.n > 0 {
			ep.handle(p)
			ep.stats.ByPoll++
			n++
			continue
		}
		if ep.par.Mode == Polling && ep.cq.n > 0 && ep.cq.front().DataAt <= ep.eng.Now() {
			ep.runCompletion(p)
			continue
		}
		return n
	}
}

// handle runs the header handler of the oldest arrival in p.
func (ep *Endpoint) handle(p *sim.Proc) {
	a := ep.q.pop()
	p.Sleep(ep.par.DispatchCost)
	comp := a.Header(p, a)
	if comp == nil {
		ep.release(a)
	} else {
		a.comp = comp
		ep.cq.push(a)
		if a.DataAt > ep.eng.Now() {
			ep.eng.At(a.DataAt, ep.dataFn)
		}
		if ep.par.Mode == Interrupt {
			ep.completer.Wake()
		}
	}
	ep.wakeWaiters()
}

// runCompletion runs the oldest pending completion in p.
func (ep *Endpoint) runCompletion(p *sim.Proc) {
	a := ep.cq.pop()
	a.comp(p, a)
	ep.stats.Completions++
	ep.release(a)
	ep.wakeWaiters()
}

// dataArrived is the event of a completion's data arriving.
func (ep *Endpoint) dataArrived() {
	if ep.par.Mode == Interrupt {
		ep.completer.Wake()
		return
	}
	ep.wakeWaiters()
}

// serve is the interrupt handler thread: asleep until an interrupt, then
// it handles arrivals until none is left.
func (ep *Endpoint) serve(p *sim.Proc) {
	for {
		ep.idle = true
		p.Block("waiting for an interrupt")
		ep.idle, ep.raised = false, false
		p.Sleep(ep.par.InterruptCost)
		for ep.q.n > 0 {
			ep.handle(p)
			ep.stats.ByInterrupt++
		}
	}
}

// complete is the completion thread: it runs completion handlers in order,
// each once its data has arrived.
func (ep *Endpoint) complete(p *sim.Proc) {
	for {
		if ep.cq.n == 0 || ep.cq.front().DataAt > ep.eng.Now() {
			p.Block("waiting for a completion")
			continue
		}
		p.Sleep(ep.par.CompletionCost)
		ep.runCompletion(p)
	}
}

// WaitUntil returns when cond holds, checking it after each poll (polling
// mode, or WaitPolls) or after each handler run by the threads (interrupt
// mode). A polling waiter keeps its poll phase: woken by an arrival at time
// t it polls again at the first instant t0 + k*period >= t, where t0 is the
// start of its last poll and period what that poll cost (as mem.CPU's
// SpinUntil). cond is evaluated at no cost. reason names what p waits for in
// deadlock and livelock reports.
func (ep *Endpoint) WaitUntil(p *sim.Proc, reason string, cond func() bool) {
	polls := ep.par.Mode == Polling || ep.par.WaitPolls
	if polls {
		ep.pollers++
		defer func() { ep.pollers-- }()
	}
	var why fmt.Stringer // reason, converted once per wait
	for {
		t0 := ep.eng.Now()
		if polls {
			ep.Poll(p)
		}
		if cond() {
			return
		}
		if polls && ep.q.n > 0 {
			continue // arrived during the poll: the next poll is now
		}
		ep.waiting = append(ep.waiting, waiter{p: p, polls: polls, polled: t0, period: ep.eng.Now() - t0})
		if polls {
			if why == nil {
				why = sim.Reason(reason)
			}
			p.BlockSpinning(why)
		} else {
			p.Block(reason)
		}
	}
}

// wakeWaiters wakes every process blocked in WaitUntil: a poller at its
// next poll instant, a blocked waiter now.
func (ep *Endpoint) wakeWaiters() {
	now := ep.eng.Now()
	for i, w := range ep.waiting {
		if w.polls && w.period > 0 {
			t := w.polled + w.period
			if t < now {
				k := (now - w.polled + w.period - 1) / w.period
				t = w.polled + k*w.period
			}
			w.p.WakeAt(t)
		} else {
			w.p.Wake()
		}
		ep.waiting[i] = waiter{}
	}
	ep.waiting = ep.waiting[:0]
}

// fifo is a growable ring of arrival records.
type fifo struct {
	buf  []*Arrival // len is a power of two
	head int
	n    int
}

func (f *fifo) push(a *Arrival) {
	if f.n == len(f.buf) {
		nb := make([]*Arrival, max(8, 2*len(f.buf)))
		for i := 0; i < f.n; i++ {
			nb[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = a
	f.n++
}

func (f *fifo) front() *Arrival { return f.buf[f.head] }

func (f *fifo) pop() *Arrival {
	a := f.buf[f.head]
	f.buf[f.head] = nil
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	return a
}

// Package lapi is the LAPI capability of a machine (IBM's Low-level API of
// the SP, papers/armci-sp.txt 2.4): nonblocking put and get of contiguous
// data with origin, target and completion counters, active messages with a
// header handler and a completion handler, and pthread mutexes. A machine
// that offers LAPI (machines/sp) implements LAPI; a stack that needs it
// (ARMCI's SP port) asks for it here and never imports the machine.
//
// Layer: imports machines, sim and sim/mem; the machines that offer LAPI,
// the stacks and workloads that use it import it.
package lapi

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ActiveMessages is the verb of active messages with counters, as LAPI offers
// them (the SP's only interface): node i's CPU and memory, counters, LAPI_Put,
// LAPI_Get, LAPI_Amsend, LAPI_Waitcntr, and a node's pthread mutexes.
type ActiveMessages interface {
	machines.Machine
	CPU(i int) *mem.CPU
	Alloc(i int, name string, n int) (mem.Region, error)
	NewCounter(i int) *Counter
	Waitcntr(p *sim.Proc, i int, c *Counter, val int)
	PutCounted(p *sim.Proc, i, tgt int, dst, src mem.Addr, n int, tgtC, org, cmpl *Counter)
	GetCounted(p *sim.Proc, i, tgt int, dst, src mem.Addr, n int, tgtC, org *Counter)
	Amsend(p *sim.Proc, i, tgt int, hh AMHeader, uhdr []byte, src mem.Addr, n int, tgtC, org, cmpl *Counter)
	Lock(p *sim.Proc, mu *Mutex)
	Unlock(p *sim.Proc, mu *Mutex)
}

// Counter is a LAPI counter (lapi_cntr_t) of one node: LAPI increments it
// when an operation reaches a point (origin: the data has left the origin's
// buffer; target: the data is at the target; completion: the origin knows
// the target has it); Waitcntr waits for it. A program passes the address
// of a remote node's counter as LAPI programs do, learned by address
// exchange; here the *Counter itself.
type Counter struct {
	node int
	v    int
}

// NewCounter returns a counter of node at 0 (for a machine's NewCounter).
func NewCounter(node int) *Counter { return &Counter{node: node} }

// Node is the node the counter belongs to.
func (c *Counter) Node() int { return c.node }

// Value is the counter's value (LAPI_Getcntr; no cost).
func (c *Counter) Value() int { return c.v }

// Inc increments c; a nil counter (an operation given none) is ignored.
func (c *Counter) Inc() {
	if c != nil {
		c.v++
	}
}

// Sub subtracts val from c (what Waitcntr does once c reaches val).
func (c *Counter) Sub(val int) { c.v -= val }

// Mutex is a pthread mutex of one node. The machine charges the cost of
// locking and unlocking; Acquire and Release are the mutex's own logic.
type Mutex struct {
	held bool
	q    sim.WaitQueue
}

// Acquire makes p hold mu, waiting while another thread holds it.
func (mu *Mutex) Acquire(p *sim.Proc) {
	for mu.held {
		mu.q.Wait(p, "pthread mutex")
	}
	mu.held = true
}

// Release frees mu and wakes one waiter; releasing a mutex that is not
// held is a bug of the caller and panics.
func (mu *Mutex) Release() {
	if !mu.held {
		panic("lapi: unlock of a mutex that is not locked")
	}
	mu.held = false
	mu.q.WakeOne()
}

// AM is an active message as its handlers see it.
type AM struct {
	Src, Dst int
	Uhdr     []byte // the user header; valid until the completion handler returns
	Len      int    // bytes of data
}

// AMHeader is a LAPI header handler: it runs at the target when the
// message arrives, in LAPI's dispatcher (the polling program or the
// interrupt handler thread), charging its work to p, and returns where in
// the target's memory the data goes and the completion handler to run in
// the completion thread once the data is there (or nil). It must not
// block.
type AMHeader func(p *sim.Proc, a *AM) (dst mem.Addr, comp AMCompletion)

// AMCompletion is a LAPI completion handler: it runs in a separate thread
// of the target (it may lock mutexes and issue LAPI calls).
type AMCompletion func(p *sim.Proc, a *AM)

package t3d

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// swapOp is one remote atomic swap through the network: its request, then
// its reply (the net.Handler of both).
type swapOp struct {
	m       *Machine
	pe, to  int
	a       mem.Addr
	v, old  uint64
	reply   bool
	proc    *sim.Proc
	applyFn func()
}

// Swap atomically stores v at a in PE target's memory and returns the word
// that was there (shmem_swap; the T3D's "hardware swap registers",
// hardware.yaml t3d.atomic_swap). The request and the reply cross the
// network as header-only packets; at the target the swap is one memory
// access (fetch_inc_ns; assumed: the latency is not found, taken as the
// fetch-and-increment register's), atomic with respect to every other
// swap, put and get (the engine runs it as one event).
func (m *Machine) Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64 {
	m.check("swap", pe, target)
	mem.VerbPoint(p, m.Memory(target), "swaps remotely", a, 8)
	p.Sleep(m.putStartup)
	var o *swapOp
	if n := len(m.swaps); n > 0 { // pooled: no allocation per swap
		o, m.swaps = m.swaps[n-1], m.swaps[:n-1]
	} else {
		o = &swapOp{m: m}
		o.applyFn = o.apply
	}
	o.pe, o.to, o.a, o.v, o.old, o.reply, o.proc = pe, target, a, v, 0, false, p
	m.net.Send(net.Msg{Src: pe, Dst: target, Class: classRequest}, o)
	p.Block("swap: its reply coming back")
	old := o.old
	o.proc = nil
	m.swaps = append(m.swaps, o)
	return old
}

// Sent, Arrived: nothing to do (the reply ends the swap), so the network
// spends no event on Sent (IgnoresSent: net.QuietSender).
func (o *swapOp) Sent(*net.Message)              {}
func (o *swapOp) IgnoresSent()                   {}
func (o *swapOp) Arrived(*net.Message, int, int) {}

func (o *swapOp) Delivered(*net.Message) {
	if o.reply {
		o.proc.Wake()
		return
	}
	o.m.eng.After(o.m.fiAccess, o.applyFn)
}

// apply swaps the word at the target and sends the reply.
func (o *swapOp) apply() {
	t := &o.m.pes[o.to].mem
	o.old = t.Load64(o.a)
	t.Store64(o.a, o.v)
	o.reply = true
	o.m.net.Send(net.Msg{Src: o.to, Dst: o.pe, Class: classResponse}, o)
}

func (o *swapOp) Failed(_ *net.Message, err error) {
	o.m.eng.Fail(fmt.Errorf("t3d: swap from PE %d to PE %d: %w", o.pe, o.to, err))
}

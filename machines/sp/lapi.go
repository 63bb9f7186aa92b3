package sp

import (
	"fmt"

	"github.com/msgsim/msgsim/machines/lapi"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/am"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Counter, Mutex, AM, AMHeader and AMCompletion are LAPI's types, defined
// with the capability (machines/lapi) so that stacks need not import this
// machine; Machine implements lapi.ActiveMessages.
type (
	Counter      = lapi.Counter
	Mutex        = lapi.Mutex
	AM           = lapi.AM
	AMHeader     = lapi.AMHeader
	AMCompletion = lapi.AMCompletion
)

var _ lapi.ActiveMessages = (*Machine)(nil)

// NewCounter returns a counter of node i, at 0.
func (m *Machine) NewCounter(i int) *Counter {
	m.check("counter", i)
	return lapi.NewCounter(i)
}

// Waitcntr blocks node i's program until c reaches val, then subtracts val
// (LAPI_Waitcntr). The waiting program drives LAPI's dispatcher: it polls
// and runs the handlers of what arrives meanwhile, at its own cost.
func (m *Machine) Waitcntr(p *sim.Proc, i int, c *Counter, val int) {
	x := m.enter(p, i)
	if c.Node() != i {
		panic(fmt.Sprintf("sp: node %d waits on a counter of node %d", i, c.Node()))
	}
	x.ep.WaitUntil(p, fmt.Sprintf("LAPI_Waitcntr: counter at %d, waiting for %d", c.Value(), val), func() bool { return c.Value() >= val })
	c.Sub(val)
}

// Probe is one look by node i's program at its incoming messages
// (LAPI_Probe): in polling mode the only way they progress.
func (m *Machine) Probe(p *sim.Proc, i int) {
	m.enter(p, i).ep.Poll(p)
}

// Lock locks mu (pthread_mutex_lock), waiting while another thread of the
// node holds it.
func (m *Machine) Lock(p *sim.Proc, mu *Mutex) {
	p.Sleep(m.mutexCost)
	mu.Acquire(p)
}

// Unlock unlocks mu (pthread_mutex_unlock).
func (m *Machine) Unlock(p *sim.Proc, mu *Mutex) {
	p.Sleep(m.mutexCost)
	mu.Release()
}

// kind is a LAPI message's kind.
type kind uint8

const (
	kPut kind = iota
	kGetReq
	kGetReply
	kAM
	kAck
	kRmwReq
	kRmwReply
)

// msg is one LAPI message in flight and at its destination; pooled.
type msg struct {
	m              *Machine
	kind           kind
	src, dst       int
	addr, from     mem.Addr // destination address; get: source address at the target
	n              int
	data           []byte
	tgt, org, cmpl *Counter
	hh             AMHeader
	comp           AMCompletion
	am             AM
	header         am.Header
	// LAPI_Rmw: the operation, its operand (the old value in a reply) and
	// where the origin reads the old value.
	rmw    rmwOp
	val    uint64
	result *uint64
}

func (m *Machine) newMsg(k kind, src, dst int) *msg {
	var g *msg
	if n := len(m.msgs); n > 0 {
		g = m.msgs[n-1]
		m.msgs = m.msgs[:n-1]
	} else {
		g = &msg{m: m}
		g.header = g.handle
	}
	g.kind, g.src, g.dst = k, src, dst
	return g
}

func (m *Machine) free(g *msg) {
	h := g.header
	*g = msg{m: m, header: h, data: g.data[:0]}
	m.msgs = append(m.msgs, g)
}

// enter is the start of every LAPI call by p on node i: the node's program
// is bound to its processor on its first call (handler threads calling
// LAPI are not).
func (m *Machine) enter(p *sim.Proc, i int) *node {
	m.check("LAPI call", i)
	x := m.nodes[i]
	if x.core.App() == nil && x.inHandler == 0 {
		x.core.BindApp(p)
	}
	return x
}

// copyCost is the processor time of copying n bytes (into or out of the
// adapter's FIFOs, or a pack).
func (m *Machine) copyCost(p *sim.Proc, i, n int) {
	c := m.nodes[i].cpu
	p.Sleep(c.Clock().Cycles(m.params.CopyStartupCycles) + sim.TransferTime(n, m.params.MemcpyMBps*1e6))
}

// send hands g, with bytes of payload, to the adapter after the sender's
// software cost and the copy of its first packet into the adapter's send
// FIFO; the copy of the other packets follows while the first ones leave
// (the processor copies at memcpy_mbps, ten times the adapter's rate, so
// the copy stays ahead of the link): it is charged to the sender after the
// message is handed over, overlapping the transfer.
func (m *Machine) send(p *sim.Proc, g *msg, bytes int) {
	p.Sleep(m.sendCost)
	first := min(len(g.data), m.params.PacketBytes)
	if first > 0 {
		m.copyCost(p, g.src, first)
	}
	m.stats.PayloadBytes += uint64(len(g.data))
	m.net.Send(net.Msg{Src: g.src, Dst: g.dst, Bytes: bytes}, g)
	if rest := len(g.data) - first; rest > 0 {
		p.Sleep(sim.TransferTime(rest, m.params.MemcpyMBps*1e6))
	}
}

// receiveCopy charges the destination's copy of a message's data out of
// the adapter's receive FIFO: the packets before the last were copied while
// the next ones arrived (the dispatcher drains the FIFO as it fills, at ten
// times the adapter's rate); what remains after the last packet's arrival
// is the copy of that packet. (Assumed: the earlier packets' copies are
// hidden behind the link and not charged to the node's processor.
// armci-sp.txt is silent on LAPI's own copies; what it measures is
// consistent with them hidden: the contiguous get's 30 MB/s, section 1, is
// the adapter's rate. A processor busy with other work while a long
// message arrives would be charged too little.)
func (m *Machine) receiveCopy(p *sim.Proc, i, n int) {
	m.copyCost(p, i, min(n, m.params.PacketBytes))
}

// snapshot copies n bytes at a in node i's memory into g's data (the
// bytes the adapter will carry; send charges the copy).
func (m *Machine) snapshot(p *sim.Proc, g *msg, i int, a mem.Addr, n int) {
	if cap(g.data) < n {
		g.data = make([]byte, n)
	}
	g.data = g.data[:n]
	m.nodes[i].mem.Read(a, g.data)
}

// PutCounted copies n bytes at src in node i's memory to dst in node tgt's memory
// (LAPI_Put). It returns when the data has been copied out of src: org is
// then incremented; tgt's counter when the data is at the target, cmpl
// when the origin has heard so (any may be nil).
func (m *Machine) PutCounted(p *sim.Proc, i, tgt int, dst, src mem.Addr, n int, tgtC, org, cmpl *Counter) {
	m.enter(p, i)
	m.check("LAPI_Put", tgt)
	g := m.newMsg(kPut, i, tgt)
	g.addr, g.n, g.tgt, g.cmpl = dst, n, tgtC, cmpl
	m.snapshot(p, g, i, src, n)
	m.stats.Puts++
	m.send(p, g, n)
	org.Inc()
}

// GetCounted copies n bytes at src in node tgt's memory to dst in node i's memory
// (LAPI_Get): a request to tgt, whose dispatcher reads the data and sends
// it back. tgtC (a counter of tgt) is incremented when the data has left
// the target, org when it is at dst. It returns once the request is sent.
func (m *Machine) GetCounted(p *sim.Proc, i, tgt int, dst, src mem.Addr, n int, tgtC, org *Counter) {
	m.enter(p, i)
	m.check("LAPI_Get", tgt)
	g := m.newMsg(kGetReq, i, tgt)
	g.addr, g.from, g.n, g.tgt, g.org = dst, src, n, tgtC, org
	m.stats.Gets++
	m.send(p, g, 0)
}

// Amsend sends an active message to node tgt (LAPI_Amsend): the user
// header uhdr and n bytes of data at src; hh runs at tgt on arrival. org
// is incremented when the data has left src (at return), tgtC when the
// completion handler (or, without one, the copy of the data) is done at
// tgt, cmpl when the origin has heard so.
func (m *Machine) Amsend(p *sim.Proc, i, tgt int, hh AMHeader, uhdr []byte, src mem.Addr, n int, tgtC, org, cmpl *Counter) {
	m.enter(p, i)
	m.check("LAPI_Amsend", tgt)
	g := m.newMsg(kAM, i, tgt)
	g.hh, g.n, g.tgt, g.cmpl = hh, n, tgtC, cmpl
	g.am = AM{Src: i, Dst: tgt, Uhdr: append([]byte(nil), uhdr...), Len: n}
	m.snapshot(p, g, i, src, n)
	m.stats.AMs++
	m.send(p, g, n+len(uhdr))
	org.Inc()
}

// Sent, Arrived: nothing to do (the data was snapshot at the call), so
// the network spends no event on Sent (IgnoresSent: net.QuietSender).
func (g *msg) Sent(*net.Message)              {}
func (g *msg) IgnoresSent()                   {}
func (g *msg) Arrived(*net.Message, int, int) {}

// Delivered hands the whole message to the destination's dispatcher.
func (g *msg) Delivered(*net.Message) {
	g.m.nodes[g.dst].ep.Arrive(am.Arrival{Header: g.header, Src: g.src, Ctx: g, DataAt: g.m.eng.Now()})
}

// Failed: the switch lost a message (a fault with no route left).
func (g *msg) Failed(_ *net.Message, err error) {
	g.m.eng.Fail(fmt.Errorf("sp: LAPI message from node %d to node %d: %w", g.src, g.dst, err))
}

// handle is LAPI's dispatcher for g at its destination, in p (the polling
// program or the handler thread), after the receive overhead.
func (g *msg) handle(p *sim.Proc, _ *am.Arrival) am.Completion {
	m := g.m
	x := m.nodes[g.dst]
	x.inHandler++
	defer func() { x.inHandler-- }()
	switch g.kind {
	case kPut:
		m.receiveCopy(p, g.dst, g.n)
		x.mem.Write(g.addr, g.data)
		g.tgt.Inc()
		m.ack(p, g)
	case kGetReq:
		// The target's dispatcher reads the data and sends it back.
		r := m.newMsg(kGetReply, g.dst, g.src)
		r.addr, r.n, r.org = g.addr, g.n, g.org
		m.snapshot(p, r, g.dst, g.from, g.n)
		m.stats.Replies++
		m.send(p, r, g.n)
		g.tgt.Inc()
		m.free(g)
	case kGetReply:
		m.receiveCopy(p, g.dst, g.n)
		x.mem.Write(g.addr, g.data)
		g.org.Inc()
		m.free(g)
	case kAck:
		g.cmpl.Inc()
		m.free(g)
	case kRmwReq:
		m.handleRmw(p, g)
	case kRmwReply:
		*g.result = g.val
		g.org.Inc()
		m.free(g)
	case kAM:
		dst, comp := g.hh(p, &g.am)
		if g.n > 0 {
			m.receiveCopy(p, g.dst, g.n)
			x.mem.Write(dst, g.data)
		}
		if comp == nil {
			g.tgt.Inc()
			m.ack(p, g)
			return nil
		}
		g.comp = comp
		return g.complete
	}
	return nil
}

// complete runs an active message's completion handler in the completion
// thread.
func (g *msg) complete(p *sim.Proc, _ *am.Arrival) {
	m := g.m
	x := m.nodes[g.dst]
	x.inHandler++
	g.comp(p, &g.am)
	x.inHandler--
	g.tgt.Inc()
	m.ack(p, g)
}

// ack tells g's origin that g is done at the target (for its completion
// counter) and frees g. The acknowledgement is generated by the dispatcher
// without a send overhead of its own (assumed: LAPI piggybacks or batches
// its internal acknowledgements; the origin still dispatches it).
// armci-sp.txt does not describe LAPI's acknowledgements; none of its
// figures depends on them (its gets complete on the data's arrival).
func (m *Machine) ack(p *sim.Proc, g *msg) {
	if g.cmpl != nil {
		a := m.newMsg(kAck, g.dst, g.src)
		a.cmpl = g.cmpl
		m.stats.Acks++
		m.net.Send(net.Msg{Src: a.src, Dst: a.dst}, a)
	}
	m.free(g)
}

package sp

import (
	"encoding/binary"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The generic verbs (package machines) on the SP, built as a LAPI program
// builds them: a remote write is a LAPI_Put whose completion counter the
// node keeps, Quiet is LAPI_Fence (wait until every put the node issued is
// complete at its target), a remote read is LAPI_Get followed by
// LAPI_Waitcntr on its origin counter, and the remote atomics are LAPI_Rmw
// (an internal active message whose handler, at the target, updates the
// word and sends the old value back). Their costs are those of the LAPI
// messages they send.
var (
	_ machines.RemoteWrite    = (*Machine)(nil)
	_ machines.RemoteRead     = (*Machine)(nil)
	_ machines.RemoteFetchInc = (*Machine)(nil)
	_ machines.Swap           = (*Machine)(nil)
)

// verbs is a node's state for the generic verbs: the completion counter of
// its puts and how many it issued since the last Quiet, and the origin
// counter of its gets.
type verbs struct {
	fence  *Counter
	issued int
	got    *Counter
}

func (m *Machine) verbs(i int) *verbs {
	x := m.nodes[i]
	if x.verbs == nil {
		x.verbs = &verbs{fence: m.NewCounter(i), got: m.NewCounter(i)}
	}
	return x.verbs
}

// Put is LAPI_Put of n bytes with the node's fence counter as its
// completion counter.
func (m *Machine) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	m.verbPoint(p, to, "puts to", dst, n)
	v := m.verbs(pe)
	v.issued++
	m.PutCounted(p, pe, to, dst, src, n, nil, nil, v.fence)
}

// PutWord is LAPI_Put of one 8-byte word (from a register: no copy out of
// the node's memory beyond the message's own).
func (m *Machine) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, val uint64) {
	m.verbPoint(p, to, "puts a word to", dst, 8)
	v := m.verbs(pe)
	v.issued++
	m.enter(p, pe)
	m.check("LAPI_Put", to)
	g := m.newMsg(kPut, pe, to)
	g.addr, g.n, g.cmpl = dst, 8, v.fence
	g.data = binary.LittleEndian.AppendUint64(g.data[:0], val)
	m.stats.Puts++
	m.send(p, g, 8)
}

// Quiet is LAPI_Fence: it waits until every put node pe issued since the
// last Quiet is complete at its target.
func (m *Machine) Quiet(p *sim.Proc, pe int) {
	v := m.verbs(pe)
	if v.issued == 0 {
		m.enter(p, pe)
		return
	}
	n := v.issued
	v.issued = 0
	m.Waitcntr(p, pe, v.fence, n)
}

// Get is LAPI_Get and LAPI_Waitcntr on its origin counter: it returns when
// the n bytes are at dst.
func (m *Machine) Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int) {
	m.verbPoint(p, from, "gets from", src, n)
	v := m.verbs(pe)
	m.GetCounted(p, pe, from, dst, src, n, nil, v.got)
	m.Waitcntr(p, pe, v.got, 1)
}

// FetchIncAt is LAPI_Rmw FETCH_AND_ADD of one on the word at a in node
// target's memory.
func (m *Machine) FetchIncAt(p *sim.Proc, pe, target int, a mem.Addr) uint64 {
	return m.rmw(p, pe, target, a, rmwFetchAdd, 1)
}

// Swap is LAPI_Rmw SWAP of the word at a in node target's memory with val.
func (m *Machine) Swap(p *sim.Proc, pe, target int, a mem.Addr, val uint64) uint64 {
	return m.rmw(p, pe, target, a, rmwSwap, val)
}

// verbPoint is the verb's scheduling point for an explorer
// (mem.VerbPoint), for node i's memory (none for a node out of range:
// the verb reports that).
func (m *Machine) verbPoint(p *sim.Proc, i int, op string, a mem.Addr, n int) {
	if i >= 0 && i < len(m.nodes) {
		mem.VerbPoint(p, m.nodes[i].mem, op, a, n)
	}
}

// rmwOp is a LAPI_Rmw operation.
type rmwOp uint8

const (
	rmwFetchAdd rmwOp = iota
	rmwSwap
)

// rmw sends the request and waits on its origin counter for the old value.
func (m *Machine) rmw(p *sim.Proc, pe, target int, a mem.Addr, op rmwOp, val uint64) uint64 {
	m.verbPoint(p, target, "read-modify-writes remotely", a, 8)
	v := m.verbs(pe)
	m.enter(p, pe)
	m.check("LAPI_Rmw", target)
	g := m.newMsg(kRmwReq, pe, target)
	g.addr, g.org, g.rmw, g.val = a, v.got, op, val
	var old uint64
	g.result = &old
	m.stats.Rmws++
	m.send(p, g, 8)
	m.Waitcntr(p, pe, v.got, 1)
	return old
}

// handleRmw is the target's dispatcher for a LAPI_Rmw request: it updates
// the word and sends the old value back.
func (m *Machine) handleRmw(p *sim.Proc, g *msg) {
	x := m.nodes[g.dst]
	var b [8]byte
	x.mem.Read(g.addr, b[:])
	old := binary.LittleEndian.Uint64(b[:])
	nv := g.val
	if g.rmw == rmwFetchAdd {
		nv = old + g.val
	}
	binary.LittleEndian.PutUint64(b[:], nv)
	x.mem.Write(g.addr, b[:])
	r := m.newMsg(kRmwReply, g.dst, g.src)
	r.org, r.result, r.val = g.org, g.result, old
	m.stats.Replies++
	m.send(p, r, 8)
	m.free(g)
}

package t3d

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// delivery is a put in flight: at its tail's arrival its bytes are written
// into the target PE's memory.
type delivery struct {
	m   *Machine
	pe  *pe
	to  *mem.Memory
	dst mem.Addr
	buf []byte
}

func (d *delivery) arrive() {
	d.to.Write(d.dst, d.buf)
	d.pe.recv += uint64(len(d.buf))
	d.m.release(d.buf)
}

// Put copies n bytes at src in PE pe's memory to dst in PE to's memory
// (shmem_put). The caller pays the start-up and streams the data into the
// network at put_mbps, slower if the route is busy; Put returns when the
// last byte has left, so src may be reused. The bytes are read at the call
// and become visible at the target when the message's tail arrives: the
// target's spinners wake, its cache is not updated. Use Quiet to wait until
// every put has been delivered. A put of 0 bytes costs the start-up and
// sends nothing; a negative length is a bug of the calling stack (panic).
func (m *Machine) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	m.check("put", pe, to)
	if n < 0 {
		panic(fmt.Sprintf("t3d: put of %d bytes from PE %d to PE %d: negative length (a bug in the calling stack)", n, pe, to))
	}
	x := m.pes[pe]
	p.Sleep(m.putStartup)
	if n == 0 {
		return
	}
	buf := m.buffer(n)
	x.mem.Read(src, buf)
	tr := net.Reserve(m.routeOf(pe, to), p.Now(), n, m.putRate)
	d := &delivery{m: m, pe: m.pes[to], to: m.pes[to].mem, dst: dst, buf: buf}
	m.eng.At(tr.Tail, d.arrive)
	// The acknowledgement returns over the network to the sender. It is
	// a header-sized packet: it is given the idle-route latency and does
	// not book the links (a booking in the future would block traffic
	// that really goes before it).
	x.ackAt = max(x.ackAt, tr.Tail+m.latencyOf(to, pe))
	x.puts++
	p.Sleep(tr.Left - p.Now())
}

// PutWord is Put of one 8-byte value v (a flag or a completion block),
// stored from a register without touching the sender's memory.
func (m *Machine) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64) {
	m.check("put", pe, to)
	x := m.pes[pe]
	p.Sleep(m.putStartup)
	buf := m.buffer(8)
	for i := range 8 {
		buf[i] = byte(v >> (8 * i))
	}
	tr := net.Reserve(m.routeOf(pe, to), p.Now(), 8, m.putRate)
	d := &delivery{m: m, pe: m.pes[to], to: m.pes[to].mem, dst: dst, buf: buf}
	m.eng.At(tr.Tail, d.arrive)
	x.ackAt = max(x.ackAt, tr.Tail+m.latencyOf(to, pe))
	x.puts++
	p.Sleep(tr.Left - p.Now())
}

// Quiet blocks until every put PE pe has issued is acknowledged, i.e.
// written at its target (shmem_quiet: the T3D's wait for remote write
// acknowledgements).
func (m *Machine) Quiet(p *sim.Proc, pe int) {
	m.check("quiet", pe)
	p.Sleep(m.pes[pe].ackAt - p.Now())
}

// Get copies n bytes at src in PE from's memory to dst in PE pe's memory
// (shmem_get) and returns when they are there. A request crosses the
// network; the source bytes are read when it arrives at PE from (so a
// write to src after that is not seen); after one memory access
// (fetch_inc_ns) the data returns at get_mbps (word-by-word prefetches), so
// a get is slower than a put, and is written at dst when its tail arrives.
// A get of 0 bytes costs the start-up and sends nothing; a negative length
// is a bug of the calling stack (panic).
func (m *Machine) Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int) {
	m.check("get", pe, from)
	if n < 0 {
		panic(fmt.Sprintf("t3d: get of %d bytes by PE %d from PE %d: negative length (a bug in the calling stack)", n, pe, from))
	}
	p.Sleep(m.putStartup)
	if n == 0 {
		return
	}
	req := net.Reserve(m.routeOf(pe, from), p.Now(), m.hdr, 0)
	p.Sleep(req.Tail - p.Now())
	buf := m.buffer(n)
	m.pes[from].mem.Read(src, buf)
	p.Sleep(m.fiAccess)
	rep := net.Reserve(m.routeOf(from, pe), p.Now(), n, m.getRate)
	p.Sleep(rep.Tail - p.Now())
	m.pes[pe].mem.Write(dst, buf)
	m.release(buf)
}

// FetchInc reads PE target's fetch-and-increment register from PE pe,
// which atomically increments it, and returns the value read. The request
// and the reply cross the network; concurrent requests are served in the
// order they arrive.
func (m *Machine) FetchInc(p *sim.Proc, pe, target int) uint64 {
	m.check("fetch-and-increment", pe, target)
	p.Sleep(m.putStartup)
	req := net.Reserve(m.routeOf(pe, target), p.Now(), m.hdr, 0)
	p.Sleep(req.Tail + m.fiAccess - p.Now())
	t := m.pes[target]
	v := t.fi
	t.fi++
	rep := net.Reserve(m.routeOf(target, pe), p.Now(), m.hdr, 0)
	p.Sleep(rep.Tail - p.Now())
	return v
}

// SetFetchInc writes PE pe's own fetch-and-increment register (a reset).
func (m *Machine) SetFetchInc(p *sim.Proc, pe int, v uint64) {
	m.check("fetch-and-increment reset", pe)
	p.Sleep(m.fiAccess)
	m.pes[pe].fi = v
}

// ReadFetchInc reads PE pe's own fetch-and-increment register without
// incrementing it (a local read of the register's current value).
func (m *Machine) ReadFetchInc(p *sim.Proc, pe int) uint64 {
	m.check("fetch-and-increment read", pe)
	p.Sleep(m.fiAccess)
	return m.pes[pe].fi
}

// Barrier blocks PE pe until every PE has entered the barrier, then
// releases all of them barrier_ns after the last arrival (the hardware
// barrier network). The benchmark harness uses it; the stacks do not.
func (m *Machine) Barrier(p *sim.Proc, pe int) {
	m.check("barrier", pe)
	b := &m.barrier
	b.arrived++
	if b.arrived < len(m.pes) {
		b.waiting.Wait(p, fmt.Sprintf("hardware barrier (%d of %d PEs arrived)", b.arrived, len(m.pes)))
		return
	}
	b.arrived = 0
	p.Sleep(m.barrierDelay)
	b.waiting.WakeAll()
}

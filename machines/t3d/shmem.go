package t3d

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Traffic classes: the T3D's network keeps requests and responses on
// separate virtual channels, so a response never waits behind the requests
// that caused it; both share the physical channels' bandwidth.
const (
	classRequest  = 0 // puts, get and fetch-and-increment requests
	classResponse = 1 // acknowledgements, get data, fetch-and-increment replies
	classes       = 2
)

// kind is what a network operation is at its current step.
type kind uint8

const (
	opPut      kind = iota // put data, to the target
	opAck                  // the put's acknowledgement, back to the sender
	opGetReq               // a get's request, to the remote PE
	opGetData              // a get's data, back to the requester
	opFIReq                // a fetch-and-increment request
	opFIReply              // its reply with the value
	opFIQueued             // waiting at the register
)

// op is one put, get or fetch-and-increment through the network: the
// net.Handler of each of its messages in turn. Ops are pooled.
//
// Every PE of a large run has one in flight at once, so an op is kept
// small: PE numbers are 32 bits (at most MaxWhatIfPEs), a one-word put's
// data is in the op (word), and its one bound function (fn) runs
// whichever of its two deferred steps is due.
type op struct {
	m     *Machine
	dst   uint64
	src   uint64
	n     int
	buf   []byte
	proc  *sim.Proc // woken when the issuing PE may go on
	value uint64
	// fn runs the operation's deferred step: a get's reply once the
	// remote memory has been read, or else the end of the issuer's
	// start-up and its first message as the issuer blocks. Bound once.
	fn func()
	// The message the issuing process sends as it blocks (sendNow, run
	// by fn): it is injected on the engine's stack (BlockThen).
	bytes    int
	rate     float64
	pe, to   int32   // the PE that issued it and the remote PE
	word     [8]byte // buf of a one-word put
	kind     kind
	class    uint8
	shared   bool // buf is the source memory's shared bytes, not a copy
	pooled   bool // buf is from the machine's pool (release it)
	replying bool // fn is a get's reply (getReply), not the first message (sendNow)
	starting bool // fn ends the issuer's start-up first (start), then sends
}

func (m *Machine) newOp(k kind, pe, to int, p *sim.Proc) *op {
	var o *op
	if n := len(m.ops); n > 0 {
		o = m.ops[n-1]
		m.ops = m.ops[:n-1]
	} else {
		o = &op{m: m}
		// See op.fn; the body is in the closure rather than a bound
		// method's wrapper: one call fewer per step.
		o.fn = func() {
			if o.replying {
				o.replying = false
				o.getReply()
				return
			}
			if o.starting {
				o.starting = false
				o.start()
			}
			o.sendNow()
		}
	}
	o.kind, o.pe, o.to, o.proc = k, int32(pe), int32(to), p // pe, to < MaxWhatIfPEs
	return o
}

func (m *Machine) freeOp(o *op) {
	o.buf, o.proc, o.shared, o.pooled = nil, nil, false, false
	m.ops = append(m.ops, o)
}

func (m *Machine) send(o *op, src, dst, class, n int, rate float64) {
	m.net.Send(net.Msg{Src: src, Dst: dst, Class: class, Bytes: n, Rate: rate}, o)
}

// issue charges p, the issuing process, the operation's start-up
// (put_startup_ns), then sends its first message from the issuing PE to
// the remote one and blocks p until the operation wakes it: the start-up's
// end (start) and the message are one step, run once p has parked, at the
// instant its start-up ends and before anything else happens then
// (sim.Proc.SleepBlockThen), so the network's deep call chain runs on the
// engine's stack, not p's, and p parks once for the start-up and the
// wait.
func (m *Machine) issue(p *sim.Proc, o *op, class, n int, rate float64, reason string) {
	o.class, o.bytes, o.rate, o.starting = uint8(class), n, rate, true // class < classes
	p.SleepBlockThen(m.putStartup, reason, o.fn)
}

// start is what the issuer does as its start-up ends, before the first
// message leaves: a put reads its data (unless it is a word from a
// register) and counts itself unacknowledged.
func (o *op) start() {
	if o.kind != opPut {
		return
	}
	x := o.m.pes[o.pe]
	if o.buf == nil {
		o.read(x, mem.Addr(o.src), o.n)
	}
	o.n = len(o.buf)
	x.unacked++
	x.puts++
}

func (o *op) sendNow() { o.m.send(o, int(o.pe), int(o.to), int(o.class), o.bytes, o.rate) }

// Sent: the data has left the issuing PE; Put returns.
func (o *op) Sent(*net.Message) {
	if o.kind == opPut && o.proc != nil {
		o.proc.Wake()
		o.proc = nil
	}
}

// Arrived writes a put's or a get's bytes into the destination memory as
// each packet arrives, in packet mode. On the fast path the units a
// message crosses in are a simulation grain, not packets: its bytes are
// written whole when its last unit has arrived (Delivered), so no unit
// boundary shows in memory.
func (o *op) Arrived(_ *net.Message, off, n int) {
	if o.m.params.PacketMode {
		o.write(off, n)
	}
}

// write stores bytes [off, off+n) of the operation's data at its
// destination.
func (o *op) write(off, n int) {
	switch o.kind {
	case opPut:
		t := o.m.pes[o.to]
		o.deliver(&t.mem, off, n)
		t.recv += uint64(n)
	case opGetData:
		o.deliver(&o.m.pes[o.pe].mem, off, n)
	}
}

// deliver writes bytes [off, off+n) of the operation's data into m at its
// destination: shared when they are the source memory's shared bytes.
func (o *op) deliver(m *mem.Memory, off, n int) {
	a := mem.Addr(o.dst) + mem.Addr(off)
	if o.shared {
		m.WriteShared(a, o.buf[off:off+n])
	} else {
		m.Write(a, o.buf[off:off+n])
	}
}

// read captures the n bytes at src in x's memory as the operation's data:
// the memory's shared bytes themselves when they are shared (they never
// change: the memory copies them before a write), else a pooled copy.
func (o *op) read(x *pe, src mem.Addr, n int) {
	if b, ok := x.mem.SharedView(src, n); ok {
		o.buf, o.shared, o.pooled = b, true, false
		return
	}
	o.buf, o.shared, o.pooled = o.m.buffer(n), false, true
	x.mem.Read(src, o.buf)
}

// releaseBuf returns the operation's data buffer to the pool unless it is
// shared bytes.
func (o *op) releaseBuf() {
	if o.pooled {
		o.m.release(o.buf)
	}
	o.buf, o.shared, o.pooled = nil, false, false
}

// Delivered moves the operation to its next step.
func (o *op) Delivered(*net.Message) {
	m := o.m
	if !m.params.PacketMode && (o.kind == opPut || o.kind == opGetData) {
		o.write(0, o.n)
	}
	switch o.kind {
	case opPut:
		// The target acknowledges the write to the sender.
		o.releaseBuf()
		o.kind = opAck
		m.send(o, int(o.to), int(o.pe), classResponse, 0, 0)
	case opAck:
		x := m.pes[o.pe]
		x.unacked--
		if x.unacked == 0 {
			x.quiet.WakeAll()
		}
		m.freeOp(o)
	case opGetReq:
		// The source is read when the request arrives; the data leaves
		// after one memory access.
		o.read(m.pes[o.to], mem.Addr(o.src), o.n)
		o.replying = true
		m.eng.After(m.fiAccess, o.fn)
	case opGetData:
		o.releaseBuf()
		o.proc.Wake()
		m.freeOp(o)
	case opFIReq:
		t := m.pes[o.to]
		o.kind = opFIQueued
		if t.fiq == nil {
			t.fiq = &fiQueue{serve: t.fiServe}
		}
		q := t.fiq
		q.ops = append(q.ops, o)
		if len(q.ops) == 1 {
			m.eng.After(m.fiAccess, q.serve)
		}
	case opFIReply:
		o.proc.Wake()
	}
}

// Failed: the T3D's network loses nothing unless a fault was injected
// with no way around it; the run stops with the reason.
func (o *op) Failed(_ *net.Message, err error) {
	o.m.eng.Fail(fmt.Errorf("t3d: PE %d to PE %d: %w", o.pe, o.to, err))
}

func (o *op) getReply() {
	o.kind = opGetData
	o.m.send(o, int(o.to), int(o.pe), classResponse, o.n, o.m.getRate)
}

// fiServe: the register has served the request at the head of its queue
// (one access); the reply leaves and the next request is served.
func (x *pe) fiServe() {
	m := x.m
	q := x.fiq
	o := q.ops[0]
	copy(q.ops, q.ops[1:])
	q.ops[len(q.ops)-1] = nil
	q.ops = q.ops[:len(q.ops)-1]
	o.value = x.fi
	x.fi++
	q.served++
	o.kind = opFIReply
	m.send(o, int(x.id), int(o.pe), classResponse, 0, 0)
	if len(q.ops) > 0 {
		m.eng.After(m.fiAccess, q.serve)
	}
}

// Put copies n bytes at src in PE pe's memory to dst in PE to's memory
// (shmem_put). The caller pays the start-up and streams the data into the
// network at put_mbps, slower if the route is busy; Put returns when the
// last byte has left, so src may be reused. The bytes are read at the call
// and become visible at the target as they arrive (the whole message at its
// tail's arrival on the fast path): the target's spinners wake, its cache
// is not updated. The target then acknowledges the put with one
// header-sized packet over the reverse path (assumed: one acknowledgement
// per put; the T3D acknowledged remote writes packet by packet, which
// would add reverse traffic of one header per 32 bytes); Quiet waits for
// the acknowledgements. A put of 0 bytes costs the
// start-up and sends nothing; a negative length is a bug of the calling
// stack (panic).
func (m *Machine) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	m.check("put", pe, to)
	if n < 0 {
		panic(fmt.Sprintf("t3d: put of %d bytes from PE %d to PE %d: negative length (a bug in the calling stack)", n, pe, to))
	}
	mem.VerbPoint(p, m.Memory(to), "puts to", dst, n)
	if n == 0 {
		p.Sleep(m.putStartup)
		return
	}
	o := m.newOp(opPut, pe, to, p)
	o.dst, o.src, o.n = uint64(dst), uint64(src), n
	m.issue(p, o, classRequest, n, m.putRate, putReason)
}

// putReason is what a process issuing a put waits for.
const putReason = "put: its data leaving the PE"

// PutWord is Put of one 8-byte value v (a flag or a completion block),
// stored from a register without touching the sender's memory.
func (m *Machine) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64) {
	m.check("put", pe, to)
	mem.VerbPoint(p, m.Memory(to), "puts a word to", dst, 8)
	o := m.newOp(opPut, pe, to, p)
	for i := range 8 {
		o.word[i] = byte(v >> (8 * i))
	}
	o.buf, o.dst, o.n = o.word[:], uint64(dst), 8
	m.issue(p, o, classRequest, 8, m.putRate, putReason)
}

// Quiet blocks until every put PE pe has issued is acknowledged, i.e.
// written at its target and the acknowledgement back (shmem_quiet: the
// T3D's wait for remote write acknowledgements).
func (m *Machine) Quiet(p *sim.Proc, pe int) {
	m.check("quiet", pe)
	x := m.pes[pe]
	for x.unacked > 0 {
		x.quiet.Wait(p, "quiet: puts not yet acknowledged")
	}
}

// Get copies n bytes at src in PE from's memory to dst in PE pe's memory
// (shmem_get) and returns when they are there. A request crosses the
// network; the source bytes are read when it arrives at PE from (so a
// write to src after that is not seen); after one memory access
// (fetch_inc_ns) the data returns at get_mbps (word-by-word prefetches), so
// a get is slower than a put, and is written at dst as it arrives.
// A get of 0 bytes costs the start-up and sends nothing; a negative length
// is a bug of the calling stack (panic).
func (m *Machine) Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int) {
	m.check("get", pe, from)
	if n < 0 {
		panic(fmt.Sprintf("t3d: get of %d bytes by PE %d from PE %d: negative length (a bug in the calling stack)", n, pe, from))
	}
	mem.VerbPoint(p, m.Memory(from), "gets from", src, n)
	if n == 0 {
		p.Sleep(m.putStartup)
		return
	}
	o := m.newOp(opGetReq, pe, from, p)
	o.dst, o.src, o.n = uint64(dst), uint64(src), n
	m.issue(p, o, classRequest, 0, 0, "get: its data coming back")
}

// FetchInc reads PE target's fetch-and-increment register from PE pe,
// which atomically increments it, and returns the value read. The request
// and the reply cross the network; the register serves one request at a
// time (fetch_inc_ns each), in the order they arrive.
func (m *Machine) FetchInc(p *sim.Proc, pe, target int) uint64 {
	m.check("fetch-and-increment", pe, target)
	o := m.newOp(opFIReq, pe, target, p)
	m.issue(p, o, classRequest, 0, 0, "fetch-and-increment: its reply coming back")
	v := o.value
	m.freeOp(o)
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
		if b.reason == "" {
			b.reason = fmt.Sprintf("hardware barrier (waiting for all %d PEs to arrive; those waiting are listed)", len(m.pes))
		}
		b.waiting.Wait(p, b.reason)
		return
	}
	b.arrived = 0
	p.Sleep(m.barrierDelay)
	b.waiting.WakeAll()
}

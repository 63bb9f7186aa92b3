package mpich

import (
	"fmt"
	"math/bits"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Software costs MPICH charges itself (CPU time of its own code, in cycles
// of the process's CPU clock: 125 MHz on the SX-4). Everything else is
// machine operations.
const (
	// minSegment is the smallest piece of a rendezvous message worth moving
	// through the pool when it cannot take the whole remainder. Assumed:
	// the paper gives no segment size; 64 KB is small next to the 3-4 MB
	// pool (so a sender proceeds while another message holds part of it)
	// and large enough that moving it (about 55 us at 1.2 GB/s) takes
	// longer than its data packet's software (2 x 13.6 us of packet_cycles).
	minSegment = 64 * 1024
)

// Back-off of a sender whose slot, queue or pool is full (section 5: "tries
// again later (perhaps only a microsecond later, or even sooner)"),
// doubling up to backoffMax. backoffMin is the paper's "a microsecond";
// backoffMax is assumed: the paper names no limit, and 32 us is about one
// short-message latency (37 us, Figure 6), so a waiting sender notices a
// freed slot within one message time.
const (
	backoffMin = sim.Microsecond
	backoffMax = 32 * sim.Microsecond
)

// Send request states.
const (
	sNew    = iota // envelope not yet sent
	sWaitOK        // rendezvous: request sent, waiting for ok-to-send
	sData          // rendezvous: moving segments through the pool (or one put)
	sFlush         // everything queued; done when the last packet leaves
)

// request is a send or receive (MPI_Request), or an unexpected message.
type request struct {
	r      *Rank
	id     uint64
	send   bool
	buf    mem.Region
	peer   int // send: destination; receive: source or AnySource
	tag    int // on the wire: the context id in the high 32 bits (contextid.go)
	ctx    int // communicator's context id (receive: what AnyTag matches)
	done   bool
	status stacks.Status
	err    error

	state int      // send
	rreq  uint64   // send: the receiver's request (rendezvous)
	sent  int      // send: bytes put into the pool so far
	got   int      // receive: bytes copied out so far (rendezvous)
	dst   mem.Addr // send, direct rendezvous: the receive buffer
	dn    int      // send, direct rendezvous: how much of the message it takes

	hdr  header     // unexpected: its envelope packet
	pkt  mem.Region // unexpected short: the packet holding the data
	copy mem.Region // unexpected eager, copied out of per-sender data memory
}

// outPkt is a control packet waiting to be sent, in order, to one process.
type outPkt struct {
	h    header
	data mem.Region // inline data (short)
	req  *request   // completes when this packet leaves (if last)
	last bool
	// charged: the software work of the send path has been done for this
	// packet (once, however often SendControl finds no room for it).
	charged bool
}

// Rank is one process's MPI: the protocol layer over a Device. It
// implements stacks.Comm.
type Rank struct {
	hdr        headerReader // readIncoming's
	hout       headerWriter // build's
	w          *World
	rank       int
	dev        Device
	cpu        machines.Processor
	direct     DirectData // dev, if it can put into the receive buffer
	room       RoomWaiter // dev, if it signals free room
	perSender  bool       // dev's data memory is one buffer per sender
	copyFree   []mem.Region
	sendPkt    mem.Region // where outgoing packets are built
	built      pktID      // the packet sendPkt holds, if any
	builtSize  int
	pktFree    []mem.Region
	posted     []*request
	unexpected []*request
	sends      []*request
	out        [][]outPkt // per destination; nil when empty (outFree)
	// outFree holds the queues' emptied arrays for the next destinations
	// that need one: a rank that talks to every other keeps a few
	// arrays, not one per peer (at 1,024 PEs one per ordered pair
	// held 150 MB).
	outFree   [][]outPkt
	queued    []uint64 // bit dest: out[dest] is not empty (flush visits only those)
	reqs      map[uint64]*request
	nextID    uint64
	seqOut    []uint64
	seqIn     []uint64
	blocked   []bool
	blockedAt []int // the peers blocked is true for, cleared at the next startSends
	nbuf      int
	err       error
	stats     Stats
	th        threadState // threads of this process (threads.go)
	ctx       ctxState    // context ids (contextid.go)
	mpir      mpir        // MPICH2's communicator objects (commobj.go)
}

// pktID names an outgoing packet: its destination and sequence number
// (seq 0: none).
type pktID struct {
	dest int
	seq  uint64
}

// Stats counts the control packets a rank sent, by kind.
type Stats struct {
	Short, Eager, RTS, OK, Data int
}

// Stats returns the packet counts so far.
func (r *Rank) Stats() Stats { return r.stats }

func (st *Stats) count(kind int) {
	switch kind {
	case pktShort:
		st.Short++
	case pktEager:
		st.Eager++
	case pktRTS:
		st.RTS++
	case pktOK:
		st.OK++
	case pktData, pktFin:
		st.Data++
	}
}

func newRank(w *World, i int, dev Device) (*Rank, error) {
	n := w.host.Procs()
	r := &Rank{w: w, rank: i, dev: dev, cpu: machines.ProcessorOf(w.host, i), out: make([][]outPkt, n), reqs: map[uint64]*request{},
		seqOut: make([]uint64, n), seqIn: make([]uint64, n), blocked: make([]bool, n),
		queued: make([]uint64, (n+63)/64)}
	r.direct, _ = dev.(DirectData)
	r.room, _ = dev.(RoomWaiter)
	if ps, ok := dev.(PerSenderData); ok {
		r.perSender = ps.DataPerSender()
	}
	var err error
	r.sendPkt, err = w.host.Alloc(i, "mpich packet", roundUp(HeaderBytes+w.params.ShortBytes))
	if err != nil {
		return nil, err
	}
	return r, r.initThreads()
}

// Rank is this process's rank in MPI_COMM_WORLD.
func (r *Rank) Rank() int { return r.rank }

// Size is the number of processes.
func (r *Rank) Size() int { return len(r.w.ranks) }

// CPU is the process's processor, for workloads that fill and check buffers
// as the process's program sees them (through its cache and store buffer).
func (r *Rank) CPU() *mem.CPU { return r.w.host.CPU(r.rank) }

// Memcpy is the library memcpy of the rank's machine (stacks.Copier).
func (r *Rank) Memcpy(p *sim.Proc, dst, src mem.Addr, n int) { r.w.memcpy(p, r.rank, dst, src, n) }

// Device is the abstract device this rank uses.
func (r *Rank) Device() Device { return r.dev }

// Buffer allocates n bytes of the process's private memory.
func (r *Rank) Buffer(n int) (mem.Region, error) {
	r.nbuf++
	return r.w.host.Alloc(r.rank, fmt.Sprintf("buffer%d", r.nbuf), n)
}

// Send is MPI_Send: it returns when buf may be reused.
func (r *Rank) Send(p *sim.Proc, buf mem.Region, dest, tag int) error {
	return r.send(p, buf, dest, tag, 0)
}

func (r *Rank) send(p *sim.Proc, buf mem.Region, dest, tag, ctx int) error {
	if err := r.enter(p, "MPI_Send"); err != nil {
		return err
	}
	defer r.exit(p)
	q, err := r.isend(p, buf, dest, tag, ctx)
	if err != nil {
		return err
	}
	_, err = q.wait(p)
	return err
}

// Recv is MPI_Recv.
func (r *Rank) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	return r.recv(p, buf, src, tag, 0)
}

func (r *Rank) recv(p *sim.Proc, buf mem.Region, src, tag, ctx int) (stacks.Status, error) {
	if err := r.enter(p, "MPI_Recv"); err != nil {
		return stacks.Status{}, err
	}
	defer r.exit(p)
	q, err := r.irecv(p, buf, src, tag, ctx)
	if err != nil {
		return stacks.Status{}, err
	}
	return q.wait(p)
}

func (r *Rank) newRequest(send bool, buf mem.Region, peer, tag, ctx int) *request {
	r.nextID++
	return &request{r: r, id: r.nextID, send: send, buf: buf, peer: peer, tag: wireTag(tag, ctx), ctx: ctx}
}

// Isend is MPI_Isend: the protocol is chosen by length (section 3).
func (r *Rank) Isend(p *sim.Proc, buf mem.Region, dest, tag int) (stacks.Request, error) {
	if err := r.enter(p, "MPI_Isend"); err != nil {
		return nil, err
	}
	defer r.exit(p)
	return r.isend(p, buf, dest, tag, 0)
}

// Irecv is MPI_Irecv: it matches an unexpected message, or is posted.
func (r *Rank) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	if err := r.enter(p, "MPI_Irecv"); err != nil {
		return nil, err
	}
	defer r.exit(p)
	return r.irecv(p, buf, src, tag, 0)
}

func (r *Rank) isend(p *sim.Proc, buf mem.Region, dest, tag, ctx int) (*request, error) {
	if dest < 0 || dest >= r.Size() {
		return nil, fmt.Errorf("mpich: rank %d: send to invalid destination %d", r.rank, dest)
	}
	if dest == r.rank {
		return nil, fmt.Errorf("mpich: rank %d: send to itself: self-sends are not implemented", r.rank)
	}
	if tag < 0 {
		return nil, fmt.Errorf("mpich: rank %d: send with negative tag %d", r.rank, tag)
	}
	if tag >= maxTag {
		return nil, fmt.Errorf("mpich: rank %d: send with tag %d, above MPI_TAG_UB (%d)", r.rank, tag, maxTag-1)
	}
	q := r.newRequest(true, buf, dest, tag, ctx)
	r.csLock(p)
	defer r.csUnlock(p)
	r.sends = append(r.sends, q)
	if _, _, err := r.progress(p); err != nil {
		return nil, err
	}
	return q, nil
}

func (r *Rank) irecv(p *sim.Proc, buf mem.Region, src, tag, ctx int) (*request, error) {
	if src != stacks.AnySource && (src < 0 || src >= r.Size()) {
		return nil, fmt.Errorf("mpich: rank %d: receive from invalid source %d", r.rank, src)
	}
	q := r.newRequest(false, buf, src, tag, ctx)
	r.csLock(p)
	defer r.csUnlock(p)
	for i, u := range r.unexpected {
		if q.matches(u.hdr) {
			r.unexpected = append(r.unexpected[:i], r.unexpected[i+1:]...)
			if u.copy.Mem != nil {
				r.deliverCopy(p, q, u)
				return q, nil
			}
			err := r.deliver(p, q, u.hdr, u.pkt)
			if u.pkt.Len > 0 {
				r.pktFree = append(r.pktFree, u.pkt)
			}
			return q, err
		}
	}
	r.posted = append(r.posted, q)
	return q, nil
}

func (q *request) matches(h header) bool {
	return (q.peer == stacks.AnySource || q.peer == h.src) &&
		((q.tag == stacks.AnyTag && h.tag>>ctxShift == q.ctx) || q.tag == h.tag)
}

// Wait blocks until the request completes.
func (q *request) Wait(p *sim.Proc) (stacks.Status, error) {
	if err := q.r.enter(p, "MPI_Wait"); err != nil {
		return stacks.Status{}, err
	}
	defer q.r.exit(p)
	return q.wait(p)
}

func (q *request) wait(p *sim.Proc) (stacks.Status, error) {
	if err := q.r.waitUntil(p, func() bool { return q.done }); err != nil {
		return stacks.Status{}, err
	}
	return q.status, q.err
}

// Test progresses the device once and reports completion.
func (q *request) Test(p *sim.Proc) (bool, stacks.Status, error) {
	if err := q.r.enter(p, "MPI_Test"); err != nil {
		return false, stacks.Status{}, err
	}
	defer q.r.exit(p)
	if !q.done {
		q.r.csLock(p)
		_, _, err := q.r.progress(p)
		q.r.csUnlock(p)
		if err != nil {
			return false, stacks.Status{}, err
		}
	}
	return q.done, q.status, q.err
}

// waitUntil runs the progress engine until done: polling for packets,
// backing off when a slot, queue or the pool is full (or, with a device
// that signals free room, spinning until room or a packet comes), and
// otherwise spinning until a packet arrives.
func (r *Rank) waitUntil(p *sim.Proc, done func() bool) error {
	if r.th.locks && r.w.params.ThreadLocking == LockingProgress {
		return r.waitThreaded(p, done)
	}
	backoff := backoffMin
	for !done() {
		did, retry, err := r.progress(p)
		if err != nil {
			return err
		}
		switch {
		case done() || did:
			backoff = backoffMin
		case retry && r.room != nil:
			r.room.WaitRoom(p)
		case retry:
			r.cpu.Delay(p, backoff)
			backoff = min(2*backoff, backoffMax)
		default:
			r.dev.WaitControl(p)
		}
	}
	return nil
}

// progress starts sends, sends queued packets and handles incoming ones.
// did reports that something happened; retry that something is waiting
// for room (a slot, a queue entry or pool memory).
func (r *Rank) progress(p *sim.Proc) (did, retry bool, err error) {
	if r.err != nil {
		return false, false, r.err
	}
	defer func() {
		if err != nil && r.err == nil {
			r.err = err
		}
	}()
	d1, r1, err := r.startSends(p)
	if err != nil {
		return false, false, err
	}
	d2, r2, err := r.flush(p)
	if err != nil {
		return false, false, err
	}
	d3 := false
	if r.th.poller == nil || r.th.poller == p { // another thread polls the device (threads.go)
		if d3, err = r.readIncoming(p); err != nil {
			return false, false, err
		}
	}
	d4, r4 := false, false
	if d3 {
		if d4, r4, err = r.flush(p); err != nil {
			return false, false, err
		}
	}
	return d1 || d2 || d3 || d4, r1 || r2 || r4, nil
}

// enqueue queues a control packet to dest, numbering it.
func (r *Rank) enqueue(dest int, o outPkt) {
	r.seqOut[dest]++
	o.h.seq = r.seqOut[dest]
	o.h.src = r.rank
	if r.out[dest] == nil {
		if n := len(r.outFree); n > 0 {
			r.out[dest], r.outFree = r.outFree[n-1], r.outFree[:n-1]
		}
	}
	r.out[dest] = append(r.out[dest], o)
	r.queued[dest>>6] |= 1 << (dest & 63)
}

// popOut removes the first packet queued to dest, shifting the others
// down (queues are short), and hands the array to outFree once the queue
// is empty.
func (r *Rank) popOut(dest int) {
	q := r.out[dest]
	copy(q, q[1:])
	q[len(q)-1] = outPkt{}
	q = q[:len(q)-1]
	if len(q) > 0 {
		r.out[dest] = q
		return
	}
	r.out[dest] = nil
	r.outFree = append(r.outFree, q)
	r.queued[dest>>6] &^= 1 << (dest & 63)
}

// nextQueued is the first destination from dest on with packets queued, or
// -1: flush's work follows the packets queued, not the number of processes.
func (r *Rank) nextQueued(dest int) int {
	for dest>>6 < len(r.queued) {
		if w := r.queued[dest>>6] >> (dest & 63); w != 0 {
			return dest + bits.TrailingZeros64(w)
		}
		dest = (dest | 63) + 1
	}
	return -1
}

// startSends moves each send along its protocol, in order; a send whose
// envelope cannot go yet holds back later sends to the same process (MPI
// messages do not overtake).
func (r *Rank) startSends(p *sim.Proc) (did, retry bool, err error) {
	for _, q := range r.blockedAt {
		r.blocked[q] = false
	}
	r.blockedAt = r.blockedAt[:0]
	for _, q := range r.sends {
		n := q.buf.Len
		switch q.state {
		case sNew:
			if r.blocked[q.peer] {
				continue
			}
			h := header{tag: q.tag, len: n, sreq: q.id}
			switch {
			case n < r.w.params.ShortBytes: // short: data in the packet
				h.kind = pktShort
				r.enqueue(q.peer, outPkt{h: h, data: q.buf, req: q, last: true})
				q.state = sFlush
			case n <= r.w.params.EagerBytes && n <= r.dev.DataCapacity(): // eager: data through the pool now
				data, ok, err := r.dev.AllocData(p, q.peer, n, n)
				if err != nil {
					return false, false, err
				}
				if !ok {
					r.blocked[q.peer], retry = true, true
					r.blockedAt = append(r.blockedAt, q.peer)
					continue
				}
				r.dev.PutData(p, q.peer, data, q.buf)
				h.kind, h.addr, h.n = pktEager, data.Addr, n
				r.enqueue(q.peer, outPkt{h: h, req: q, last: true})
				q.state = sFlush
			default: // rendezvous: announce, wait for ok-to-send
				h.kind = pktRTS
				r.enqueue(q.peer, outPkt{h: h})
				q.state = sWaitOK
			}
			did = true
		case sData:
			if r.direct != nil {
				// Direct rendezvous: put the message into the receive
				// buffer the ok-to-send named, then say so.
				if err := r.direct.PutDirect(p, q.peer, q.dst, q.buf.Slice(0, q.dn)); err != nil {
					return false, false, err
				}
				h := header{kind: pktFin, tag: q.tag, len: n, sreq: q.id, rreq: q.rreq, addr: q.dst, n: q.dn}
				q.sent = n
				r.enqueue(q.peer, outPkt{h: h, req: q, last: true})
				q.state = sFlush
				did = true
				continue
			}
			for q.sent < n {
				rem := n - q.sent
				data, ok, err := r.dev.AllocData(p, q.peer, min(rem, minSegment, r.dev.DataCapacity()), rem)
				if err != nil {
					return false, false, err
				}
				if !ok {
					retry = true
					break
				}
				r.dev.PutData(p, q.peer, data, q.buf.Slice(q.sent, data.Len))
				h := header{kind: pktData, tag: q.tag, len: n, sreq: q.id, rreq: q.rreq, addr: data.Addr, off: q.sent, n: data.Len}
				q.sent += data.Len
				r.enqueue(q.peer, outPkt{h: h, req: q, last: q.sent == n})
				did = true
			}
			if q.sent == n {
				q.state = sFlush
			}
		}
	}
	return did, retry, nil
}

// flush sends queued packets in order, per destination, until one does
// not fit.
func (r *Rank) flush(p *sim.Proc) (did, retry bool, err error) {
	for dest := r.nextQueued(0); dest >= 0; dest = r.nextQueued(dest + 1) {
		for len(r.out[dest]) > 0 {
			o := &r.out[dest][0]
			size := r.build(p, dest, o)
			ok, err := r.dev.SendControl(p, r.sendPkt, size, dest)
			if err != nil {
				return false, false, err
			}
			if !ok {
				retry = true
				break
			}
			r.stats.count(o.h.kind)
			if o.last {
				r.complete(o.req, stacks.Status{}, nil)
			}
			r.popOut(dest)
			did = true
		}
	}
	return did, retry, nil
}

// build writes packet o into the private packet buffer with scalar stores
// (and its inline data with memcpy), after the software work of the send
// path, and returns its size: the packet Figure 3 hands to PKT_COPYIN.
// Figure 3 builds a packet once and, while the slot is full, only re-tests
// the ready bit: a packet still in the buffer is not built again, and the
// software work is charged once per packet even if another destination's
// packet was built in the buffer meanwhile (then only the stores are
// redone).
func (r *Rank) build(p *sim.Proc, dest int, o *outPkt) int {
	id := pktID{dest: dest, seq: o.h.seq}
	if r.built == id {
		return r.builtSize
	}
	// The send path's software (once per packet), then the header's
	// stores: one run (Processor.StoreRun).
	r.hout.write(p, r.cpu, !o.charged, r.w.params.sendCode(), r.w.sendCycles(), r.sendPkt.Addr, o.h.words())
	o.charged = true
	size := HeaderBytes
	if o.h.kind == pktShort && o.data.Len > 0 {
		r.w.memcpy(p, r.rank, r.sendPkt.Addr+HeaderBytes, o.data.Addr, o.data.Len)
		size += o.data.Len
	}
	r.built, r.builtSize = id, size
	return size
}

// headerWriter runs the send path's code, if the packet has not paid for
// it yet, and stores the packet's header into the rank's packet buffer, a
// word at a time, as one run of stores (machines.Processor.StoreRun). The
// rank keeps one, its fill bound once.
type headerWriter struct {
	cpu    machines.Processor
	p      *sim.Proc
	run    bool // the send path's code runs first
	code   mem.Code
	cycles float64
	at     mem.Addr
	words  [hdrWords]uint64
	fn     func() // fill
}

// write runs code for cycles if run, then stores words at a, one Store a
// word.
func (h *headerWriter) write(p *sim.Proc, c machines.Processor, run bool, code mem.Code, cycles float64, a mem.Addr, words [hdrWords]uint64) {
	if h.fn == nil {
		h.fn = h.fill
	}
	h.cpu, h.p, h.run, h.code, h.cycles, h.at, h.words = c, p, run, code, cycles, a, words
	c.StoreRun(p, h.fn)
}

// fill is the run's work. It works on a copy of what write set: run step
// by step its stores sleep, and another thread of the process may build a
// packet meanwhile.
func (h *headerWriter) fill() {
	c, p, run, code, cycles, a, words := h.cpu, h.p, h.run, h.code, h.cycles, h.at, h.words
	if run {
		c.Execute(p, code, cycles)
	}
	for i, v := range words {
		c.Store(p, a+mem.Addr(8*i), 8, v)
	}
}

func (r *Rank) complete(q *request, st stacks.Status, err error) {
	if q == nil || q.done {
		return
	}
	q.done, q.status, q.err = true, st, err
	if q.send {
		for i, s := range r.sends {
			if s == q {
				r.sends = append(r.sends[:i], r.sends[i+1:]...)
				break
			}
		}
	}
	delete(r.reqs, q.id)
}

func (r *Rank) pktBuf() (mem.Region, error) {
	if n := len(r.pktFree); n > 0 {
		b := r.pktFree[n-1]
		r.pktFree = r.pktFree[:n-1]
		return b, nil
	}
	return r.w.host.Alloc(r.rank, "mpich packet", roundUp(HeaderBytes+r.w.params.ShortBytes))
}

// readIncoming reads and handles every packet that has arrived.
func (r *Rank) readIncoming(p *sim.Proc) (bool, error) {
	did := false
	for {
		pkt, err := r.pktBuf()
		if err != nil {
			return did, err
		}
		from, ok, err := r.dev.ReadControl(p, pkt)
		if err != nil || !ok {
			r.pktFree = append(r.pktFree, pkt)
			return did, err
		}
		did = true
		h, err := r.hdr.read(r.cpu, p, pkt, r.rank, from, r.Size())
		if err != nil {
			return did, err
		}
		if h.seq != r.seqIn[from]+1 {
			return did, &CorruptionError{Rank: r.rank, From: from, Offset: 8 * wSeq, At: p.Now(),
				What: fmt.Sprintf("holds sequence number %d, expected %d (a stale or lost packet)", h.seq, r.seqIn[from]+1)}
		}
		r.seqIn[from]++
		r.cpu.Execute(p, r.w.params.recvCode(), r.w.recvCycles())
		keep, err := r.handle(p, h, pkt)
		if err != nil {
			return did, err
		}
		if !keep {
			r.pktFree = append(r.pktFree, pkt)
		}
	}
}

// handle acts on one incoming packet; keep reports that pkt now holds an
// unexpected short message.
func (r *Rank) handle(p *sim.Proc, h header, pkt mem.Region) (keep bool, err error) {
	switch h.kind {
	case pktShort, pktEager, pktRTS:
		for i, q := range r.posted {
			if q.matches(h) {
				r.posted = append(r.posted[:i], r.posted[i+1:]...)
				return false, r.deliver(p, q, h, pkt)
			}
		}
		u := &request{hdr: h}
		switch {
		case h.kind == pktShort:
			u.pkt, keep = pkt, true
		case h.kind == pktEager && r.perSender:
			if err := r.copyUnexpected(p, u); err != nil {
				return false, err
			}
		}
		r.unexpected = append(r.unexpected, u)
		return keep, nil
	case pktOK:
		q := r.findSend(h.sreq)
		if q == nil || q.state != sWaitOK {
			return false, &CorruptionError{Rank: r.rank, From: h.src, Offset: 8 * wSreq, At: p.Now(),
				What: fmt.Sprintf("answers send request %d, which awaits no ok-to-send", h.sreq)}
		}
		q.rreq, q.state = h.rreq, sData
		q.dst, q.dn = h.addr, min(h.n, q.buf.Len)
		return false, nil
	case pktFin:
		q := r.reqs[h.rreq]
		if q == nil || r.direct == nil {
			return false, &CorruptionError{Rank: r.rank, From: h.src, Offset: 8 * wRreq, At: p.Now(),
				What: fmt.Sprintf("announces data put into receive request %d, which is not waiting", h.rreq)}
		}
		r.direct.ReceivedDirect(p, q.buf.Slice(0, min(h.n, q.buf.Len)))
		r.complete(q, q.status, q.err)
		return false, nil
	case pktData:
		q := r.reqs[h.rreq]
		if q == nil {
			return false, &CorruptionError{Rank: r.rank, From: h.src, Offset: 8 * wRreq, At: p.Now(),
				What: fmt.Sprintf("carries data for receive request %d, which is not waiting", h.rreq)}
		}
		data := r.dev.DataAt(h.addr, h.n)
		if room := q.buf.Len - h.off; room > 0 {
			r.dev.GetData(p, q.buf.Slice(h.off, min(room, h.n)), data.Slice(0, min(room, h.n)))
		}
		if err := r.dev.FreeData(p, data); err != nil {
			return false, err
		}
		q.got += h.n
		if q.got >= h.len {
			r.complete(q, q.status, q.err)
		}
		return false, nil
	}
	return false, fmt.Errorf("mpich: rank %d: packet kind %d from rank %d", r.rank, h.kind, h.src)
}

func (r *Rank) findSend(id uint64) *request {
	for _, q := range r.sends {
		if q.id == id {
			return q
		}
	}
	return nil
}

// deliver completes (or, for rendezvous, starts) receive q with the message
// whose envelope is h.
func (r *Rank) deliver(p *sim.Proc, q *request, h header, pkt mem.Region) error {
	st := stacks.Status{Source: h.src, Tag: userTag(h.tag), Len: h.len}
	var trunc error
	n := h.len
	if n > q.buf.Len {
		trunc = fmt.Errorf("mpich: rank %d: message of %d bytes from rank %d (tag %d) truncated to the %d-byte receive buffer", r.rank, h.len, h.src, h.tag, q.buf.Len)
		n = q.buf.Len
	}
	switch h.kind {
	case pktShort:
		if n > 0 {
			r.w.memcpy(p, r.rank, q.buf.Addr, pkt.Addr+HeaderBytes, n)
		}
		r.complete(q, st, trunc)
	case pktEager:
		data := r.dev.DataAt(h.addr, h.n)
		if n > 0 {
			r.dev.GetData(p, q.buf.Slice(0, n), data.Slice(0, n))
		}
		if err := r.dev.FreeData(p, data); err != nil {
			return err
		}
		r.complete(q, st, trunc)
	case pktRTS:
		q.status, q.err = st, trunc
		r.reqs[q.id] = q
		ok := header{kind: pktOK, sreq: h.sreq, rreq: q.id}
		if r.direct != nil { // name the receive buffer for the sender's put
			ok.addr, ok.n = q.buf.Addr, n
		}
		r.enqueue(h.src, outPkt{h: ok})
	}
	return nil
}

// copyUnexpected copies the data of an unexpected eager message out of the
// device's per-sender data memory into a private buffer and frees that
// memory at once: otherwise the sender's next eager message would wait for
// a receive that may be posted only after it (two processes sending to
// each other before receiving would wait for each other for ever).
func (r *Rank) copyUnexpected(p *sim.Proc, u *request) error {
	n := u.hdr.n
	var b mem.Region
	for i, f := range r.copyFree {
		if f.Len >= n {
			b = f
			r.copyFree = append(r.copyFree[:i], r.copyFree[i+1:]...)
			break
		}
	}
	if b.Mem == nil {
		var err error
		if b, err = r.w.host.Alloc(r.rank, "mpich unexpected", max(n, r.w.params.ShortBytes)); err != nil {
			return fmt.Errorf("mpich: rank %d: buffer for an unexpected message: %w", r.rank, err)
		}
	}
	data := r.dev.DataAt(u.hdr.addr, n)
	r.dev.GetData(p, b.Slice(0, n), data)
	u.copy = b
	return r.dev.FreeData(p, data)
}

// deliverCopy completes receive q with the unexpected eager message u,
// copied out earlier.
func (r *Rank) deliverCopy(p *sim.Proc, q *request, u *request) {
	h := u.hdr
	st := stacks.Status{Source: h.src, Tag: userTag(h.tag), Len: h.len}
	var trunc error
	n := h.len
	if n > q.buf.Len {
		trunc = fmt.Errorf("mpich: rank %d: message of %d bytes from rank %d (tag %d) truncated to the %d-byte receive buffer", r.rank, h.len, h.src, h.tag, q.buf.Len)
		n = q.buf.Len
	}
	if n > 0 {
		r.w.memcpy(p, r.rank, q.buf.Addr, u.copy.Addr, n)
	}
	r.copyFree = append(r.copyFree, u.copy)
	r.complete(q, st, trunc)
}

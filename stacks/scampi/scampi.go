// Package scampi is ScaMPI, Scali's MPI for PCI-SCI clusters
// (papers/scampi-sci.txt, sections 1.3 and 1.5), as protocol code:
//
//   - Write-only, remote-write-local-read (1.5): a sender writes into the
//     receiver's memory; a receiver only reads its own memory. The only
//     remote writes a receiver makes are its acknowledgements, into the
//     sender's memory.
//   - One channel per (sender, receiver) pair, its memory at the receiver
//     (SCI shared memory is always at the receiver, 1.3): a ring of 64-byte
//     envelopes and a pool of data buffers, each written by one sender
//     only, so no lock is needed (1.3.1). Channels are allocated on first
//     use, or all at start-up (init_all_channels, the monitor's option,
//     1.5.2).
//   - The 64-byte self-synchronizing envelope (1.5.1): sequence number
//     (the ready field), MPI envelope, up to 32 bytes of payload, and a
//     CRC, so that the receiver consumes a small message as soon as it is
//     whole, while the sender still enforces consistency and checkpoints,
//     and tells a torn envelope (packets reordered) from a complete one.
//   - Longer messages by Figure 1.2, buffer by buffer: copy into the remote
//     buffer, MemBarrier, EndCheckPoint, retried until it succeeds; then
//     the envelope (the flag) the same way.
//   - Idempotent structures: an envelope carries its sequence number, so a
//     retried or duplicated write of it is recognised as already consumed;
//     acknowledgements are whole 8-byte counts of consumed envelopes, so a
//     repeated one changes nothing.
//   - Processes of one node talk through the node's shared memory with the
//     same structures, chosen automatically: no adapter, no checkpoint.
//   - The barrier is a fixed fan-in/fan-out tree on SCI shared memory, and
//     MPI_Alltoall switches algorithm at 16 nodes (collective.go).
//
// The protocol runs on the machine's verbs (package machines): remote
// writes (Put from memory the sender built, Quiet as its MemBarrier)
// between nodes, a node's shared segments within one, error checkpoints
// where the machine has them (without them nothing is checkpointed or
// retried), and memory that others write created with machines.MapRemote
// (the SCI driver's segment mapping, paid there). A machine whose processes
// share no memory runs one process per node; one whose processes all share
// a node (the SX-4) runs the shared-memory transport only. Where a cache is
// not coherent with what others write (the T3D's, behind remote puts; the
// SX-4's), the reader drops its cached copies before it reads
// (mem.CPU.InvalidateRange, free on a coherent cache); an envelope read
// that still disagrees with its ready field is reported as a corruption.
//
// Teaching switches remove one safeguard each (mem_barrier, envelope_crc,
// write_index: bytewise, invalidate); the failure shows as a reported
// corruption.
//
// The stack charges CPU time of its own only for its software per message
// (send_cycles, recv_cycles, calibrated to the 4.5 us intra-node latency
// by calibration/sci-scampi.yaml);
// everything else is the machine's: PCI writes, packets, barriers,
// checkpoints, local copies and polls.
//
// Layer: a stack: imports stacks, machines, sim and sim/mem; never a
// concrete machine (it requires verbs), a workload or the registry.
package scampi

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Name is the stack's name in scenarios.
const Name = "scampi"

// user names ScaMPI in missing-verb errors.
const user = "ScaMPI (stack scampi)"

// Needs are the machine verbs ScaMPI uses: Local always, RemoteWrite
// between nodes; SharedSegments and Checkpoints where the machine has them.
func Needs() []machines.Capability {
	return []machines.Capability{
		machines.VerbLocal,
		need(machines.VerbRemoteWrite, "between nodes: envelopes, data and acknowledgements are puts, quiet is MemBarrier"),
		need(machines.VerbShared, "optional: the shared-memory transport between processes of one node; without it every process is its own node"),
		need(machines.VerbCheckpoints, "optional: Figure 1.2's checkpointed, retried transfers; without them nothing is retried"),
	}
}

// need is verb with what ScaMPI uses it for.
func need(verb machines.Capability, what string) machines.Capability {
	verb.What += "; " + what
	return verb
}

// Envelope layout (64 bytes).
const (
	envBytes   = 64
	inlineMax  = 32 // "64 bytes ... including 32 bytes of MPI data payload" (1.5.1)
	offSeq     = 0  // uint64: the ready field, the envelope's sequence number (>= 1)
	offTag     = 8  // int32
	offLen     = 12 // uint32: the message's length
	offKind    = 16 // uint16
	offBuf     = 18 // uint16: data buffer of a chunk
	offChunk   = 20 // uint32: bytes of the chunk
	offOff     = 24 // uint32: offset of the chunk in the message
	offCRC     = 28 // uint32: CRC-32 of every other byte
	offPayload = 32
)

const (
	kindInline = 1
	kindChunk  = 2
)

// Counters are a world's protocol events so far.
type Counters struct {
	Messages      uint64 // messages sent
	Envelopes     uint64 // envelopes consumed
	Retries       uint64 // Figure 1.2 loops repeated after a failed checkpoint
	Torn          uint64 // envelopes seen with a matching ready field and a bad CRC
	Channels      uint64 // channels allocated
	LocalChannels uint64 // of which within a node (shared memory)
	Acks          uint64 // acknowledgements written
}

type world struct {
	m     machines.Local
	rw    machines.RemoteWrite    // nil on a machine without puts (then every process is on one node)
	shm   machines.SharedSegments // nil: every process is its own node
	cp    machines.Checkpoints    // nil: transfers are not checkpointed
	p     Params
	ranks []*Rank
	chans []*channel // [s*n+r]
	// counts are the protocol's events so far.
	counts Counters
}

// World is the scampi world of a stacks.World (for tests and workloads
// that read its counters).
type World interface {
	Counters() Counters
	// Allocated reports whether the channel from s to r exists.
	Allocated(s, r int) bool
}

// Counters are the protocol counts so far.
func (w *world) Counters() Counters { return w.counts }

// Allocated reports whether channel s->r exists.
func (w *world) Allocated(s, r int) bool { return w.chans[s*len(w.ranks)+r] != nil }

// channel is sender s's channel to receiver r.
type channel struct {
	s, r    int
	local   bool         // s and r share a node: its shared memory, no remote write
	slots   mem.Region   // at the receiver
	bufs    []mem.Region // at the receiver, one region each
	index   mem.Region   // the two-byte write index (write_index mode), at the receiver
	ack     mem.Region   // at the sender: envelopes consumed, written by the receiver
	ackBuf  mem.Region   // at the receiver: the value it writes
	idxBuf  mem.Region   // at the sender: the index value it writes
	envBuf  mem.Region   // at the sender: the envelope it builds
	recvEnv mem.Region   // at the receiver: the envelope it reads
	// Sender side.
	seq     uint64   // envelopes sent
	ackSeen uint64   // the acknowledgement as advance last loaded it
	chunks  uint64   // data buffers used
	bufSeq  []uint64 // the envelope that last used each buffer
	sendq   []*request
	listed  bool // in the sender's sending list
	// Receiver side.
	in       int    // the channel's entry in the receiver's in
	expected uint64 // next envelope to consume
	slot     int    // its slot: (expected-1) mod the ring's slots
	acked    uint64 // consumed count last acknowledged
	cur      *request
	curUnexp *unexpected
	avail    int // envelopes the write index announced and not yet consumed
}

// Open returns ScaMPI on m: one rank per process. m must offer Local, and
// RemoteWrite when its processes are on more than one node
// (machines.NodeOf).
func Open(m machines.Machine, params Params) (*stacks.World, error) {
	loc, err := machines.Need[machines.Local](m, user, machines.VerbLocal)
	if err != nil {
		return nil, err
	}
	n := m.Procs()
	w := &world{m: loc, p: params, chans: make([]*channel, n*n)}
	w.rw, _ = m.(machines.RemoteWrite)
	w.shm, _ = m.(machines.SharedSegments)
	w.cp, _ = m.(machines.Checkpoints)
	for i := 1; i < n && w.rw == nil; i++ {
		if machines.NodeOf(m, i) != machines.NodeOf(m, 0) {
			if _, err := machines.Need[machines.RemoteWrite](m, user, machines.VerbRemoteWrite); err != nil {
				return nil, err
			}
		}
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	sw := &stacks.World{Stack: Name, Title: "ScaMPI", Machine: m}
	for i := 0; i < n; i++ {
		x := &Rank{w: w, id: i, node: machines.NodeOf(m, i), cpu: machines.ProcessorOf(loc, i)}
		if x.dir, err = loc.Alloc(i, "scampi.dir", 8); err != nil {
			return nil, err
		}
		w.ranks = append(w.ranks, x)
		sw.Ranks = append(sw.Ranks, x)
	}
	if err := w.allocBarrier(); err != nil {
		return nil, err
	}
	if params.InitAllChannels {
		for s := 0; s < n; s++ {
			for r := 0; r < n; r++ {
				if s != r {
					if _, err := w.ranks[s].channel(nil, r); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return sw, nil
}

// area allocates n bytes of owner's memory that writer writes: memory
// mapped for remote writes when writer is on another node (remote;
// machines.MapRemote, p paying the mapping), else a segment of the node's
// shared memory (or owner's own memory on a machine without shared
// segments, where only owner can be on its node).
func (w *world) area(p *sim.Proc, writer, owner int, remote bool, name string, n int) (mem.Region, error) {
	if remote {
		return machines.MapRemote(w.m, p, writer, owner, name, n)
	}
	if w.shm != nil {
		return w.shm.SharedSegment(w.ranks[owner].node, name, n)
	}
	return w.m.Alloc(owner, name, n)
}

// channel returns the channel from x to r, allocating it on first use:
// its ring and buffers in r's memory (mapped for remote writes when the
// nodes differ, shared within a node), its acknowledgement word in x's.
func (x *Rank) channel(p *sim.Proc, r int) (*channel, error) {
	w := x.w
	n := len(w.ranks)
	if c := w.chans[x.id*n+r]; c != nil {
		return c, nil
	}
	rr := w.ranks[r]
	c := &channel{s: x.id, r: r, local: rr.node == x.node, expected: 1, bufSeq: make([]uint64, w.p.Buffers)}
	name := fmt.Sprintf("scampi.%d->%d", x.id, r)
	if err := x.channelMemory(p, c, name); err != nil {
		return nil, fmt.Errorf("scampi: channel %d->%d: %w", x.id, r, err)
	}
	var err error
	// The acknowledgement word, written by the receiver, mapped with the
	// channel (its mapping is paid once, above).
	if c.ack, err = w.area(nil, r, x.id, !c.local, name+".ack", 64); err != nil {
		return nil, fmt.Errorf("scampi: channel %d->%d: %w", x.id, r, err)
	}
	c.idxBuf = c.ack.Slice(8, 2)
	if c.envBuf, err = w.m.Alloc(x.id, name+".env", envBytes); err != nil {
		return nil, err
	}
	if c.recvEnv, err = w.m.Alloc(r, name+".renv", envBytes+8); err != nil {
		return nil, err
	}
	c.ackBuf = c.recvEnv.Slice(envBytes, 8)
	c.recvEnv.Len = envBytes
	w.chans[x.id*n+r] = c
	w.counts.Channels++
	if c.local {
		w.counts.LocalChannels++
	}
	c.in = len(rr.in)
	rr.in = append(rr.in, c)
	// The driver tells the receiver a channel was created: its directory
	// word, the number of channels into it, changes (and wakes it if it
	// polls). The driver's write, not the program's: it takes no time of
	// the process that caused it (the mapping paid it, above).
	k := uint64(len(rr.in))
	rr.cpu.Update(nil, rr.dir.Addr, 8, 0, func(b []byte) { binary.LittleEndian.PutUint64(b, k) })
	return c, nil
}

// channelMemory allocates channel c's memory at its receiver (mapped for
// remote writes when the nodes differ: one mapping, p pays it): the ring
// of envelopes, the data buffers and the write index, in that order. Each
// part is a segment of its own, so that a buffer that receives a payload
// the memory shares (mem.Memory.WriteShared) shares it rather than holding
// a copy beside the envelopes' bytes.
func (x *Rank) channelMemory(p *sim.Proc, c *channel, name string) error {
	w := x.w
	part := func(i, n int) (mem.Region, error) {
		if i > 0 {
			p = nil // the same mapping
		}
		return w.area(p, c.s, c.r, !c.local, fmt.Sprintf("%s.%d", name, i), n)
	}
	var err error
	if c.slots, err = part(0, w.p.Slots*envBytes); err != nil {
		return err
	}
	c.bufs = make([]mem.Region, w.p.Buffers)
	for b := range c.bufs {
		if c.bufs[b], err = part(1+b, w.p.BufferBytes); err != nil {
			return err
		}
	}
	if c.index, err = part(1+w.p.Buffers, 64); err != nil {
		return err
	}
	c.index.Len = 2
	return nil
}

// Rank is one process's ScaMPI.
type Rank struct {
	w      *world
	id     int
	node   int
	cpu    machines.Processor
	dir    mem.Region // the number of channels into this rank (len(in))
	in     []*channel
	posted []*request
	// sending are the channels from this rank that had a send pending
	// when last looked at, in the order of their receivers (the order in
	// which progress advances them and spin watches their
	// acknowledgements): a rank with 95 channels and one send pending
	// does not look at 95.
	sending []*channel
	unexp   []*unexpected
	spare   []mem.Region // unexpected-message buffers free for reuse
	err     error        // a corruption detected outside any request
	// Acknowledgements posted and not yet secured, and the checkpoint
	// token taken before the first of them.
	acks   []*channel
	ackTok uint64
	bar    barrierArea
	// Scratch of spin, reused.
	watch    []mem.Addr
	ackChans []*channel
	why      spinWhy
	// env is the envelope sendEnvelope builds, before it is stored in
	// the channel's envelope buffer.
	env [envBytes]byte
}

type request struct {
	x       *Rank
	send    bool
	ch      *channel
	buf     mem.Region
	peer    int
	tag     int
	off     int  // bytes sent or received so far
	started bool // a send: its first envelope is out
	done    bool
	st      stacks.Status
	err     error
}

// unexpected is a message that arrived before its receive was posted: its
// data is copied out of the channel's buffers into a buffer of the rank's
// own memory (so the channel can be acknowledged and reused) and from
// there into the receive buffer once the receive is posted, each a real
// memcpy.
type unexpected struct {
	src, tag int
	buf      mem.Region // buf.Len >= n: a reused buffer may be larger
	n        int
	got      int
	done     bool
	waiter   *request // a receive posted while its chunks arrive
}

// Rank is the rank's number.
func (x *Rank) Rank() int { return x.id }

// Size is the number of ranks.
func (x *Rank) Size() int { return len(x.w.ranks) }

// CPU is the rank's processor.
func (x *Rank) CPU() *mem.CPU { return x.w.m.CPU(x.id) }

// Buffer allocates n bytes of the rank's memory for user data.
func (x *Rank) Buffer(n int) (mem.Region, error) { return x.w.m.Alloc(x.id, "user", n) }

// Isend starts sending buf to dest with tag: it goes as far as the
// channel's free envelopes and buffers allow; Wait (or any later call)
// finishes it.
func (x *Rank) Isend(p *sim.Proc, buf mem.Region, dest, tag int) (stacks.Request, error) {
	if dest < 0 || dest >= len(x.w.ranks) || dest == x.id {
		return nil, fmt.Errorf("scampi: rank %d: send to rank %d of %d", x.id, dest, len(x.w.ranks))
	}
	ch, err := x.channel(p, dest)
	if err != nil {
		return nil, err
	}
	x.cpu.Compute(p, x.w.p.SendCycles)
	q := &request{x: x, send: true, ch: ch, buf: buf, peer: dest, tag: tag}
	x.w.counts.Messages++
	ch.sendq = append(ch.sendq, q)
	if !ch.listed {
		x.list(ch)
	}
	if len(ch.sendq) == 1 {
		x.advance(p, ch)
	}
	return q, nil
}

// Send is Isend and Wait.
func (x *Rank) Send(p *sim.Proc, buf mem.Region, dest, tag int) error {
	q, err := x.Isend(p, buf, dest, tag)
	if err != nil {
		return err
	}
	_, err = q.Wait(p)
	return err
}

// Irecv posts a receive into buf from src (or AnySource) with tag (or
// AnyTag); a message already arrived unexpected is taken at once.
func (x *Rank) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	q := &request{x: x, buf: buf, peer: src, tag: tag}
	for i, u := range x.unexp {
		if match(q, u.src, u.tag) {
			x.unexp = append(x.unexp[:i], x.unexp[i+1:]...)
			if !u.done {
				u.waiter = q // its chunks are still arriving
				return q, nil
			}
			x.finishUnexpected(p, q, u)
			return q, nil
		}
	}
	x.posted = append(x.posted, q)
	return q, nil
}

// Recv is Irecv and Wait.
func (x *Rank) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	q, err := x.Irecv(p, buf, src, tag)
	if err != nil {
		return stacks.Status{}, err
	}
	return q.Wait(p)
}

func match(q *request, src, tag int) bool {
	return (q.peer == stacks.AnySource || q.peer == src) && (q.tag == stacks.AnyTag || q.tag == tag)
}

// finishUnexpected copies an unexpected message into q's buffer.
func (x *Rank) finishUnexpected(p *sim.Proc, q *request, u *unexpected) {
	x.cpu.Compute(p, x.w.p.RecvCycles)
	if u.n > q.buf.Len {
		q.err = fmt.Errorf("scampi: rank %d: message of %d bytes from rank %d (tag %d) truncated to %d", x.id, u.n, u.src, u.tag, q.buf.Len)
	} else if u.n > 0 {
		x.memcpy(p, q.buf.Addr, u.buf.Addr, u.n)
	}
	x.spare = append(x.spare, u.buf)
	q.done = true
	q.st = stacks.Status{Source: u.src, Tag: u.tag, Len: u.n}
}

// Wait blocks until the request completes, progressing every channel of
// its rank meanwhile.
func (q *request) Wait(p *sim.Proc) (stacks.Status, error) {
	x := q.x
	for !q.done && q.err == nil {
		if x.err != nil {
			return q.st, x.err
		}
		if x.progress(p) {
			continue
		}
		if q.done || q.err != nil || x.err != nil {
			continue
		}
		if len(x.acks) > 0 {
			x.secureAcks(p)
			continue
		}
		x.spin(p, q)
	}
	return q.st, q.err
}

// Test progresses the rank once and reports whether q is complete.
func (q *request) Test(p *sim.Proc) (bool, stacks.Status, error) {
	if !q.done && q.err == nil {
		q.x.progress(p)
	}
	return q.done, q.st, q.err
}

// progress consumes every whole envelope of every channel into x and
// advances every pending send; it reports whether anything moved.
func (x *Rank) progress(p *sim.Proc) bool {
	moved := false
	// Channel by channel, each as long as it has a whole envelope: with
	// a write index, each channel's index is loaded in turn; without,
	// the polls of the channels with nothing are one poll (scanReady).
	wi := x.w.p.WriteIndex != ""
	for i := 0; wi && i < len(x.in); i++ {
		for x.consume(p, x.in[i]) {
			moved = true
		}
	}
	for i := 0; !wi && i < len(x.in); {
		hi := len(x.in)
		j := x.scanReady(p, i, hi)
		if j < 0 {
			i = hi // channels created meanwhile are polled next
			continue
		}
		if x.take(p, x.in[j]) {
			moved = true
			i = j
		} else {
			i = j + 1
		}
	}
	for _, c := range x.sending {
		if len(c.sendq) > 0 && x.advance(p, c) {
			moved = true
		}
	}
	x.unlistIdle()
	return moved
}

// list adds c to the rank's sending list, in the order of receivers.
func (x *Rank) list(c *channel) {
	i := len(x.sending)
	for i > 0 && x.sending[i-1].r > c.r {
		i--
	}
	x.sending = slices.Insert(x.sending, i, c)
	c.listed = true
}

// unlistIdle drops the channels with no send pending from the sending
// list.
func (x *Rank) unlistIdle() {
	keep := x.sending[:0]
	for _, c := range x.sending {
		if len(c.sendq) > 0 {
			keep = append(keep, c)
		} else {
			c.listed = false
		}
	}
	clear(x.sending[len(keep):])
	x.sending = keep
}

// spin polls until something q's rank waits for may have changed: the
// ready field (or write index) of the next envelope of a channel into it,
// the acknowledgement of a channel with a pending send (from what advance
// last loaded), or the directory (from the channels the rank knows).
func (x *Rank) spin(p *sim.Proc, q *request) {
	watch := append(x.watch[:0], x.dir.Addr)
	dir := uint64(len(x.in)) // what the directory word holds
	for _, c := range x.in {
		watch = append(watch, x.readyAddr(c))
	}
	acks := x.ackChans[:0]
	for _, c := range x.sending {
		if len(c.sendq) > 0 {
			acks = append(acks, c)
			watch = append(watch, c.ack.Addr)
		}
	}
	x.watch, x.ackChans = watch, acks
	x.why = spinWhy{x, q}
	x.cpu.SpinUntil(p, &x.why, func() bool {
		if x.loadFresh(p, x.dir.Addr, 8) != dir {
			return true
		}
		if x.scanReady(p, 0, len(x.in)) >= 0 {
			return true
		}
		for _, c := range acks {
			if x.loadFresh(p, c.ack.Addr, 8) != c.ackSeen {
				return true
			}
		}
		return false
	}, watch...)
}

// spinWhy is why a rank spins, formatted only when a report needs it.
type spinWhy struct {
	x *Rank
	q *request
}

func (s *spinWhy) String() string {
	x, q := s.x, s.q
	if q.send {
		return fmt.Sprintf("scampi rank %d: send to rank %d waiting for free envelopes or buffers (%d channels in)", x.id, q.peer, len(x.in))
	}
	return fmt.Sprintf("scampi rank %d: receive from %d tag %d (%d channels in)", x.id, q.peer, q.tag, len(x.in))
}

// readyAddr is the word whose change announces c's next envelope.
func (x *Rank) readyAddr(c *channel) mem.Addr {
	if x.w.p.WriteIndex != "" {
		return c.index.Addr &^ 7
	}
	return c.slots.Addr + mem.Addr(envBytes*c.slot)
}

// scanReady polls channels x.in[from:hi] in order, one load each, until
// one's next envelope looks ready (ready), and returns it, or -1. Without
// a write index the loads are uncached loads only, one poll of the CPU
// (Processor.Poll), which the machine may run as one operation.
func (x *Rank) scanReady(p *sim.Proc, from, hi int) int {
	if x.w.p.WriteIndex != "" {
		for j := from; j < hi; j++ {
			if x.ready(p, x.in[j]) {
				return j
			}
		}
		return -1
	}
	j := -1
	x.cpu.Poll(p, func() bool {
		j = -1
		for k := from; k < hi; k++ {
			if x.ready(p, x.in[k]) {
				j = k
				return true
			}
		}
		return false
	})
	return j
}

// ready polls whether c's next envelope looks ready (a load).
func (x *Rank) ready(p *sim.Proc, c *channel) bool {
	if x.w.p.WriteIndex != "" {
		if c.avail > 0 {
			return true
		}
		idx := x.loadFresh(p, c.index.Addr, 2)
		return uint16(idx) != uint16(c.expected-1)
	}
	// Written by the adapter's DMA or the other CPU: the write
	// invalidated the poller's cached copy (LoadUncached).
	return x.cpu.LoadUncached(p, x.readyAddr(c), 8) == c.expected
}

// consume takes c's next envelope if it is whole (or, with a write index,
// announced) and delivers its data; it reports whether it took one.
func (x *Rank) consume(p *sim.Proc, c *channel) bool {
	if x.w.p.WriteIndex != "" {
		if c.avail == 0 {
			idx := x.loadFresh(p, c.index.Addr, 2)
			c.avail = int(uint16(idx) - uint16(c.expected-1))
			if c.avail == 0 {
				return false
			}
		}
	} else if !x.ready(p, c) {
		return false
	}
	return x.take(p, c)
}

// take takes c's next envelope, which its ready field (or, with a write
// index, the index) announced, if it is whole, and delivers its data; it
// reports whether it took one.
func (x *Rank) take(p *sim.Proc, c *channel) bool {
	w := x.w
	slot := c.slots.Addr + mem.Addr(envBytes*c.slot)
	// Read the envelope out of the slot (a local copy).
	x.freshChannel(p, slot, envBytes)
	x.cpu.Memcpy(p, c.recvEnv.Addr, slot, envBytes)
	var env [envBytes]byte
	x.cpu.Update(p, c.recvEnv.Addr, envBytes, 0, func(b []byte) { copy(env[:], b) })
	if w.p.WriteIndex == "" {
		if seq := binary.LittleEndian.Uint64(env[offSeq:]); seq != c.expected {
			// The ready field said the envelope is there; the copy read
			// another: a stale cached copy of the slot.
			return x.corrupt(p, c, fmt.Sprintf("envelope read with sequence number %d where its ready field holds %d (a stale copy of the slot)", seq, c.expected))
		}
	}
	if w.p.WriteIndex == "" && w.p.EnvelopeCRC && binary.LittleEndian.Uint32(env[offCRC:]) != envCRC(env[:]) {
		// Torn: some of its packets have not landed yet.
		w.counts.Torn++
		return false
	}
	if c.avail > 0 {
		c.avail--
	}
	c.expected++
	if c.slot++; c.slot == w.p.Slots {
		c.slot = 0
	}
	w.counts.Envelopes++
	tag := int(int32(binary.LittleEndian.Uint32(env[offTag:])))
	n := int(binary.LittleEndian.Uint32(env[offLen:]))
	kind := binary.LittleEndian.Uint16(env[offKind:])
	off := int(binary.LittleEndian.Uint32(env[offOff:]))
	chunk := int(binary.LittleEndian.Uint32(env[offChunk:]))
	b := int(binary.LittleEndian.Uint16(env[offBuf:]))
	var src mem.Addr
	switch kind {
	case kindInline:
		chunk, off = min(n, inlineMax), 0
		src = slot + offPayload
	case kindChunk:
		if b >= w.p.Buffers || chunk > w.p.BufferBytes || off+chunk > n {
			return x.corrupt(p, c, fmt.Sprintf("envelope with buffer %d, chunk %d at %d of %d bytes", b, chunk, off, n))
		}
		src = c.bufs[b].Addr
		if !machines.CopyBypassesCache(w.m) { // the copy out reads memory itself
			x.freshChannel(p, src, chunk)
		}
	default:
		return x.corrupt(p, c, fmt.Sprintf("envelope of kind %d", kind))
	}
	// The first envelope of a message is matched.
	if c.cur == nil && c.curUnexp == nil {
		if off != 0 {
			return x.corrupt(p, c, fmt.Sprintf("message starts at offset %d", off))
		}
		if !x.matchFirst(p, c, tag, n) {
			return false
		}
	}
	if !x.deliver(p, c, src, tag, n, off, chunk) {
		return false
	}
	// Acknowledge: after a data buffer (it is free again), and every half
	// ring of envelopes.
	consumed := c.expected - 1
	if kind == kindChunk || consumed-c.acked >= uint64(w.p.Slots/2) {
		x.acknowledge(p, c, consumed)
	}
	return true
}

// matchFirst matches the first envelope of a message (tag, n bytes) on c
// to a posted receive, else to a new unexpected message; it reports false
// when no memory holds the unexpected message (the rank's error).
func (x *Rank) matchFirst(p *sim.Proc, c *channel, tag, n int) bool {
	x.cpu.Compute(p, x.w.p.RecvCycles)
	for i, q := range x.posted {
		if match(q, c.s, tag) {
			x.posted = append(x.posted[:i], x.posted[i+1:]...)
			c.cur = q
			q.st = stacks.Status{Source: c.s, Tag: tag, Len: n}
			if n > q.buf.Len {
				q.err = fmt.Errorf("scampi: rank %d: message of %d bytes from rank %d (tag %d) truncated to %d", x.id, n, c.s, tag, q.buf.Len)
			}
			break
		}
	}
	if c.cur == nil {
		buf, err := x.unexpectedBuffer(n)
		if err != nil {
			if x.err == nil {
				x.err = fmt.Errorf("scampi: rank %d: no memory for an unexpected %d-byte message from rank %d: %w", x.id, n, c.s, err)
			}
			return false
		}
		c.curUnexp = &unexpected{src: c.s, tag: tag, buf: buf, n: n}
		x.unexp = append(x.unexp, c.curUnexp)
	}
	return true
}

// deliver copies a chunk (chunk bytes at off of an n-byte message with
// tag, from src) into the receive or the unexpected message it continues;
// it reports false on a chunk that does not continue it (a corruption).
func (x *Rank) deliver(p *sim.Proc, c *channel, src mem.Addr, tag, n, off, chunk int) bool {
	p.Engine().Progress() // a chunk arrived: the engine's livelock detector
	if q := c.cur; q != nil {
		if q.st.Tag != tag || q.st.Len != n || off != q.off {
			return x.corrupt(p, c, fmt.Sprintf("chunk (tag %d, %d bytes, offset %d) of a message (tag %d, %d bytes) at offset %d", tag, n, off, q.st.Tag, q.st.Len, q.off))
		}
		if q.err == nil {
			x.memcpy(p, q.buf.Addr+mem.Addr(off), src, chunk)
		}
		q.off += chunk
		if q.off >= n {
			q.done = true
			c.cur = nil
		}
	} else {
		u := c.curUnexp
		if off != u.got || n != u.n {
			return x.corrupt(p, c, fmt.Sprintf("chunk at offset %d of a %d-byte unexpected message at %d of %d", off, n, u.got, u.n))
		}
		if chunk > 0 {
			x.memcpy(p, u.buf.Addr+mem.Addr(off), src, chunk)
		}
		u.got += chunk
		if u.got >= n {
			u.done = true
			c.curUnexp = nil
			if u.waiter != nil {
				x.finishUnexpected(p, u.waiter, u)
			}
		}
	}
	return true
}

// unexpectedBuffer returns a buffer of at least n bytes of the rank's
// memory for an unexpected message: the smallest spare one that fits, or a
// new one (spares are reused, so memory grows with the most unexpected
// data held at once, not with the number of messages).
func (x *Rank) unexpectedBuffer(n int) (mem.Region, error) {
	best := -1
	for i, r := range x.spare {
		if r.Len >= n && (best < 0 || r.Len < x.spare[best].Len) {
			best = i
		}
	}
	if best >= 0 {
		r := x.spare[best]
		x.spare = append(x.spare[:best], x.spare[best+1:]...)
		return r, nil
	}
	return x.w.m.Alloc(x.id, "scampi.unexpected", max(n, 1))
}

// corrupt stops the channel's receiver with a detected corruption.
func (x *Rank) corrupt(p *sim.Proc, c *channel, what string) bool {
	err := &CorruptionError{Rank: x.id, From: c.s, To: c.r, At: p.Now(), What: what}
	if c.cur != nil {
		c.cur.err = err
		c.cur = nil
	} else if x.err == nil {
		x.err = err
	}
	return false
}

// CorruptionError is a corruption the receiver detected in the protocol's
// own structures.
type CorruptionError struct {
	Rank     int // the rank that detected it
	From, To int // the channel
	At       sim.Time
	What     string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("scampi: rank %d at %v: channel %d->%d: corrupted %s", e.Rank, e.At, e.From, e.To, e.What)
}

// Corruption marks the error as a detected corruption.
func (e *CorruptionError) Corruption() bool { return true }

// acknowledge writes the consumed count into the sender's memory (a whole
// 8-byte value: repeating it is harmless). The write is posted; it is
// secured by Figure 1.2's loop (secureAcks) before the rank next waits,
// off the path of the message just received.
func (x *Rank) acknowledge(p *sim.Proc, c *channel, consumed uint64) {
	c.acked = consumed
	x.w.counts.Acks++
	if c.local {
		x.cpu.Store(p, c.ack.Addr, 8, consumed)
		return
	}
	if len(x.acks) == 0 && x.w.cp != nil {
		x.ackTok = x.w.cp.StartCheckPoint(p, x.id)
	}
	x.postAck(p, c)
	for _, a := range x.acks {
		if a == c {
			return
		}
	}
	x.acks = append(x.acks, c)
}

// postAck stores c's consumed count in the receiver's buffer and puts it
// into the sender's acknowledgement word.
func (x *Rank) postAck(p *sim.Proc, c *channel) {
	v := c.acked
	x.cpu.Update(p, c.ackBuf.Addr, 8, 0, func(b []byte) { binary.LittleEndian.PutUint64(b, v) })
	x.w.rw.Put(p, x.id, c.s, c.ack.Addr, c.ackBuf.Addr, 8)
}

// secureAcks finishes Figure 1.2's loop for the posted acknowledgements:
// MemBarrier, EndCheckPoint, and the latest values written again until it
// succeeds (MemBarrier alone without checkpoints).
func (x *Rank) secureAcks(p *sim.Proc) {
	w := x.w
	for {
		if w.p.MemBarrier {
			w.rw.Quiet(p, x.id)
		}
		if w.cp == nil || w.cp.EndCheckPoint(p, x.id, x.ackTok) {
			x.acks = x.acks[:0]
			p.Engine().Progress()
			return
		}
		w.counts.Retries++
		p.Engine().Retry(p, "its acknowledgements (checkpointed, Figure 1.2's loop)")
		x.ackTok = w.cp.StartCheckPoint(p, x.id)
		for _, c := range x.acks {
			x.postAck(p, c)
		}
	}
}

// secure is Figure 1.2's loop around one remote write: StartCheckPoint; do
// { write; MemBarrier } while EndCheckPoint fails. Without checkpoints it
// is the write and MemBarrier, once.
func (x *Rank) secure(p *sim.Proc, what string, to int, write func()) {
	w := x.w
	if w.cp == nil {
		write()
		if w.p.MemBarrier {
			w.rw.Quiet(p, x.id)
		}
		return
	}
	tok := w.cp.StartCheckPoint(p, x.id)
	for {
		write()
		if w.p.MemBarrier {
			w.rw.Quiet(p, x.id)
		}
		if w.cp.EndCheckPoint(p, x.id, tok) {
			p.Engine().Progress()
			return
		}
		w.counts.Retries++
		p.Engine().Retry(p, fmt.Sprintf("its write of %s to rank %d (checkpointed, Figure 1.2's loop)", what, to))
		tok = w.cp.StartCheckPoint(p, x.id)
	}
}

// advance sends as much of c's pending sends as its free envelopes and
// buffers allow; it reports whether anything was sent.
func (x *Rank) advance(p *sim.Proc, c *channel) bool {
	w := x.w
	moved := false
	for len(c.sendq) > 0 {
		q := c.sendq[0]
		n := q.buf.Len
		ack := x.loadFresh(p, c.ack.Addr, 8)
		c.ackSeen = ack
		if ack > c.seq {
			// The receiver consumed envelopes that were never sent:
			// stale ones, taken as new (duplicated messages).
			q.err = &CorruptionError{Rank: x.id, From: c.s, To: c.r, At: p.Now(), What: fmt.Sprintf(
				"acknowledgement: %d envelopes consumed, %d sent (stale envelopes consumed as new ones)", ack, c.seq)}
			c.sendq = c.sendq[1:]
			return true
		}
		if c.seq-ack >= uint64(w.p.Slots) {
			return moved // no free envelope
		}
		if n <= inlineMax {
			x.sendEnvelope(p, c, q, kindInline, 0, 0, n)
			q.off = n
		} else {
			b := int(c.chunks % uint64(w.p.Buffers))
			if c.bufSeq[b] > ack {
				return moved // the buffer's last message is not consumed yet
			}
			k := min(w.p.BufferBytes, n-q.off)
			x.copyOut(p, c, c.bufs[b].Addr, q.buf.Addr+mem.Addr(q.off), k)
			c.chunks++
			x.sendEnvelope(p, c, q, kindChunk, b, q.off, k)
			c.bufSeq[b] = c.seq
			q.off += k
		}
		moved = true
		if q.off >= n {
			q.done = true
			q.st = stacks.Status{Source: x.id, Tag: q.tag, Len: n}
			c.sendq = c.sendq[1:]
		}
	}
	return moved
}

// copyOut copies k bytes of the sender's memory to the receiver's buffer:
// Figure 1.2's first loop (a put), or a local copy within a node.
func (x *Rank) copyOut(p *sim.Proc, c *channel, dst, src mem.Addr, k int) {
	if c.local {
		x.memcpy(p, dst, src, k)
		return
	}
	x.secure(p, "a data chunk", c.r, func() { x.w.rw.Put(p, x.id, c.r, dst, src, k) })
}

// sendEnvelope builds the next envelope of c in the sender's envelope
// buffer and writes it into its slot (the flag), and with a write index,
// the index after it.
func (x *Rank) sendEnvelope(p *sim.Proc, c *channel, q *request, kind uint16, b, off, chunk int) {
	w := x.w
	c.seq++
	env := &x.env
	*env = [envBytes]byte{}
	binary.LittleEndian.PutUint64(env[offSeq:], c.seq)
	binary.LittleEndian.PutUint32(env[offTag:], uint32(int32(q.tag)))
	binary.LittleEndian.PutUint32(env[offLen:], uint32(q.buf.Len))
	binary.LittleEndian.PutUint16(env[offKind:], kind)
	binary.LittleEndian.PutUint16(env[offBuf:], uint16(b))
	binary.LittleEndian.PutUint32(env[offChunk:], uint32(chunk))
	binary.LittleEndian.PutUint32(env[offOff:], uint32(off))
	if kind == kindInline {
		// The payload, read out of the user's buffer as the program
		// sees it.
		x.cpu.Update(p, q.buf.Addr, q.buf.Len, 0, func(b []byte) { copy(env[offPayload:], b) })
	}
	binary.LittleEndian.PutUint32(env[offCRC:], envCRC(env[:]))
	x.cpu.Update(p, c.envBuf.Addr, envBytes, 0, func(b []byte) { copy(b, env[:]) })
	slot := c.slots.Addr + mem.Addr(envBytes*int((c.seq-1)%uint64(w.p.Slots)))
	if c.local {
		x.memcpy(p, slot, c.envBuf.Addr, envBytes)
	} else {
		x.secure(p, "an envelope", c.r, func() { w.rw.Put(p, x.id, c.r, slot, c.envBuf.Addr, envBytes) })
	}
	if w.p.WriteIndex != "" {
		x.writeIndex(p, c, uint16(c.seq))
	}
}

// writeIndex publishes the two-byte write index v: whole, or one byte at a
// time (low byte first) with write_index: bytewise.
func (x *Rank) writeIndex(p *sim.Proc, c *channel, v uint16) {
	x.cpu.Update(p, c.idxBuf.Addr, 2, 0, func(b []byte) { binary.LittleEndian.PutUint16(b, v) })
	if c.local {
		x.cpu.Store(p, c.index.Addr, 2, uint64(v))
		return
	}
	rw := x.w.rw
	if x.w.p.WriteIndex == "bytewise" {
		for i := 0; i < 2; i++ {
			x.secure(p, "the write index", c.r, func() { rw.Put(p, x.id, c.r, c.index.Addr+mem.Addr(i), c.idxBuf.Addr+mem.Addr(i), 1) })
		}
		return
	}
	x.secure(p, "the write index", c.r, func() { rw.Put(p, x.id, c.r, c.index.Addr, c.idxBuf.Addr, 2) })
}

// memcpy is the library memcpy (machines.Memcpy) of the rank's process.
func (x *Rank) memcpy(p *sim.Proc, dst, src mem.Addr, n int) {
	machines.Memcpy(x.w.m, p, x.id, dst, src, n)
}

// fresh drops the rank's cached copies of [a, a+n), which another process
// wrote (a put, or a store of another processor of the node), before the
// rank reads them through its cache: a cache not coherent with those
// writes would return what it held before. It costs nothing on a
// coherent cache (mem.CPU.InvalidateRange).
func (x *Rank) fresh(p *sim.Proc, a mem.Addr, n int) {
	x.cpu.InvalidateRange(p, a, n)
}

// freshChannel is fresh for a channel's envelopes and data buffers, unless
// the invalidate switch is off.
func (x *Rank) freshChannel(p *sim.Proc, a mem.Addr, n int) {
	if x.w.p.Invalidate {
		x.fresh(p, a, n)
	}
}

// loadFresh loads the size-byte word at a, which another process writes
// (an acknowledgement, the write index, the channel directory), after
// dropping a cached copy of it (fresh).
func (x *Rank) loadFresh(p *sim.Proc, a mem.Addr, size int) uint64 {
	x.fresh(p, a, size)
	return x.cpu.Load(p, a, size)
}

// envCRC is the CRC-32 of an envelope's bytes other than its CRC field.
func envCRC(env []byte) uint32 {
	return crc32.Update(crc32.ChecksumIEEE(env[:offCRC]), crc32.IEEETable, env[offCRC+4:])
}

// FootprintBytes is what ScaMPI holds in the rank's node memory
// (stacks.Footprint) once every channel is allocated (at start-up with
// init_all_channels; on first use otherwise, so this bounds a run that
// talks to every peer): for each of the other ranks, the channel from it
// into this rank (the ring of envelopes, the buffer pool, the write index)
// with the copy of the envelope being read, and the channel from this rank
// its acknowledgement word and the envelope being built; the channel
// directory and the barrier's words, each rounded to 64 bytes (a machine
// that aligns shared segments more coarsely holds more). Blocking or not
// makes no difference.
func (x *Rank) FootprintBytes(bool) int {
	p := x.w.p
	line := func(b int) int { return (b + 63) &^ 63 }
	peers := len(x.w.ranks) - 1
	in := line(p.Slots*envBytes+p.Buffers*p.BufferBytes+64) + line(envBytes+8)
	out := line(64) + line(envBytes)
	return peers*(in+out) + line(8) + line(8*p.BarrierFanIn+16)
}

// Counters are the world's protocol counts by name (for workloads' rows).
func (x *Rank) Counters() ([]string, []uint64) {
	c := x.w.counts
	return []string{"scampi_retries", "torn_envelopes_seen", "channels_allocated", "acknowledgements"},
		[]uint64{c.Retries, c.Torn, c.Channels, c.Acks}
}

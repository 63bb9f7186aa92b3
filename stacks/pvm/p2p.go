package pvm

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// A message slot: a 32-byte header followed by DataMaxBytes of data.
//
//	[0,4)   message tag
//	[4,8)   length of this part
//	[8,16)  total length of the message
//	[16,24) offset of this part in the message
//	[24,32) flag: flagEmpty, or flagDone once the part is in the slot
//
// Ring s of task r holds the parts task s sends to r, in the order sent: a
// sender's parts of one message are consecutive in it (a psend returns only
// once all its parts are put), so a part that is not a message's first
// belongs to the message whose first part came before it in the same ring.
const (
	hdrBytes = 32
	flagOff  = 24

	flagEmpty = 0
	flagDone  = 1
)

// Tags the group library uses for its own messages, above every user tag
// (a user's AnyTag receive never matches them).
const (
	sysTag     = 1 << 30
	tagBcast   = sysTag + 1
	tagReduce  = sysTag + 2
	tagBarrier = sysTag + 3
	tagRelease = sysTag + 4
)

// slot is the address, in task r's memory, of slot k of the ring task s
// writes.
func (l *Lib) slot(r, s, k int) mem.Addr {
	return l.tasks[r].rings + mem.Addr((s*l.params.Slots+k)*l.stride())
}

// head is the address of the flag of the next slot x takes from ring s.
func (x *Task) head(s int) mem.Addr {
	return x.lib.slot(x.rank, s, x.next[s]%x.lib.params.Slots) + flagOff
}

// message is a message whose first part has been taken from its ring:
// either claimed by a receive (req) or held in the receive queue (data, a
// buffer of the task's memory that holds its first part).
type message struct {
	src, tag, total int
	got             int // bytes taken so far
	req             *recvReq
	data            mem.Region
}

func (m *message) complete() bool { return m.got >= m.total }

// recvReq is a receive: posted (waiting for a message) or matched.
type recvReq struct {
	x        *Task
	buf      mem.Region
	src, tag int
	msg      *message // the message it receives, once matched
	done     bool
	err      error
}

func (r *recvReq) matches(src, tag int) bool {
	if r.src != stacks.AnySource && r.src != src {
		return false
	}
	if r.tag == stacks.AnyTag {
		return tag < sysTag
	}
	return r.tag == tag
}

// psend is pvm_psend: buf to task dst with tag, in parts of at most
// DataMaxBytes, each put straight from buf into a slot of dst's ring for
// this task. It returns once every part is in dst's memory: it waits for a
// receive only while that ring is full.
func (x *Task) psend(p *sim.Proc, buf mem.Region, dst, tag int) error {
	if err := x.checkPeer("psend", dst); err != nil {
		return err
	}
	max := x.lib.params.DataMaxBytes
	off := 0
	for {
		n := min(max, buf.Len-off)
		if err := x.sendPart(p, dst, tag, buf.Len, off, buf.Slice(off, n)); err != nil {
			return err
		}
		off += n
		if off >= buf.Len {
			return nil
		}
	}
}

// sendPart sends one part: the library's software for a message, a free
// slot in dst's ring (waiting for dst to free one if the ring is full), the
// data put, then the header with its DONE flag. On a machine whose writes
// land in issue order (the T3D's torus) the header follows the data in one
// put; elsewhere the data and the header's fields are waited for (quiet)
// before the flag is put, so that a receiver that sees DONE sees them.
func (x *Task) sendPart(p *sim.Proc, dst, tag, total, off int, data mem.Region) error {
	l := x.lib
	x.cpu.Compute(p, l.params.PartCycles)
	if err := x.awaitSlot(p, dst); err != nil {
		return err
	}
	slot := l.slot(dst, x.rank, x.sent[dst]%l.params.Slots)
	if data.Len > 0 {
		l.m.Put(p, x.rank, dst, slot+hdrBytes, data.Addr, data.Len)
	}
	x.stageHeader(p, uint64(uint32(tag))|uint64(uint32(data.Len))<<32, uint64(total), uint64(off), flagDone)
	x.cpu.Fence(p)
	if l.ordered {
		l.m.Put(p, x.rank, dst, slot, x.stage, hdrBytes)
	} else {
		l.m.Put(p, x.rank, dst, slot, x.stage, flagOff)
		l.m.Quiet(p, x.rank)
		l.m.PutWord(p, x.rank, dst, slot+flagOff, flagDone)
	}
	x.sent[dst]++
	x.stats.Parts++
	return nil
}

// awaitSlot waits until dst's ring for this task has a free slot: dst
// writes how many of this task's parts it has freed into this task's
// memory. While it waits the task pulls its own arrivals into its queue
// (a task blocked in any call keeps receiving), so that two tasks sending
// to each other never wait on each other's rings.
func (x *Task) awaitSlot(p *sim.Proc, dst int) error {
	slots := x.lib.params.Slots
	word := x.freed + mem.Addr(dst*8)
	free := func() bool {
		v := x.cpu.LoadUncached(p, word, 8)
		x.sawFreed(dst, v)
		return x.sent[dst]-int(v) < slots
	}
	if free() {
		return nil
	}
	x.stats.FullWaits++
	for {
		took, err := x.sweep(p)
		if err != nil {
			return err
		}
		if free() {
			return nil
		}
		if !took {
			x.awaitWords(p, true)
		}
	}
}

// stageHeader writes a part's header (tag and length, total, offset,
// flag) into the task's staging words, one timed store a word, before it
// is put to the receiver's slot.
func (x *Task) stageHeader(p *sim.Proc, words ...uint64) {
	for i, w := range words {
		x.cpu.Store(p, x.stage+mem.Addr(8*i), 8, w)
	}
}

// sawFreed records task d's freed count as last loaded: a wait for a free
// slot ends when it moves.
func (x *Task) sawFreed(d int, v uint64) { x.seenFreed[d] = v }

// awaitWords waits until a part is in the head slot of a ring that is not
// held, or (slots) a freed count has moved since last loaded: a spin whose
// polls read the watched words without time (the sweep that follows pays
// the loads), so it ends at the instant a write makes one of them what it
// waits for. Freed counts that moved while the task was not waiting for a
// slot are taken as seen: the first one found ends the wait at once.
func (x *Task) awaitWords(p *sim.Proc, slots bool) {
	n := x.size
	watch := x.watch[:n]
	if slots {
		watch = x.watch[:2*n]
	}
	first, moved, movedTo := true, -1, uint64(0)
	x.cpu.SpinUntil(p, waitReason{x.rank, slots}, func() bool {
		if slots {
			for d := 0; d < n; d++ {
				if v := x.cpu.PeekUncached(x.watch[n+d], 8); v != x.seenFreed[d] {
					if first {
						moved, movedTo = d, v
					}
					return true
				}
			}
		}
		first = false
		for s := 0; s < n; s++ {
			if !x.held(s) && x.cpu.PeekUncached(x.watch[s], 8) == flagDone {
				return true
			}
		}
		return false
	}, watch...)
	if moved >= 0 {
		x.sawFreed(moved, movedTo)
	}
}

// waitReason names a task's wait in deadlock and livelock reports.
type waitReason struct {
	rank  int
	slots bool
}

func (w waitReason) String() string {
	if w.slots {
		return fmt.Sprintf("pvm task %d: psend waits for a free slot in a receiver's ring (or a message)", w.rank)
	}
	return fmt.Sprintf("pvm task %d: precv waits for a message", w.rank)
}

// sweep pulls every part that has arrived into the library: the receive
// loop of the PVM library, which polls each sender's ring in turn
// (starting after the one it started from last time) with uncached loads
// of the head slots' flags and takes every part it finds, until a round
// finds none. It reports whether it took any.
func (x *Task) sweep(p *sim.Proc) (bool, error) {
	took := false
	n := x.size
	from := x.scanFrom
	x.scanFrom = (x.scanFrom + 1) % n
	r := &x.round
	if r.fn == nil {
		r.x, r.fn = x, r.run
	}
	for {
		r.p, r.from = p, from
		ok := x.cpu.Poll(p, r.fn)
		if !ok {
			return took, nil
		}
		if err := x.takePart(p, r.s); err != nil {
			return took, err
		}
		took = true
		from = r.s
	}
}

// sweepRound is one round of the sweep, a poll: the head flag of every
// ring in cyclic order from from, until one holds a part (a held ring's
// flag is loaded too, and passed over), then the loop's overhead for the
// rings it looked at; s is that ring (-1: none) and loads the flags
// loaded. A task keeps one, its poll bound once.
type sweepRound struct {
	x        *Task
	p        *sim.Proc
	from     int
	s, loads int
	fn       func() bool // run
}

func (r *sweepRound) run() bool {
	x, n := r.x, r.x.size
	r.s, r.loads = -1, 0
	for k := 0; k < n; k++ {
		i := r.from + k
		if i >= n {
			i -= n
		}
		r.loads++
		if x.cpu.LoadUncached(r.p, x.watch[i], 8) == flagDone && !x.held(i) {
			r.s = i
			break
		}
	}
	x.cpu.Compute(r.p, x.lib.params.ScanCycles*float64(r.loads))
	return r.s >= 0
}

// held reports whether ring s is held: its next part belongs to a message
// whose first part is in the receive queue, unclaimed. Only a message's
// first part (at most DataMaxBytes) is queued before its receive: the
// later parts stay in the sender's ring, and the sender waits for free
// slots, until a receive claims the message ("data larger than it is
// divided into parts sent as separate messages until all is delivered",
// hardware.yaml t3d_pvm.data_max_bytes). The queue's memory is bounded by
// one part per pending message.
func (x *Task) held(s int) bool {
	m := x.inflight[s]
	return m != nil && m.req == nil
}

// readPart reads the header of the part in slot with uncached loads and
// pays the library's software for a message: it only reads (the sender
// writes the slot again only once it is freed), so it is one poll
// (Processor.Poll).
func (x *Task) readPart(p *sim.Proc, slot mem.Addr) (w uint64, total, off int) {
	h := &x.part
	if h.fn == nil {
		h.x, h.fn = x, h.run
	}
	h.p, h.slot = p, slot
	x.cpu.Poll(p, h.fn)
	h.p = nil
	return h.w, int(h.total), int(h.off)
}

// partRead is readPart's poll. A task keeps one, its check bound once.
type partRead struct {
	x             *Task
	p             *sim.Proc
	slot          mem.Addr
	w, total, off uint64
	fn            func() bool // run
}

func (h *partRead) run() bool {
	c := h.x.cpu
	h.w = c.LoadUncached(h.p, h.slot, 8)
	h.total = c.LoadUncached(h.p, h.slot+8, 8)
	h.off = c.LoadUncached(h.p, h.slot+16, 8)
	c.Compute(h.p, h.x.lib.params.PartCycles)
	return true
}

// takePart takes the part in the head slot of ring s: it reads the header
// (uncached: a remote put wrote it), pays the library's software for a
// message, finds where the data goes (the receive that waits for it, or
// the queue; a later part follows its first), copies it there at the
// machine's memcpy speed, empties the slot and tells s how many of its
// parts it has freed.
func (x *Task) takePart(p *sim.Proc, s int) error {
	l := x.lib
	k := x.next[s] % l.params.Slots
	slot := l.slot(x.rank, s, k)
	w, total, off := x.readPart(p, slot)
	tag, n := int(int32(uint32(w))), int(uint32(w>>32))
	m := x.inflight[s]
	if m == nil {
		if off != 0 {
			return x.corrupt(s, k, fmt.Sprintf("a part at offset %d with no message in progress", off))
		}
		m = &message{src: s, tag: tag, total: total}
		if err := x.route(p, m); err != nil {
			return err
		}
	}
	if tag != m.tag || total != m.total || off != m.got || n > l.params.DataMaxBytes || n != min(l.params.DataMaxBytes, total-off) {
		return x.corrupt(s, k, fmt.Sprintf("header tag %d, total %d, offset %d, length %d; expected tag %d, total %d, offset %d", tag, total, off, n, m.tag, m.total, m.got))
	}
	data := slot + hdrBytes
	if n > 0 && l.params.InvalidateReceive && !machines.CopyBypassesCache(l.m) {
		x.cpu.InvalidateRange(p, data, n)
	}
	switch {
	case m.req != nil:
		if c := min(n, m.req.buf.Len-off); c > 0 {
			machines.Memcpy(l.m, p, x.rank, m.req.buf.Addr+mem.Addr(off), data, c)
		}
	case n > 0:
		machines.Memcpy(l.m, p, x.rank, m.data.Addr+mem.Addr(off), data, n)
	}
	m.got += n
	x.cpu.Store(p, slot+flagOff, 8, flagEmpty)
	x.next[s]++
	l.m.PutWord(p, x.rank, s, l.tasks[s].freed+mem.Addr(x.rank*8), uint64(x.next[s]))
	if m.complete() {
		x.inflight[s] = nil
		if m.req != nil {
			m.req.finish()
		}
	} else {
		x.inflight[s] = m
	}
	x.watch[s] = x.head(s)
	return nil
}

// route decides where a message whose first part has come goes: to the
// first posted receive that matches it, else into the receive queue, whose
// buffer in the task's memory holds the first part (see held).
func (x *Task) route(p *sim.Proc, m *message) error {
	for i, r := range x.posted {
		x.cpu.Compute(p, x.lib.params.ScanCycles)
		if r.matches(m.src, m.tag) {
			x.posted = append(x.posted[:i], x.posted[i+1:]...)
			r.claim(m)
			return nil
		}
	}
	b, err := x.queueBuffer(min(m.total, x.lib.params.DataMaxBytes))
	if err != nil {
		return err
	}
	m.data = b
	x.queue = append(x.queue, m)
	x.stats.Queued++
	return nil
}

// queueBuffer returns a buffer of at least n bytes for a queued message:
// one freed earlier if it is large enough, else a new one (kept at its
// whole size for reuse).
func (x *Task) queueBuffer(n int) (mem.Region, error) {
	for i, b := range x.free {
		if b.Len >= n {
			x.free = append(x.free[:i], x.free[i+1:]...)
			return b, nil
		}
	}
	b, err := x.lib.m.Alloc(x.rank, "pvm.queue", max(n, 64))
	if err != nil {
		return mem.Region{}, fmt.Errorf("pvm: task %d: out of memory for the receive queue (%d messages held): %w", x.rank, len(x.queue), err)
	}
	return b, nil
}

// corrupt is the error of a header that does not fit the ring's order.
func (x *Task) corrupt(s, k int, what string) error {
	return fmt.Errorf("pvm: task %d: corrupted message: ring of task %d, slot %d: %s", x.rank, s, k, what)
}

// claim makes r the receive of m: what has arrived of it (in the queue) is
// copied into r's buffer by the caller (post); what is still to come is
// taken straight into it.
func (r *recvReq) claim(m *message) {
	r.msg, m.req = m, r
	if m.total > r.buf.Len {
		r.err = fmt.Errorf("pvm: task %d: message of %d bytes from task %d (tag %d) truncated to the %d-byte receive buffer", r.x.rank, m.total, m.src, m.tag, r.buf.Len)
	}
	if m.complete() {
		r.finish()
	}
}

func (r *recvReq) finish() { r.done = true }

func (r *recvReq) status() stacks.Status {
	if r.msg == nil {
		return stacks.Status{}
	}
	return stacks.Status{Source: r.msg.src, Tag: r.msg.tag, Len: r.msg.total}
}

// post starts receive r: the first matching message in the receive queue,
// copied out of it (what has arrived; the rest will come straight into
// r's buffer), else r waits among the posted receives.
func (x *Task) post(p *sim.Proc, r *recvReq) {
	for i, m := range x.queue {
		x.cpu.Compute(p, x.lib.params.ScanCycles)
		if !r.matches(m.src, m.tag) {
			continue
		}
		x.queue = append(x.queue[:i], x.queue[i+1:]...)
		if c := min(m.got, r.buf.Len); c > 0 {
			machines.Memcpy(x.lib.m, p, x.rank, r.buf.Addr, m.data.Addr, c)
		}
		x.free = append(x.free, m.data)
		m.data = mem.Region{}
		r.claim(m)
		return
	}
	x.posted = append(x.posted, r)
}

// wait blocks until r is done, pulling arrivals meanwhile.
func (x *Task) wait(p *sim.Proc, r *recvReq) (stacks.Status, error) {
	for !r.done {
		took, err := x.sweep(p)
		if err != nil {
			return r.status(), err
		}
		if !took && !r.done {
			x.awaitWords(p, false)
		}
	}
	return r.status(), r.err
}

// precv is pvm_precv: receive into buf a message from src (or any task)
// with tag (or any), pulling every arrived message into the library first.
func (x *Task) precv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	r, err := x.irecv(p, buf, src, tag)
	if err != nil {
		return stacks.Status{}, err
	}
	return x.wait(p, r)
}

func (x *Task) irecv(p *sim.Proc, buf mem.Region, src, tag int) (*recvReq, error) {
	if src != stacks.AnySource {
		if err := x.checkPeer("precv", src); err != nil {
			return nil, err
		}
	}
	r := &recvReq{x: x, buf: buf, src: src, tag: tag}
	if _, err := x.sweep(p); err != nil {
		return nil, err
	}
	x.post(p, r)
	return r, nil
}

func checkTag(x *Task, tag int) error {
	if tag < 0 || tag >= sysTag {
		return fmt.Errorf("pvm: task %d: tag %d out of range [0, %d)", x.rank, tag, sysTag)
	}
	return nil
}

// Send is pvm_psend: it returns once buf is in dst's memory.
func (x *Task) Send(p *sim.Proc, buf mem.Region, dst, tag int) error {
	if err := checkTag(x, tag); err != nil {
		return err
	}
	return x.psend(p, buf, dst, tag)
}

// Recv is pvm_precv (src may be stacks.AnySource, tag stacks.AnyTag).
func (x *Task) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	if tag != stacks.AnyTag {
		if err := checkTag(x, tag); err != nil {
			return stacks.Status{}, err
		}
	}
	return x.precv(p, buf, src, tag)
}

// Isend is pvm_psend, which completes at once (it needs no receive): the
// request returned is done.
func (x *Task) Isend(p *sim.Proc, buf mem.Region, dst, tag int) (stacks.Request, error) {
	if err := x.Send(p, buf, dst, tag); err != nil {
		return nil, err
	}
	return doneReq{stacks.Status{Source: x.rank, Tag: tag, Len: buf.Len}}, nil
}

// Irecv posts a receive: PVM has no nonblocking precv, so this is the
// receive the library matches arrivals against (pvm_nrecv's probe is its
// Test); Wait is precv's wait.
func (x *Task) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	if tag != stacks.AnyTag {
		if err := checkTag(x, tag); err != nil {
			return nil, err
		}
	}
	r, err := x.irecv(p, buf, src, tag)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Wait blocks until the receive is done.
func (r *recvReq) Wait(p *sim.Proc) (stacks.Status, error) { return r.x.wait(p, r) }

// Test pulls arrivals once and reports whether the receive is done.
func (r *recvReq) Test(p *sim.Proc) (bool, stacks.Status, error) {
	if !r.done {
		if _, err := r.x.sweep(p); err != nil {
			return false, stacks.Status{}, err
		}
	}
	if !r.done {
		return false, stacks.Status{}, nil
	}
	return true, r.status(), r.err
}

// doneReq is a completed send.
type doneReq struct{ st stacks.Status }

func (d doneReq) Wait(*sim.Proc) (stacks.Status, error)       { return d.st, nil }
func (d doneReq) Test(*sim.Proc) (bool, stacks.Status, error) { return true, d.st, nil }

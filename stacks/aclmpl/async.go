package aclmpl

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Asynchronous protocol, Figure 2 (section 4.2).
//
// Each PE has a pool of PoolSlots buffers; buffer i is handed out by the
// i-th read of the PE's fetch-and-increment register. A buffer is a 32-byte
// header followed by SlotBytes of data:
//
//	[0,4)   sending PE
//	[4,8)   tag
//	[8,16)  total message length
//	[16,20) offset of this piece in the message
//	[20,24) length of this piece
//	[24,32) flag: slotEmpty, slotDone (the sender's transfer is complete),
//	        slotReceived (copied out by the receiver)
//
// A message longer than SlotBytes travels as consecutive pieces, each in a
// buffer of its own. The sender puts the data, waits for its delivery, then
// puts the header with the DONE flag, so a receiver that sees DONE sees the
// data. The flag is the header's last word. On a machine whose writes land
// in issue order (machines.OrderedWrites: one T3D put lands at once) the
// header is one put, and a receiver that sees DONE sees the rest of the
// header. Elsewhere the packets of one put may land out of order (the SCI
// fabric reorders the two 16-byte packets of the header), so the sender
// puts the header, waits until it has landed (Quiet), then puts the flag.
const (
	hdrBytes = 32
	flagOff  = 24 // the flag word's offset in the header

	slotEmpty    = 0
	slotDone     = 1
	slotReceived = 2
)

// piece is a message piece in the sent-but-not-yet-received list: its
// header fields and a copy of its data (n bytes at data in the PE's memory:
// no pointer, so that the list moves as plain bytes).
type piece struct {
	src, tag, total, off, n int
	data                    mem.Addr
	pooled                  bool   // data is in a pool buffer, written by a remote put
	seq                     uint64 // order of entry in the list (listAdd)
}

type asyncState struct {
	reg       register
	word      mem.Addr // the register's word in this PE's memory (wordRegister)
	slots     int
	slotBytes int
	slotCost  float64 // slot_cycles: the software per pool buffer, on each side
	retry     sim.Time
	maxRetry  sim.Time
	pool      mem.Region
	list      []piece      // sent but not yet received, oldest first
	fromSrc   [][]uint64   // seq of the pieces in list from each PE, oldest first (listFind)
	seq       uint64       // seq of the last piece listed
	free      []mem.Region // list buffers to reuse
	watch     []mem.Addr   // the pool's flag words, for spin-waits
	resets    int
	copyOuts  int
	low       int      // every buffer below low has been received
	scan      poolScan // a receive's scan of the pool
	hdr       hdrRead  // checkOverflow's look at a buffer
	wait      recvWait // a blocking receive's spin
}

// software charges x the protocol's software for one pool buffer
// (slot_cycles), on the send side once it holds a buffer, on the receive
// side as it takes a piece.
func (a *asyncState) software(p *sim.Proc, x *PE) {
	if a.slotCost > 0 {
		x.cpu.Compute(p, a.slotCost)
	}
}

func newAsync(x *PE, params Params) (*asyncState, error) {
	a := &asyncState{reg: x.lib.reg, slots: params.PoolSlots, slotBytes: params.SlotBytes, slotCost: params.SlotCycles, fromSrc: make([][]uint64, x.size)}
	var err error
	if a.retry, err = sim.FromFloat(params.RetryUs, sim.Microsecond); err != nil {
		return nil, fmt.Errorf("retry_us: %w", err)
	}
	if a.maxRetry, err = sim.FromFloat(params.MaxBackoffUs, sim.Microsecond); err != nil {
		return nil, fmt.Errorf("max_backoff_us: %w", err)
	}
	if a.pool, err = machines.MapRemote(x.lib.m, nil, x.rank, x.rank, "aclmpl.pool", a.slots*a.stride()); err != nil {
		return nil, fmt.Errorf("aclmpl: PE %d: asynchronous buffer pool (%d slots of %d bytes): %w", x.rank, a.slots, a.stride(), err)
	}
	if a.word, err = a.reg.place(x); err != nil {
		return nil, fmt.Errorf("aclmpl: PE %d: fetch-and-increment register: %w", x.rank, err)
	}
	for i := 0; i < a.slots; i++ {
		a.watch = append(a.watch, a.flag(i))
	}
	return a, nil
}

// listAdd appends pc to the sent-but-not-yet-received list, and its seq to
// those of its source PE (a PE number a header named: one out of range
// matches no receive from a definite PE and is not indexed).
func (a *asyncState) listAdd(pc piece) {
	a.seq++
	pc.seq = a.seq
	a.list = append(a.list, pc)
	if pc.src >= 0 && pc.src < len(a.fromSrc) {
		a.fromSrc[pc.src] = append(a.fromSrc[pc.src], pc.seq)
	}
}

// listFind returns the index of the first piece in the list that r
// matches, or -1. For a receive from a definite PE it looks only at that
// PE's pieces (fromSrc, in list order: the list is in seq order), each
// found by a binary search on its seq, instead of at every piece before
// them: the same answer, without a search as long as the list per piece
// received.
func (a *asyncState) listFind(r *recvReq) int {
	if r.src < 0 || r.src >= len(a.fromSrc) {
		return slices.IndexFunc(a.list, r.matches)
	}
	for _, s := range a.fromSrc[r.src] {
		i, _ := slices.BinarySearchFunc(a.list, s, func(pc piece, s uint64) int { return cmp.Compare(pc.seq, s) })
		if r.matches(a.list[i]) {
			return i
		}
	}
	return -1
}

// listRemove removes piece i from the list.
func (a *asyncState) listRemove(i int) {
	pc := a.list[i]
	a.list = slices.Delete(a.list, i, i+1)
	if pc.src >= 0 && pc.src < len(a.fromSrc) {
		f := a.fromSrc[pc.src]
		if k := slices.Index(f, pc.seq); k >= 0 {
			a.fromSrc[pc.src] = slices.Delete(f, k, k+1)
		}
	}
}

func (a *asyncState) stride() int { return (hdrBytes + a.slotBytes + 63) &^ 63 }

// region is the n bytes at addr in the PE's memory (the pool's).
func (a *asyncState) region(addr mem.Addr, n int) mem.Region {
	return mem.Region{Mem: a.pool.Mem, Addr: addr, Len: n}
}

// slot is the address of pool buffer i (its header).
func (a *asyncState) slot(i int) mem.Addr { return a.pool.Addr + mem.Addr(i*a.stride()) }

// flag is the address of pool buffer i's flag word.
func (a *asyncState) flag(i int) mem.Addr { return a.slot(i) + flagOff }

// AsyncStats counts a PE's pool overflows.
type AsyncStats struct {
	Resets   int // times the pool overflowed and the register was reset
	CopyOuts int // pieces copied out to the sent-but-not-received list
	Listed   int // pieces in the list now
}

// AsyncStats returns the PE's asynchronous-protocol counters.
func (x *PE) AsyncStats() AsyncStats {
	if x.async == nil {
		return AsyncStats{}
	}
	return AsyncStats{Resets: x.async.resets, CopyOuts: x.async.copyOuts, Listed: len(x.async.list)}
}

// needAsync makes sure the asynchronous protocol can run on this PE: the
// machine has a fetch-and-increment register per PE or a remote
// fetch-and-increment to build one, and the PE's pool exists.
func (x *PE) needAsync(op string) error {
	if x.lib.reg == nil {
		return fmt.Errorf("aclmpl: PE %d: %s: %w", x.rank, op, &machines.MissingCapability{
			Machine: x.lib.m.Name(), User: "aclmpl's asynchronous protocol",
			Capability: machines.VerbFetchIncReg.Name + " or " + machines.VerbRemoteFetchInc.Name + ": " +
				machines.VerbFetchIncReg.What + ", or " + machines.VerbRemoteFetchInc.What + " to build one from a word"})
	}
	_, err := x.lib.asyncOf(x.rank)
	return err
}

// asyncOf returns PE pe's asynchronous state, allocating its buffer pool on
// first use (a set-up step: the pool is at a fixed place, known to every
// PE, as if allocated at start-up).
func (l *Lib) asyncOf(pe int) (*asyncState, error) {
	x := l.pes[pe]
	if x.async == nil {
		a, err := newAsync(x, l.params)
		if err != nil {
			return nil, err
		}
		x.async = a
	}
	return x.async, nil
}

// AsyncSend sends buf to dst with the asynchronous protocol: it returns
// once the message is in dst's buffer pool, without waiting for a receive.
// While dst's pool is full it backs off and retries, checking its own pool
// for overflow meanwhile.
func (x *PE) AsyncSend(p *sim.Proc, buf mem.Region, dst, tag int) error {
	if err := x.needAsync("asynchronous send"); err != nil {
		return err
	}
	if err := x.checkPeer("asynchronous send", dst); err != nil {
		return err
	}
	x.cpu.Compute(p, callCycles)
	if err := x.checkOverflow(p); err != nil {
		return err
	}
	a := x.async
	for off := 0; ; off += a.slotBytes {
		n := min(a.slotBytes, buf.Len-off)
		if err := x.sendPiece(p, buf.Slice(off, n), dst, tag, buf.Len, off); err != nil {
			return err
		}
		if off+n >= buf.Len {
			return nil
		}
	}
}

// sendPiece allocates a buffer in dst's pool and transfers one piece.
func (x *PE) sendPiece(p *sim.Proc, data mem.Region, dst, tag, total, off int) error {
	a := x.async
	dstPool, err := x.lib.asyncOf(dst)
	if err != nil {
		return err
	}
	backoff := a.retry
	var idx uint64
	for {
		idx = a.reg.fetchInc(p, x, x.lib.pes[dst])
		if idx < uint64(a.slots) {
			break
		}
		// Out of bounds: dst's pool is full until dst resets its register.
		if err := x.checkOverflow(p); err != nil {
			return err
		}
		x.cpu.Delay(p, backoff)
		backoff = min(2*backoff, a.maxRetry)
	}
	rslot := dstPool.slot(int(idx))
	a.software(p, x)
	if data.Len > 0 { // an empty message is its header alone: no 0-byte put
		x.lib.m.Put(p, x.rank, dst, rslot+hdrBytes, data.Addr, data.Len)
		x.lib.m.Quiet(p, x.rank)
	}
	h := x.stage + 32
	x.storeWords(p, h, uint64(uint32(x.rank))|uint64(uint32(int32(tag)))<<32,
		uint64(total), uint64(uint32(off))|uint64(uint32(data.Len))<<32, slotDone)
	if _, ordered := x.lib.m.(machines.OrderedWrites); ordered {
		x.lib.m.Put(p, x.rank, dst, rslot, h, hdrBytes)
		return nil
	}
	// A network that may land the packets of one put out of order (the
	// SCI fabric's 16-byte packets of a partial block) could land the flag
	// before the rest of the header: put the header, wait until it has
	// landed, then put the flag.
	x.lib.m.Put(p, x.rank, dst, rslot, h, flagOff)
	x.lib.m.Quiet(p, x.rank)
	x.lib.m.PutWord(p, x.rank, dst, rslot+flagOff, slotDone)
	return nil
}

// readHeader loads pool buffer i's header with uncached loads (remote puts
// wrote it, and they do not update the cache): the flag word, and the three
// other words when the flag says DONE.
func (x *PE) readHeader(p *sim.Proc, i int) (flag uint64, pc piece) {
	s := x.async.slot(i)
	if flag = x.cpu.LoadUncached(p, s+flagOff, 8); flag != slotDone {
		return flag, piece{}
	}
	w := x.cpu.LoadUncached(p, s, 8)
	total := x.cpu.LoadUncached(p, s+8, 8)
	w2 := x.cpu.LoadUncached(p, s+16, 8)
	pc = piece{src: int(uint32(w)), tag: int(int32(uint32(w >> 32))), total: int(total),
		off: int(uint32(w2)), n: int(uint32(w2 >> 32)),
		data: s + hdrBytes, pooled: true}
	return flag, pc
}

// checkOverflow is the periodic check of section 4.2: if the last buffer
// of the pool is DONE or RECEIVED, the register has run out of bounds. Once
// every buffer handed out is complete, the unreceived pieces are copied out
// to the sent-but-not-yet-received list, the pool is emptied and the
// register reset to zero, so that blocked senders can resume.
func (x *PE) checkOverflow(p *sim.Proc) error {
	a := x.async
	if x.cpu.LoadUncached(p, a.flag(a.slots-1), 8) == slotEmpty {
		return nil
	}
	// Every buffer has been handed out; wait for the transfers still in
	// flight to set their DONE flags.
	for i := 0; i < a.slots; i++ {
		x.spinOn(p, a.flag(i), i, waitOverflow)
	}
	for i := 0; i < a.slots; i++ {
		if flag, pc := a.overflowHeader(p, x, i); flag == slotDone {
			buf, err := x.listBuffer()
			if err != nil {
				return err
			}
			x.invalidate(p, a.region(pc.data, pc.n))
			// The copy out into the list, at the machine's memcpy speed
			// (170 MB/s on the T3D, section 4.2); the receive that takes
			// the piece later copies it again (take).
			machines.Memcpy(x.lib.m, p, x.rank, buf.Addr, pc.data, pc.n)
			pc.data, pc.pooled = buf.Addr, false
			a.listAdd(pc)
			a.copyOuts++
		}
		x.cpu.Store(p, a.flag(i), 8, slotEmpty)
	}
	a.reg.reset(p, x)
	a.low = 0
	a.resets++
	return nil
}

// overflowHeader is checkOverflow's look at buffer i: the loop's overhead
// and the header's uncached loads, which only read, so it is a poll
// (Processor.Poll).
func (a *asyncState) overflowHeader(p *sim.Proc, x *PE, i int) (uint64, piece) {
	h := &a.hdr
	if h.fn == nil {
		h.fn = h.run
	}
	h.x, h.p, h.i = x, p, i
	x.cpu.Poll(p, h.fn)
	flag, pc := h.flag, h.pc
	*h = hdrRead{fn: h.fn}
	return flag, pc
}

// hdrRead is one overflowHeader, the check of a poll: buffer i's flag
// and, if DONE, its header. The PE keeps one, its check bound once.
type hdrRead struct {
	x    *PE
	p    *sim.Proc
	i    int
	flag uint64
	pc   piece
	fn   func() bool // run
}

func (h *hdrRead) run() bool {
	h.x.cpu.Compute(h.p, scanCycles)
	h.flag, h.pc = h.x.readHeader(h.p, h.i)
	return true
}

// listBuffer returns a buffer of SlotBytes for a list node.
func (x *PE) listBuffer() (mem.Region, error) {
	a := x.async
	if k := len(a.free); k > 0 {
		b := a.free[k-1]
		a.free = a.free[:k-1]
		return b, nil
	}
	b, err := x.lib.m.Alloc(x.rank, "aclmpl.list", a.slotBytes)
	if err != nil {
		return mem.Region{}, fmt.Errorf("aclmpl: PE %d: out of memory for the sent-but-not-yet-received list (%d pieces held): %w", x.rank, len(a.list), err)
	}
	return b, nil
}

// recvReq is an asynchronous receive in progress.
type recvReq struct {
	x        *PE
	buf      mem.Region
	src, tag int
	matched  bool // the first piece was found: src and tag are the message's
	total    int
	got      int
	done     bool
	err      error
}

func (r *recvReq) matches(pc piece) bool {
	return (r.src == stacks.AnySource || pc.src == r.src) && (r.tag == stacks.AnyTag || pc.tag == r.tag) && pc.off == r.got
}

// take copies a matching piece into the user's buffer: the receiver's
// memcpy of section 4.2 ("the data is memcpy'd to the caller's buffer"),
// at the machine's memcpy speed ("word aligned memcpy() speeds on the T3D
// are only 170MB/sec"). The sender made none: it put the data straight
// from its buffer into the pool ("one data copy, in addition to the
// shmem_put()").
func (r *recvReq) take(p *sim.Proc, pc piece) {
	if !r.matched {
		r.matched, r.src, r.tag, r.total = true, pc.src, pc.tag, pc.total
		if pc.total > r.buf.Len && r.err == nil {
			r.err = fmt.Errorf("aclmpl: PE %d: asynchronous message of %d bytes from PE %d truncated to the %d-byte receive buffer", r.x.rank, pc.total, pc.src, r.buf.Len)
		}
	}
	r.x.async.software(p, r.x)
	if n := min(pc.n, r.buf.Len-pc.off); n > 0 {
		if pc.pooled {
			r.x.invalidate(p, r.x.async.region(pc.data, n))
		}
		machines.Memcpy(r.x.lib.m, p, r.x.rank, r.buf.Addr+mem.Addr(pc.off), pc.data, n)
	}
	r.got += pc.n
	if r.got >= r.total {
		r.done = true
	}
}

// progress takes every matching piece available now and reports whether
// the message is complete: first the sent-but-not-yet-received list, then
// the pool, in the order the buffers were handed out.
func (r *recvReq) progress(p *sim.Proc) (bool, error) {
	x := r.x
	a := x.async
	x.cpu.Compute(p, callCycles)
	if err := x.checkOverflow(p); err != nil {
		return false, err
	}
	for !r.done {
		// The list first: scanCycles per entry examined, up to the first
		// that matches.
		if i := a.listFind(r); i >= 0 {
			x.scan(p, i+1)
			pc := a.list[i]
			r.take(p, pc)
			a.free = append(a.free, a.region(pc.data, a.slotBytes))
			a.listRemove(i)
			continue
		}
		x.scan(p, len(a.list))
		handed := min(int(a.reg.read(p, x)), a.slots)
		i, pc, found := r.scanPool(p, handed)
		if !found {
			return false, nil
		}
		r.take(p, pc)
		x.cpu.Store(p, a.flag(i), 8, slotReceived)
		if i == a.low {
			a.low++
		}
	}
	return true, r.err
}

// scanPool scans the buffers handed out so far, from the first one not yet
// received, reading each header with uncached loads, up to the first DONE
// piece that matches the receive: its buffer and header. The buffers
// received at the front of the pool are passed for good (a.low moves
// past them). The scan only reads: it is a poll (Processor.Poll).
func (r *recvReq) scanPool(p *sim.Proc, handed int) (int, piece, bool) {
	x := r.x
	a := x.async
	s := &a.scan
	if s.fn == nil {
		s.fn = s.run
	}
	s.x, s.r, s.p, s.handed = x, r, p, handed
	x.cpu.Poll(p, s.fn)
	a.low = s.low
	at, pc := s.at, s.pc
	*s = poolScan{fn: s.fn}
	return at, pc, at >= 0
}

// poolScan is one scan of the pool (scanPool), the check of a poll: the
// buffers from the first not yet received up to handed, until a DONE piece
// that r matches (at, with its header pc; -1: none), passing the buffers
// received at the front (low). The PE keeps one, its check bound once.
type poolScan struct {
	x       *PE
	r       *recvReq
	p       *sim.Proc
	handed  int
	low, at int
	pc      piece
	fn      func() bool // run
}

func (s *poolScan) run() bool {
	x := s.x
	a := x.async
	s.low, s.at = a.low, -1
	for i := a.low; i < s.handed; i++ {
		x.cpu.Compute(s.p, scanCycles)
		flag, h := x.readHeader(s.p, i)
		if flag == slotReceived && i == s.low {
			s.low++
		}
		if flag == slotDone && s.r.matches(h) {
			s.at, s.pc = i, h
			return true
		}
	}
	return false
}

// scan is the loop overhead of examining n entries of the
// sent-but-not-yet-received list (listFind finds the first match without
// walking the entries before it; the program walks them): scanCycles an
// entry. The walk reads nothing another PE writes (the list is this PE's
// own), so it is one stretch of computation.
func (x *PE) scan(p *sim.Proc, n int) {
	if n > 0 {
		x.cpu.Compute(p, float64(n)*scanCycles)
	}
}

func (r *recvReq) status() stacks.Status {
	return stacks.Status{Source: r.src, Tag: r.tag, Len: min(r.total, r.buf.Len)}
}

// Test is the asynchronous receive that returns at once: it takes what has
// arrived and reports whether the message is complete.
func (r *recvReq) Test(p *sim.Proc) (bool, stacks.Status, error) {
	if r.done {
		return true, r.status(), r.err
	}
	done, err := r.progress(p)
	return done, r.status(), err
}

// Wait is the blocking asynchronous receive: a loop of receive attempts
// that sleeps (spinning, in the machine) until some buffer's flag changes.
func (r *recvReq) Wait(p *sim.Proc) (stacks.Status, error) {
	x := r.x
	w := &x.async.wait
	if w.fn == nil {
		w.fn = w.attempt
	}
	w.r, w.p, w.err, w.why = r, p, nil, spinWhy{rank: int32(x.rank), peer: int32(r.src), kind: waitAsyncRecv}
	x.cpu.SpinUntil(p, w, w.fn, x.async.watch...)
	err := w.err
	w.r, w.p, w.err = nil, nil, nil
	if err == nil {
		err = r.err
	}
	return r.status(), err
}

// recvWait is a blocking asynchronous receive's spin (Wait): each poll a
// receive attempt. The PE keeps one, its poll bound once.
type recvWait struct {
	r   *recvReq
	p   *sim.Proc
	err error
	why spinWhy
	fn  func() bool // attempt
}

func (w *recvWait) attempt() bool {
	var done bool
	done, w.err = w.r.progress(w.p)
	return done || w.err != nil
}

func (w *recvWait) String() string { return w.why.String() }

func peName(pe int) string {
	if pe == stacks.AnySource {
		return "any PE"
	}
	return fmt.Sprintf("PE %d", pe)
}

// AsyncRecv starts an asynchronous receive into buf from src (or
// stacks.AnySource) with tag (or stacks.AnyTag). Test on the result is the
// receive that returns at once if no message is available; Wait is the
// blocking asynchronous receive.
func (x *PE) AsyncRecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	if err := x.needAsync("asynchronous receive"); err != nil {
		return nil, err
	}
	if src != stacks.AnySource {
		if err := x.checkPeer("asynchronous receive", src); err != nil {
			return nil, err
		}
	}
	return &recvReq{x: x, buf: buf, src: src, tag: tag}, nil
}

// doneReq is an operation complete when it was started.
type doneReq struct{ st stacks.Status }

func (d doneReq) Wait(*sim.Proc) (stacks.Status, error)       { return d.st, nil }
func (d doneReq) Test(*sim.Proc) (bool, stacks.Status, error) { return true, d.st, nil }

// Isend is AsyncSend as a stacks.Comm request (complete on return).
func (x *PE) Isend(p *sim.Proc, buf mem.Region, dst, tag int) (stacks.Request, error) {
	if err := x.AsyncSend(p, buf, dst, tag); err != nil {
		return nil, err
	}
	return doneReq{st: stacks.Status{Source: x.rank, Tag: tag, Len: buf.Len}}, nil
}

// Irecv is AsyncRecv.
func (x *PE) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	return x.AsyncRecv(p, buf, src, tag)
}

// storeWords stores consecutive 8-byte words at a in the PE's staging
// memory, one CPU store each (one run of stores: Processor.StoreRun), and
// fences (the Alpha's MB) so that they are in memory before a put reads
// them.
func (x *PE) storeWords(p *sim.Proc, a mem.Addr, words ...uint64) {
	w := &x.lib.words
	if w.fn == nil {
		w.fn = w.fill
	}
	if len(words) > len(w.w) {
		panic(fmt.Sprintf("aclmpl: storeWords of %d words, at most %d", len(words), len(w.w)))
	}
	w.x, w.p, w.at, w.n = x, p, a, copy(w.w[:], words)
	x.cpu.StoreRun(p, w.fn)
	x.cpu.Fence(p)
}

// wordWriter is storeWords' run of stores. The library keeps one, its
// fill bound once.
type wordWriter struct {
	x  *PE
	p  *sim.Proc
	at mem.Addr
	w  [4]uint64 // the most storeWords stores: a piece's header
	n  int
	fn func() // fill
}

// fill stores the words, from a copy of what storeWords set: run step by
// step, its stores sleep, and another PE's storeWords may set it
// meanwhile.
func (w *wordWriter) fill() {
	x, p, a, words, n := w.x, w.p, w.at, w.w, w.n
	for i, v := range words[:n] {
		x.cpu.Store(p, a+mem.Addr(8*i), 8, v)
	}
}

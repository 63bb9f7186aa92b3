package aclmpl

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Synchronous protocol, Figure 1 (section 4.1).
//
// Request block (16 bytes), in the sender's array at index receiver:
//
//	[0,8)   receive buffer address
//	[8,12)  receive buffer length
//	[12,16) control flag (flagRequest when posted; the sender clears it)
//
// Completion block (8 bytes), in the receiver's array at index sender:
//
//	[0,4)   size of the transfer in bytes
//	[4,8)   flag: flagDone, or flagTruncated when the message did not fit
const (
	reqBytes  = 16
	compBytes = 8

	flagRequest   = 1
	flagDone      = 1
	flagTruncated = 2
)

// postRequest builds the 16-byte request block for a receive from src into
// buf and puts it into src's request array (the receiver's first step).
func (x *PE) postRequest(p *sim.Proc, src int, buf mem.Region) {
	x.storeWords(p, x.stage, uint64(buf.Addr), uint64(uint32(buf.Len))|flagRequest<<32)
	x.lib.m.Put(p, x.rank, src, x.lib.pes[src].reqs+mem.Addr(x.rank*reqBytes), x.stage, reqBytes)
}

// awaitCompletion spin-waits until the completion block from src says DONE,
// clears it and returns the transfer size.
func (x *PE) awaitCompletion(p *sim.Proc, src int) (int, bool) {
	a := x.comps + mem.Addr(src*compBytes)
	w := x.spinOn(p, a, src, waitDone)
	x.cpu.Store(p, a, 8, 0)
	return int(uint32(w)), w>>32 == flagTruncated
}

// awaitRequest spin-waits until dst's request block arrives, clears its flag
// and returns the receive buffer it names.
func (x *PE) awaitRequest(p *sim.Proc, dst int) (mem.Addr, int) {
	blk := x.reqs + mem.Addr(dst*reqBytes)
	w := x.spinOn(p, blk+8, dst, waitRequest)
	addr := mem.Addr(x.cpu.LoadUncached(p, blk, 8))
	x.cpu.Store(p, blk+8, 8, 0)
	return addr, int(uint32(w))
}

// invalidate drops the data-cache lines of a buffer that a remote put has
// just filled (when Params.InvalidateReceive): a synchronous receive buffer,
// or an asynchronous pool buffer before its data is copied out (memcpy reads
// through the cache). The put did not update this PE's cache, so a line the
// program or an earlier copy read before would be stale. It
// invalidates line by line (shmem_udcflush_line), or flushes the whole cache
// (shmem_udcflush) when that costs less; the machine charges either.
func (x *PE) invalidate(p *sim.Proc, buf mem.Region) {
	if !x.lib.params.InvalidateReceive || buf.Len <= 0 {
		return
	}
	x.cpu.InvalidateRange(p, buf.Addr, buf.Len)
}

// transfer is the sender's part once the request is known: put the data,
// wait until it is delivered, put the completion block. An empty message
// has no data transfer (Figure 1's middle arrow): the library issues no
// shmem_put of 0 bytes and has nothing to wait for, so the completion block
// (size 0, DONE) follows the request at once; the request/completion round
// trip still happens.
func (x *PE) transfer(p *sim.Proc, buf mem.Region, dst int, addr mem.Addr, room int) error {
	n, flag := buf.Len, uint64(flagDone)
	if n > room {
		n, flag = room, flagTruncated
	}
	if n > 0 {
		x.lib.m.Put(p, x.rank, dst, addr, buf.Addr, n)
		x.lib.m.Quiet(p, x.rank)
	}
	x.lib.m.PutWord(p, x.rank, dst, x.lib.pes[dst].comps+mem.Addr(x.rank*compBytes), uint64(uint32(n))|flag<<32)
	if flag == flagTruncated {
		return fmt.Errorf("aclmpl: PE %d: message of %d bytes to PE %d truncated to its %d-byte receive buffer", x.rank, buf.Len, dst, room)
	}
	return nil
}

// Send sends buf to PE dst with the synchronous protocol and returns when
// the data is in dst's receive buffer. tag is ignored (the request block
// carries none).
func (x *PE) Send(p *sim.Proc, buf mem.Region, dst, tag int) error {
	if err := x.checkPeer("send", dst); err != nil {
		return err
	}
	x.cpu.Compute(p, callCycles)
	addr, room := x.awaitRequest(p, dst)
	return x.transfer(p, buf, dst, addr, room)
}

// Recv receives into buf from PE src with the synchronous protocol. src
// must be a definite PE; tag is ignored.
func (x *PE) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	if src == stacks.AnySource {
		return stacks.Status{}, fmt.Errorf("aclmpl: PE %d: the synchronous receive needs a definite source: its request block goes to one sender", x.rank)
	}
	if err := x.checkPeer("receive", src); err != nil {
		return stacks.Status{}, err
	}
	x.cpu.Compute(p, callCycles)
	x.postRequest(p, src, buf)
	n, trunc := x.awaitCompletion(p, src)
	x.invalidate(p, buf.Slice(0, n))
	st := stacks.Status{Source: src, Tag: tag, Len: n}
	if trunc {
		return st, fmt.Errorf("aclmpl: PE %d: message from PE %d truncated to the %d-byte receive buffer", x.rank, src, buf.Len)
	}
	return st, nil
}

// SendRecv sends sbuf to dst and receives rbuf from src (possibly the same
// PE): it posts its request to src first, so that pairwise exchanges do not
// deadlock, then sends, then waits for its own completion.
func (x *PE) SendRecv(p *sim.Proc, sbuf mem.Region, dst int, rbuf mem.Region, src int) (stacks.Status, error) {
	if err := x.checkPeer("send-and-receive", dst); err != nil {
		return stacks.Status{}, err
	}
	if err := x.checkPeer("send-and-receive", src); err != nil {
		return stacks.Status{}, err
	}
	x.cpu.Compute(p, callCycles)
	x.postRequest(p, src, rbuf)
	addr, room := x.awaitRequest(p, dst)
	serr := x.transfer(p, sbuf, dst, addr, room)
	n, trunc := x.awaitCompletion(p, src)
	x.invalidate(p, rbuf.Slice(0, n))
	st := stacks.Status{Source: src, Len: n}
	if serr != nil {
		return st, serr
	}
	if trunc {
		return st, fmt.Errorf("aclmpl: PE %d: message from PE %d truncated to the %d-byte receive buffer", x.rank, src, rbuf.Len)
	}
	return st, nil
}

// spinOn spin-waits, loading the word at a uncached at each poll, until
// it holds what kind waits for: a completion block's DONE (or truncated)
// flag, a request block's REQUEST flag, a pool buffer's flag no longer
// EMPTY. It returns the word the last poll loaded. peer is the PE (or the
// buffer) the wait names in reports.
func (x *PE) spinOn(p *sim.Proc, a mem.Addr, peer int, kind spinKind) uint64 {
	s := x.spin
	if s == nil {
		s = &wordSpin{x: x}
		s.fn = s.poll
		x.spin = s
	}
	s.p, s.a, s.why = p, a, spinWhy{rank: int32(x.rank), peer: int32(peer), kind: kind}
	x.cpu.SpinUntil(p, s, s.fn, a)
	s.p = nil
	return s.w
}

// wordSpin is a PE's spin on one word (spinOn), kept and reused: its poll
// and its reason are bound once, not made at every wait.
type wordSpin struct {
	x   *PE
	p   *sim.Proc
	a   mem.Addr
	w   uint64 // what the last poll loaded
	why spinWhy
	fn  func() bool // poll
}

// poll is one poll of the spin: an uncached load of the word.
func (s *wordSpin) poll() bool {
	s.w = s.x.cpu.LoadUncached(s.p, s.a, 8)
	switch s.why.kind {
	case waitDone:
		return s.w>>32 != 0
	case waitRequest:
		return s.w>>32 == flagRequest
	default: // waitOverflow
		return s.w != slotEmpty
	}
}

func (s *wordSpin) String() string { return s.why.String() }

// spinWhy is what a receive or send spins on, formatted only when a report
// or trace needs it (Processor.SpinUntil's why): a spin on every message costs
// no formatting.
type spinWhy struct {
	rank, peer int32
	kind       spinKind
}

type spinKind uint8

const (
	waitDone      spinKind = iota // a receive waits for the sender's DONE
	waitRequest                   // a send waits for the receiver's request block
	waitAsyncRecv                 // a blocking asynchronous receive waits for a buffer
	waitOverflow                  // an overflowed pool waits for a buffer's transfer (peer: the buffer)
)

func (w spinWhy) String() string {
	switch w.kind {
	case waitDone:
		return fmt.Sprintf("aclmpl PE %d: receive from PE %d waits for DONE", w.rank, w.peer)
	case waitRequest:
		return fmt.Sprintf("aclmpl PE %d: send to PE %d waits for its request block", w.rank, w.peer)
	case waitOverflow:
		return fmt.Sprintf("aclmpl PE %d: pool overflow waits for buffer %d's transfer", w.rank, w.peer)
	default:
		return fmt.Sprintf("aclmpl PE %d: blocking asynchronous receive from %s waits for a buffer", w.rank, peName(int(w.peer)))
	}
}

package t3dmpi

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Control packet header (hdrBytes), at the start of a ring slot:
//
//	[0,8)   sequence number from this sender (1, 2, ...): the valid mark
//	[8,16)  kind | tag << 8
//	[16,24) message length
//	[24,32) unused
func (r *Rank) uncached() float64 { return r.cpu.Config().Costs.UncachedLoadCycles }

// storeWords builds words in the staging area (one store each, charged
// together).
func (r *Rank) storeWords(p *sim.Proc, words ...uint64) {
	for i, w := range words {
		r.stage.Mem.Store64(r.stage.Addr+mem.Addr(8*i), w)
	}
	r.cpu.Compute(p, float64(len(words))*r.cpu.Config().Costs.StoreCycles)
}

// spin waits, driving the progress engine, until cond holds.
func (r *Rank) spin(p *sim.Proc, why string, cond func() bool) error {
	var err error
	r.cpu.SpinUntil(p, fmt.Sprintf("mpi-t3d rank %d: %s", r.rank, why), func() bool {
		if cond() {
			return true
		}
		err = r.progress(p)
		return err != nil || cond()
	}, r.watch...)
	return err
}

// sendPacket puts a control packet (with inline data for a short message)
// into dst's ring for this sender, once a slot is free.
func (r *Rank) sendPacket(p *sim.Proc, dst, kind, tag, n int, extra uint64, data mem.Region) error {
	r.cpu.Compute(p, packetCycles)
	credit := r.ctlAddr(dst)
	slots := uint64(r.w.params.Slots)
	if err := r.spin(p, fmt.Sprintf("send to rank %d waits for a packet slot", dst), func() bool {
		return r.sent[dst]-r.cpu.LoadUncached(p, credit, 8) < slots
	}); err != nil {
		return err
	}
	slot := r.w.ranks[dst].slot(r.rank, int(r.sent[dst]%slots))
	if data.Len > 0 {
		r.m.Put(p, r.rank, dst, slot+hdrBytes, data.Addr, data.Len)
		r.m.Quiet(p, r.rank)
	}
	r.sent[dst]++
	r.storeWords(p, r.sent[dst], uint64(kind)|uint64(uint32(int32(tag)))<<8, uint64(n), extra)
	r.m.Put(p, r.rank, dst, slot, r.stage.Addr, hdrBytes)
	return nil
}

// Isend is MPI_Isend: short and eager messages are on their way when it
// returns; a rendezvous send has sent its request and completes in the
// progress engine once the receiver's clear-to-send arrives.
func (r *Rank) Isend(p *sim.Proc, buf mem.Region, dst, tag int) (stacks.Request, error) {
	if err := r.check(dst); err != nil {
		return nil, err
	}
	q := &request{r: r, send: true, buf: buf, peer: dst, tag: tag,
		status: stacks.Status{Source: r.rank, Tag: tag, Len: buf.Len}}
	prm := r.w.params
	switch {
	case buf.Len <= prm.ShortBytes:
		if err := r.sendPacket(p, dst, kShort, tag, buf.Len, 0, buf); err != nil {
			return nil, err
		}
		q.done = true
	case buf.Len <= prm.EagerBytes:
		released := r.ctlAddr(dst) + 8
		if err := r.spin(p, fmt.Sprintf("eager send to rank %d waits for its eager buffer", dst), func() bool {
			return r.esent[dst] == r.cpu.LoadUncached(p, released, 8)
		}); err != nil {
			return nil, err
		}
		r.m.Put(p, r.rank, dst, r.w.ranks[dst].eagerBuf(r.rank), buf.Addr, buf.Len)
		r.m.Quiet(p, r.rank)
		r.esent[dst]++
		if err := r.sendPacket(p, dst, kEager, tag, buf.Len, 0, mem.Region{}); err != nil {
			return nil, err
		}
		q.done = true
	default:
		// The request-to-send carries a number naming this send; the
		// clear-to-send answers with it.
		r.rtsSeq[dst]++
		q.seq = r.rtsSeq[dst]
		if err := r.sendPacket(p, dst, kRTS, tag, buf.Len, q.seq, mem.Region{}); err != nil {
			return nil, err
		}
		q.rts = true
		r.sends = append(r.sends, q)
	}
	return q, nil
}

// Irecv is MPI_Irecv: it first looks in the unexpected messages, in order.
func (r *Rank) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	if src != stacks.AnySource {
		if err := r.check(src); err != nil {
			return nil, err
		}
	}
	q := &request{r: r, buf: buf, peer: src, tag: tag}
	for i, u := range r.unexp {
		if match(q, u.peer, u.tag) {
			r.unexp = append(r.unexp[:i], r.unexp[i+1:]...)
			q.seq = u.seq
			r.deliver(p, q, u.peer, u.tag, u.kind, u.n, u.data)
			return q, nil
		}
	}
	r.posted = append(r.posted, q)
	return q, nil
}

func match(q *request, src, tag int) bool {
	return (q.peer == stacks.AnySource || q.peer == src) && (q.tag == stacks.AnyTag || q.tag == tag)
}

// deliver completes (or, for a rendezvous, answers) receive q with a
// message from src.
func (r *Rank) deliver(p *sim.Proc, q *request, src, tag, kind, n int, data mem.Region) {
	q.status = stacks.Status{Source: src, Tag: tag, Len: min(n, q.buf.Len)}
	if n > q.buf.Len {
		q.err = fmt.Errorf("mpi-t3d: rank %d: message of %d bytes from rank %d truncated to the %d-byte receive buffer", r.rank, n, src, q.buf.Len)
	}
	switch kind {
	case kShort, kEager:
		r.cpu.Memcpy(p, q.buf.Addr, data.Addr, min(n, q.buf.Len))
		if kind == kEager {
			r.erel[src]++
			r.m.PutWord(p, r.rank, src, r.w.ranks[src].ctlAddr(r.rank)+8, r.erel[src])
		} else if data.Len > 0 && (data.Addr < r.rings.Addr || data.Addr >= r.rings.Addr+mem.Addr(r.rings.Len)) {
			// an unexpected message's copy: give its buffer back
			r.free = append(r.free, mem.Region{Mem: data.Mem, Addr: data.Addr, Len: max(data.Len, r.w.params.ShortBytes)})
		}
		q.done = true
	case kRTS:
		if r.waitFIN[src] != nil { // one rendezvous at a time per sender
			r.pendCTS[src] = append(r.pendCTS[src], q)
			return
		}
		r.clearToSend(p, src, q)
	}
}

// clearToSend puts the clear-to-send block for receive q into sender src's
// memory: the receive buffer's address, then a count (low 32 bits) and the
// number of the send it answers (high 32 bits).
func (r *Rank) clearToSend(p *sim.Proc, src int, q *request) {
	r.ctsSent[src]++
	r.storeWords(p, uint64(q.buf.Addr), r.ctsSent[src]&0xffffffff|q.seq<<32)
	r.m.Put(p, r.rank, src, r.w.ranks[src].ctlAddr(r.rank)+16, r.stage.Addr, 16)
	r.waitFIN[src] = q
}

// progress is the progress engine: it consumes every packet that has
// arrived, then moves rendezvous sends whose clear-to-send has come.
func (r *Rank) progress(p *sim.Proc) error {
	if r.busy {
		return nil
	}
	r.busy = true
	defer func() { r.busy = false }()
	slots := uint64(r.w.params.Slots)
	for {
		found := false
		loads := 0
		for s := 0; s < r.size; s++ {
			a := r.slot(s, int(r.recvd[s]%slots))
			loads++
			if r.rings.Mem.Load64(a) != r.recvd[s]+1 {
				continue
			}
			r.cpu.Compute(p, float64(loads)*(r.uncached()+pollCycles)+2*r.uncached())
			loads = 0
			found = true
			w, n, extra := r.rings.Mem.Load64(a+8), int(r.rings.Mem.Load64(a+16)), r.rings.Mem.Load64(a+24)
			kind, tag := int(w&0xff), int(int32(uint32(w>>8)))
			r.cpu.Compute(p, packetCycles)
			if err := r.handle(p, s, kind, tag, n, extra, mem.Region{Mem: r.rings.Mem, Addr: a + hdrBytes, Len: min(n, r.w.params.ShortBytes)}); err != nil {
				return err
			}
			r.recvd[s]++
			r.m.PutWord(p, r.rank, s, r.w.ranks[s].ctlAddr(r.rank), r.recvd[s])
		}
		r.cpu.Compute(p, float64(loads)*(r.uncached()+pollCycles))
		for i := 0; i < len(r.sends); i++ {
			q := r.sends[i]
			cts := r.ctlAddr(q.peer)
			word := r.cpu.LoadUncached(p, cts+24, 8)
			if word&0xffffffff == r.ctsGot[q.peer]&0xffffffff || word>>32 != q.seq {
				continue
			}
			r.ctsGot[q.peer]++
			addr := mem.Addr(r.cpu.LoadUncached(p, cts+16, 8))
			r.sends = append(r.sends[:i], r.sends[i+1:]...)
			i--
			r.m.Put(p, r.rank, q.peer, addr, q.buf.Addr, q.buf.Len)
			r.m.Quiet(p, r.rank)
			r.busy = false
			err := r.sendPacket(p, q.peer, kFIN, q.tag, q.buf.Len, 0, mem.Region{})
			r.busy = true
			if err != nil {
				return err
			}
			q.done = true
			found = true
		}
		if !found {
			return nil
		}
	}
}

// handle acts on one incoming packet from s.
func (r *Rank) handle(p *sim.Proc, s, kind, tag, n int, extra uint64, inline mem.Region) error {
	if kind == kFIN {
		q := r.waitFIN[s]
		if q == nil {
			return fmt.Errorf("mpi-t3d: rank %d: FIN from rank %d with no rendezvous in progress", r.rank, s)
		}
		r.waitFIN[s] = nil
		q.done = true
		if k := len(r.pendCTS[s]); k > 0 {
			next := r.pendCTS[s][0]
			r.pendCTS[s] = r.pendCTS[s][1:]
			r.clearToSend(p, s, next)
		}
		return nil
	}
	data := inline
	if kind == kEager {
		data = mem.Region{Mem: r.eager.Mem, Addr: r.eagerBuf(s), Len: n}
	}
	for i, q := range r.posted {
		if match(q, s, tag) {
			r.posted = append(r.posted[:i], r.posted[i+1:]...)
			q.seq = extra
			r.deliver(p, q, s, tag, kind, n, data)
			return nil
		}
	}
	// Unexpected: the data is copied out of the ring slot or the eager
	// buffer into a temporary buffer, and an eager buffer is released at
	// once (otherwise two ranks sending eagerly to each other before
	// receiving would wait for each other for ever).
	u := &request{peer: s, tag: tag, kind: kind, n: n, data: data, seq: extra}
	if (kind == kShort || kind == kEager) && n > 0 {
		b, err := r.unexpBuffer(n)
		if err != nil {
			return err
		}
		r.cpu.Memcpy(p, b.Addr, data.Addr, n)
		u.data = b
	}
	if kind == kEager {
		u.kind = kShort // now a copied-out message, like a short one
		r.erel[s]++
		r.m.PutWord(p, r.rank, s, r.w.ranks[s].ctlAddr(r.rank)+8, r.erel[s])
	}
	r.unexp = append(r.unexp, u)
	return nil
}

// unexpBuffer returns a temporary buffer of n bytes for an unexpected
// message.
func (r *Rank) unexpBuffer(n int) (mem.Region, error) {
	for i, b := range r.free {
		if b.Len >= n {
			r.free = append(r.free[:i], r.free[i+1:]...)
			return b.Slice(0, n), nil
		}
	}
	b, err := r.m.Alloc(r.rank, "mpi.unexpected", max(n, r.w.params.ShortBytes))
	if err != nil {
		return mem.Region{}, fmt.Errorf("mpi-t3d: rank %d: unexpected-message buffer: %w", r.rank, err)
	}
	return b.Slice(0, n), nil
}

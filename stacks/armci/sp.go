package armci

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/machines/lapi"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// The SP port (armci-sp.txt 2.4, Figure 3).

// GetS is ARMCI_GetS: s.Src is at proc, s.Dst here.
func (r *Rank) GetS(p *sim.Proc, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.get(p, segs, &s, proc)
}

// GetV is ARMCI_GetV.
func (r *Rank) GetV(p *sim.Proc, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.get(p, segs, nil, proc)
}

// PutS is ARMCI_PutS: s.Src here, s.Dst at proc.
func (r *Rank) PutS(p *sim.Proc, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.put(p, opPut, 0, 0, segs, &s, proc)
}

// PutV is ARMCI_PutV.
func (r *Rank) PutV(p *sim.Proc, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.put(p, opPut, 0, 0, segs, nil, proc)
}

// AccS is ARMCI_AccS: dst at proc = dst + scale*src.
func (r *Rank) AccS(p *sim.Proc, t stacks.AccType, scale complex128, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	if err := checkAcc(t, segs); err != nil {
		return err
	}
	return r.put(p, opAcc, t, scale, segs, &s, proc)
}

// AccV is ARMCI_AccV.
func (r *Rank) AccV(p *sim.Proc, t stacks.AccType, scale complex128, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	if err := checkAcc(t, segs); err != nil {
		return err
	}
	return r.put(p, opAcc, t, scale, segs, nil, proc)
}

func checkAcc(t stacks.AccType, segs []seg) error {
	if t.Size() == 0 {
		return fmt.Errorf("armci: accumulate of unknown type %d", t)
	}
	for _, s := range segs {
		if s.n%t.Size() != 0 {
			return fmt.Errorf("armci: accumulate block of %d bytes is not a whole number of %d-byte elements", s.n, t.Size())
		}
	}
	return nil
}

// chunks splits segs into transfers whose data fits in limit bytes and
// whose vector descriptor fits in descMax (blocks larger than limit are
// cut, at a multiple of elem bytes).
func chunks(segs []seg, limit, elem int) [][]seg {
	limit -= limit % elem
	var out [][]seg
	var cur []seg
	n := 0
	maxBlocks := (descMax - 6) / 12
	for _, s := range segs {
		for s.n > 0 {
			k := min(s.n, limit-n)
			if k <= 0 || len(cur) == maxBlocks {
				out, cur, n = append(out, cur), nil, 0
				continue
			}
			cur = append(cur, seg{src: s.src, dst: s.dst, n: k})
			n += k
			s.src += mem.Addr(k)
			s.dst += mem.Addr(k)
			s.n -= k
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// get moves segs (src at proc, dst here).
func (r *Rank) get(p *sim.Proc, segs []seg, s *stacks.Strided, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	m := r.w.m
	if proc == r.id {
		for _, g := range segs {
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
		}
		return nil
	}
	r.order(p, proc)
	if r.useLAPI(segs) {
		// Nonblocking LAPI_Gets, one per block, and one wait.
		for _, g := range segs {
			m.GetCounted(p, r.id, proc, g.dst, g.src, g.n, nil, r.getC)
		}
		m.Waitcntr(p, r.id, r.getC, len(segs))
		return nil
	}
	// One active message per buffer-full: the remote completion handler
	// packs and LAPI_Puts the data back into r.out; then it is unpacked.
	parts := chunks(segs, r.w.par.BufferBytes, 1)
	for _, c := range parts {
		var desc []byte
		if s != nil && len(parts) == 1 {
			desc = encodeStrided(nil, s.Src, s.SrcStride, s.Count)
		} else {
			desc = encodeVector(nil, c, true)
		}
		r.cpu.Update(p, r.out.Addr, len(desc), float64(descCyclesPerBlock*len(c)), func(b []byte) { copy(b, desc) })
		uh := makeUhdr(opGet, 0, 0, r.id, r.out.Addr, 0, 0, len(desc))
		m.Amsend(p, r.id, proc, r.w.ranks[proc].hh, uh, r.out.Addr, len(desc), nil, nil, nil)
		m.Waitcntr(p, r.id, r.reply, 1)
		off := 0
		for _, g := range c {
			r.cpu.Memcpy(p, g.dst, r.out.Addr+mem.Addr(off), g.n)
			off += g.n
		}
	}
	return nil
}

// put moves segs (src here, dst at proc) as a put (op opPut) or an
// accumulate (opAcc). It returns at local completion.
func (r *Rank) put(p *sim.Proc, op byte, t stacks.AccType, scale complex128, segs []seg, s *stacks.Strided, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	m := r.w.m
	if proc == r.id {
		if op == opAcc {
			r.accLocal(p, t, scale, segs, func(g seg) mem.Addr { return g.src })
			return nil
		}
		for _, g := range segs {
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
		}
		return nil
	}
	r.order(p, proc)
	if op == opPut && r.useLAPI(segs) {
		for _, g := range segs {
			m.PutCounted(p, r.id, proc, g.dst, g.src, g.n, nil, nil, r.cmpl[proc])
			r.issued[proc]++
		}
		return nil
	}
	elem := 1
	if op == opAcc {
		elem = t.Size()
	}
	parts := chunks(segs, r.w.par.BufferBytes, elem)
	for _, c := range parts {
		r.order(p, proc) // in order, and the remote buffer is free again
		var desc []byte
		if s != nil && len(parts) == 1 {
			desc = encodeStrided(nil, s.Dst, s.DstStride, s.Count)
		} else {
			desc = encodeVector(nil, c, false)
		}
		r.cpu.Compute(p, float64(descCyclesPerBlock*len(c)))
		r.out.Mem.Write(r.out.Addr, desc)
		off := len(desc)
		for _, g := range c {
			r.cpu.Memcpy(p, r.out.Addr+mem.Addr(off), g.src, g.n)
			off += g.n
		}
		if op == opPut && off <= r.w.par.ShortPutBytes {
			// Short: the descriptor and the data ride in the user header,
			// which LAPI_Amsend takes from the buffer (the program leaves
			// the buffer's bytes as they are).
			uh := makeUhdr(opPutShort, 0, 0, r.id, 0, 0, 0, len(desc))
			r.cpu.Update(p, r.out.Addr, off, 0, func(b []byte) { uh = append(uh, b...) })
			m.Amsend(p, r.id, proc, r.w.ranks[proc].hh, uh, 0, 0, nil, nil, r.cmpl[proc])
			r.issued[proc]++
			continue
		}
		uh := makeUhdr(op, t, 0, r.id, 0, scale, 0, len(desc))
		m.Amsend(p, r.id, proc, r.w.ranks[proc].hh, uh, r.out.Addr, off, nil, nil, r.cmpl[proc])
		r.issued[proc]++
	}
	return nil
}

// accLocal accumulates into this rank's memory under its mutex; src is
// where a block's operand is. The blocks are combined in turn and their
// work charged as one.
func (r *Rank) accLocal(p *sim.Proc, t stacks.AccType, scale complex128, segs []seg, src func(seg) mem.Addr) {
	m := r.w.m
	m.Lock(p, &r.mu)
	elems := 0
	f := func(x, y []byte) { accumulate(t, scale, x, y) }
	for _, g := range segs {
		r.cpu.Reduce(p, g.dst, src(g), g.n, t.Size(), 0, f)
		elems += g.n / t.Size()
	}
	r.cpu.Compute(p, float64(accCyclesPerElem*elems))
	m.Unlock(p, &r.mu)
}

// Rmw is ARMCI_Rmw: an active message whose handler updates the word at
// the owner under its mutex and sends the old value back.
func (r *Rank) Rmw(p *sim.Proc, op stacks.RmwOp, proc int, a mem.Addr, v int64) (int64, error) {
	if err := r.check(proc); err != nil {
		return 0, err
	}
	if op != stacks.FetchAndAdd && op != stacks.Swap {
		return 0, fmt.Errorf("armci: unknown read-modify-write operator %d", op)
	}
	if proc == r.id {
		return r.rmwLocal(p, op, a, v), nil
	}
	r.order(p, proc)
	m := r.w.m
	uh := makeUhdr(opRmw, 0, op, r.id, a, 0, v, 0)
	m.Amsend(p, r.id, proc, r.w.ranks[proc].hh, uh, 0, 0, nil, nil, nil)
	m.Waitcntr(p, r.id, r.reply, 1)
	return r.rmwValue, nil
}

func (r *Rank) rmwLocal(p *sim.Proc, op stacks.RmwOp, a mem.Addr, v int64) int64 {
	m := r.w.m
	m.Lock(p, &r.mu)
	old := int64(r.cpu.Load(p, a, 8))
	nv := v
	if op == stacks.FetchAndAdd {
		nv = old + v
	}
	r.cpu.Store(p, a, 8, uint64(nv))
	m.Unlock(p, &r.mu)
	return old
}

// header is this rank's LAPI header handler for ARMCI's active messages.
func (r *Rank) header(p *sim.Proc, a *lapi.AM) (mem.Addr, lapi.AMCompletion) {
	switch a.Uhdr[0] {
	case opBarrier:
		return 0, nil
	case opRmwReply:
		r.rmwValue = int64(binary.LittleEndian.Uint64(a.Uhdr[32:]))
		return 0, nil
	case opRmw:
		return 0, r.rmwServe
	case opGet, opPut, opAcc:
		return r.inbuf[a.Src].Addr, r.serve
	case opPutShort:
		r.putShort(p, a)
		return 0, nil
	}
	r.w.m.Engine().Fail(fmt.Errorf("armci: rank %d: active message of unknown kind %d from rank %d", r.id, a.Uhdr[0], a.Src))
	return 0, nil
}

// serve is the completion handler of a get, put or accumulate from
// another rank: its descriptor (and data) are in inbuf[a.Src].
func (r *Rank) serve(p *sim.Proc, a *lapi.AM) {
	m := r.w.m
	le := binary.LittleEndian
	in := r.inbuf[a.Src]
	dlen := int(le.Uint32(a.Uhdr[40:]))
	desc := make([]byte, dlen)
	r.cpu.Update(p, in.Addr, dlen, 0, func(b []byte) { copy(desc, b) })
	blocks, _, err := decode(desc)
	if err != nil {
		m.Engine().Fail(fmt.Errorf("armci: rank %d serving rank %d: %w", r.id, a.Src, err))
		return
	}
	r.cpu.Compute(p, float64(descCyclesPerBlock*len(blocks)))
	switch a.Uhdr[0] {
	case opGet:
		// Figure 3: pack the section and put it back in full packets.
		off := 0
		for _, b := range blocks {
			r.cpu.Memcpy(p, r.pack.Addr+mem.Addr(off), b.src, b.n)
			off += b.n
		}
		origin := int(le.Uint32(a.Uhdr[4:]))
		m.PutCounted(p, r.id, origin, mem.Addr(le.Uint64(a.Uhdr[8:])), r.pack.Addr, off, r.w.ranks[origin].reply, nil, nil)
	case opPut:
		off := dlen
		for _, b := range blocks {
			r.cpu.Memcpy(p, b.dst, in.Addr+mem.Addr(off), b.n)
			off += b.n
		}
	case opAcc:
		t := stacks.AccType(a.Uhdr[1])
		scale := complex(math.Float64frombits(le.Uint64(a.Uhdr[16:])), math.Float64frombits(le.Uint64(a.Uhdr[24:])))
		off := in.Addr + mem.Addr(dlen)
		r.accLocal(p, t, scale, blocks, func(g seg) mem.Addr {
			a := off
			off += mem.Addr(g.n)
			return a
		})
	}
}

// rmwServe is the completion handler of a read-modify-write.
func (r *Rank) rmwServe(p *sim.Proc, a *lapi.AM) {
	le := binary.LittleEndian
	origin := int(le.Uint32(a.Uhdr[4:]))
	old := r.rmwLocal(p, stacks.RmwOp(a.Uhdr[2]), mem.Addr(le.Uint64(a.Uhdr[8:])), int64(le.Uint64(a.Uhdr[32:])))
	o := r.w.ranks[origin]
	r.w.m.Amsend(p, r.id, origin, o.hh, makeUhdr(opRmwReply, 0, 0, r.id, 0, 0, old, 0), 0, 0, o.reply, nil, nil)
}

// putShort stores a short put in the header handler: the user header
// (descriptor and data) is in LAPI's receive FIFO, modelled as the
// source's inbuf, whence each block is copied to its place.
func (r *Rank) putShort(p *sim.Proc, a *lapi.AM) {
	le := binary.LittleEndian
	in := r.inbuf[a.Src]
	body := a.Uhdr[uhdrLen:]
	r.cpu.Update(p, in.Addr, len(body), 0, func(b []byte) { copy(b, body) })
	blocks, _, err := decode(body)
	if err != nil {
		r.w.m.Engine().Fail(fmt.Errorf("armci: rank %d: short put from rank %d: %w", r.id, a.Src, err))
		return
	}
	r.cpu.Compute(p, float64(descCyclesPerBlock*len(blocks)))
	off := int(le.Uint32(a.Uhdr[40:]))
	for _, b := range blocks {
		r.cpu.Memcpy(p, b.dst, in.Addr+mem.Addr(off), b.n)
		off += b.n
	}
}

package scampi

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// barrierArea is a rank's barrier structures, in its memory (mapped for
// remote writes, or shared within its node: its children and its parent
// write there): one arrival
// word per child, each written by that child only, and one release word,
// written by the parent only. Every word holds the number of the barrier
// (its epoch), so a repeated write changes nothing (idempotent).
type barrierArea struct {
	arrive  mem.Region // fan-in words
	release mem.Region
	out     mem.Region // the value this rank writes (its source)
	epoch   uint64
	pending bool   // posted writes not yet secured
	tok     uint64 // the checkpoint taken before them
	dests   []barrierDest
}

func (w *world) allocBarrier() error {
	f := w.p.BarrierFanIn
	n := len(w.ranks)
	for _, x := range w.ranks {
		// Written by the parent and the children: remotely if one of them
		// is on another node.
		remote := x.id > 0 && w.ranks[(x.id-1)/f].node != x.node
		for c := f*x.id + 1; c <= f*x.id+f && c < n; c++ {
			remote = remote || w.ranks[c].node != x.node
		}
		seg, err := w.area(nil, x.id, x.id, remote, fmt.Sprintf("scampi.barrier.%d", x.id), 8*f+16)
		if err != nil {
			return fmt.Errorf("scampi: barrier of rank %d: %w", x.id, err)
		}
		x.bar.arrive = seg.Slice(0, 8*f)
		x.bar.release = seg.Slice(8*f, 8)
		x.bar.out = seg.Slice(8*f+8, 8)
	}
	return nil
}

// Barrier is ScaMPI's barrier (scampi-sci.txt 1.6.1: "a fixed fanin/fanout
// tree and operates directly on SCI shared memory"): a tree of fan-in
// barrier_fanin over the ranks (rank 0 the root, the children of i being
// f*i+1 .. f*i+f). A rank waits until each child has written the
// barrier's epoch into its arrival word (local polling), writes it into
// its parent's arrival word, waits for its release word, and writes the
// epoch into each child's release word. Remote writes are posted and
// secured (MemBarrier, EndCheckPoint, again on failure) while the rank
// would wait anyway, off the critical path.
func (x *Rank) Barrier(p *sim.Proc) error {
	w := x.w
	if x.err != nil {
		return x.err
	}
	// The MPI call and the tree's bookkeeping: assumed to cost what a
	// send's software does (send_cycles); not calibrated.
	x.cpu.Compute(p, w.p.SendCycles)
	b := &x.bar
	b.epoch++
	e := b.epoch
	f := w.p.BarrierFanIn
	n := len(w.ranks)
	// Fan in.
	for k := 0; k < f; k++ {
		if c := f*x.id + 1 + k; c < n {
			x.waitWord(p, b.arrive.Addr+mem.Addr(8*k), e, fmt.Sprintf("barrier %d: arrival of child rank %d", e, c))
		}
	}
	if x.id > 0 {
		parent := w.ranks[(x.id-1)/f]
		x.barrierWrite(p, parent, parent.bar.arrive.Addr+mem.Addr(8*((x.id-1)%f)), e)
		x.secureBarrier(p)
		x.waitWord(p, b.release.Addr, e, fmt.Sprintf("barrier %d: release by rank %d", e, parent.id))
	}
	// Fan out.
	for k := 0; k < f; k++ {
		if c := f*x.id + 1 + k; c < n {
			child := w.ranks[c]
			x.barrierWrite(p, child, child.bar.release.Addr, e)
		}
	}
	x.secureBarrier(p)
	return nil
}

// waitWord polls the local word at a until it holds v. The word is
// written by another CPU or the adapter, whose write invalidates the
// poller's cached copy: a poll after it is a memory access
// (LoadUncached).
func (x *Rank) waitWord(p *sim.Proc, a mem.Addr, v uint64, reason string) {
	x.cpu.SpinUntil(p, sim.Reason(fmt.Sprintf("scampi rank %d: %s", x.id, reason)), func() bool {
		return x.cpu.LoadUncached(p, a, 8) == v
	}, a)
}

// barrierWrite writes v into the word at a of rank to's node: a store
// within the node, a posted remote write otherwise.
func (x *Rank) barrierWrite(p *sim.Proc, to *Rank, a mem.Addr, v uint64) {
	if to.node == x.node {
		x.cpu.Store(p, a, 8, v)
		return
	}
	b := &x.bar
	if !b.pending {
		if x.w.cp != nil {
			b.tok = x.w.cp.StartCheckPoint(p, x.id)
		}
		b.pending = true
	}
	x.cpu.Update(p, b.out.Addr, 8, 0, func(b []byte) { binary.LittleEndian.PutUint64(b, v) })
	x.w.rw.Put(p, x.id, to.id, a, b.out.Addr, 8)
	x.bar.dests = append(x.bar.dests, barrierDest{to, a})
}

// secureBarrier finishes Figure 1.2's loop for the barrier's posted
// writes, writing them again until the checkpoint succeeds (MemBarrier
// alone without checkpoints).
func (x *Rank) secureBarrier(p *sim.Proc) {
	b := &x.bar
	if !b.pending {
		return
	}
	w := x.w
	for {
		if w.p.MemBarrier {
			w.rw.Quiet(p, x.id)
		}
		if w.cp == nil || w.cp.EndCheckPoint(p, x.id, b.tok) {
			p.Engine().Progress()
			break
		}
		w.counts.Retries++
		p.Engine().Retry(p, "its barrier flags (checkpointed, Figure 1.2's loop)")
		b.tok = w.cp.StartCheckPoint(p, x.id)
		for _, d := range b.dests {
			w.rw.Put(p, x.id, d.to.id, d.a, b.out.Addr, 8)
		}
	}
	b.pending = false
	b.dests = b.dests[:0]
}

type barrierDest struct {
	to *Rank
	a  mem.Addr
}

// Alltoall is MPI_Alltoall of blocks of block bytes: sbuf holds one block
// per rank, rbuf receives one from each. The rank's own block is copied
// locally. Two algorithms, switched at alltoall_switch_nodes ranks (1.6.2:
// "The shift in performance between 8 and 16 nodes is caused by a change
// of the algorithm"):
//
//   - below it, post-all: every receive and every send is posted at once,
//     sends in the order rank+1, rank+2, ... (so that no rank is everyone's
//     first destination) and completed together: every pair's data flows
//     at the same time, which the SCI network carries at full speed while
//     the load per ringlet is small ("For up to 8 nodes, the SCI network
//     delivers sufficient throughput for all nodes to communicate at full
//     speed");
//   - from it on, pairwise exchange (the shift algorithm of Bokhari's
//     complete exchange, as in MPICH's MPI_Alltoall for long messages): in
//     step k = 1 .. N-1 each rank sends to rank+k and receives from rank-k,
//     one pair at a time, so that each node injects one stream and every
//     ringlet carries the same shifted load, rather than N-1 streams
//     competing for the ringlets and the receivers' buffers.
func (x *Rank) Alltoall(p *sim.Proc, sbuf, rbuf mem.Region, block int) error {
	n := len(x.w.ranks)
	if sbuf.Len < n*block || rbuf.Len < n*block {
		return fmt.Errorf("scampi: rank %d: alltoall of %d-byte blocks on %d ranks needs %d-byte buffers, got %d and %d", x.id, block, n, n*block, sbuf.Len, rbuf.Len)
	}
	blk := func(r mem.Region, i int) mem.Region { return r.Slice(i*block, block) }
	x.memcpy(p, rbuf.Addr+mem.Addr(x.id*block), sbuf.Addr+mem.Addr(x.id*block), block)
	const tag = -100 // a tag no user message uses
	if n < x.w.p.AlltoallSwitchNodes {
		reqs := make([]stacks.Request, 0, 2*(n-1))
		for k := 1; k < n; k++ {
			q, err := x.Irecv(p, blk(rbuf, (x.id-k+n)%n), (x.id-k+n)%n, tag)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		for k := 1; k < n; k++ {
			q, err := x.Isend(p, blk(sbuf, (x.id+k)%n), (x.id+k)%n, tag)
			if err != nil {
				return err
			}
			reqs = append(reqs, q)
		}
		for _, q := range reqs {
			if _, err := q.Wait(p); err != nil {
				return err
			}
		}
		return nil
	}
	for k := 1; k < n; k++ {
		to, from := (x.id+k)%n, (x.id-k+n)%n
		rq, err := x.Irecv(p, blk(rbuf, from), from, tag)
		if err != nil {
			return err
		}
		sq, err := x.Isend(p, blk(sbuf, to), to, tag)
		if err != nil {
			return err
		}
		if _, err := sq.Wait(p); err != nil {
			return err
		}
		if _, err := rq.Wait(p); err != nil {
			return err
		}
	}
	return nil
}

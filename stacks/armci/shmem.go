package armci

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// The SHMEM port (armci-sp.txt 2.4: "on the Cray T3E the requesting
// processor performs the calculations (by locking memory, copying data,
// accumulating, putting updated data back and unlocking) without
// interrupting the data owner"; "Mutual exclusion ... with ... the atomic
// swap on the Cray T3E"), here on the T3D: every block is one shmem_put or
// shmem_get; accumulate and read-modify-write are done by the requester
// under a lock at the owner built from the remote atomic swap. Operations
// to one rank complete in issue order (2.3) without ordering code: a
// shmem_put returns only once its last byte has left the PE; everything
// one PE sends another takes the one route of the T3D's deterministic
// dimension-order routing, on the same virtual channels, and a link serves
// the units from one input port first come first served, so a later put
// or a get's request cannot pass an earlier put; accumulate and
// read-modify-write end with shmem_quiet (the lock's release). A machine
// whose network could reorder one PE's traffic to another would need what
// the SP port does (order). TestPortsOrdering checks it. Fence is
// shmem_quiet.

// SHMEM is what the SHMEM port needs of a machine.
type SHMEM interface {
	machines.RemoteWrite
	machines.RemoteRead
	machines.Swap
	machines.Barrier
}

const shmemCapability = "SHMEM: one-sided put with quiet, get, remote atomic swap and a barrier (machines.RemoteWrite, machines.RemoteRead, machines.Swap, machines.Barrier)"

// lockBackoffCycles is the pause between two attempts at a held lock.
// Assumed: 100 cycles (a short spin before the next remote swap).
const lockBackoffCycles = 100

type shmemWorld struct {
	m      SHMEM
	par    Params
	ranks  []*shmemRank
	allocs [][]mem.Addr
}

// shmemRank is one PE's ARMCI on SHMEM.
type shmemRank struct {
	w       *shmemWorld
	id      int
	cpu     *mem.CPU
	lock    mem.Addr   // this PE's lock word (the same address on every PE)
	tmp     mem.Region // the requester's copy of a block being accumulated
	nallocs int
}

func openSHMEM(m SHMEM, par Params, out *stacks.World) error {
	w := &shmemWorld{m: m, par: par}
	for i := 0; i < m.Procs(); i++ {
		r := &shmemRank{w: w, id: i, cpu: m.CPU(i)}
		l, err := m.Alloc(i, "armci lock", 8)
		if err != nil {
			return fmt.Errorf("armci: %w", err)
		}
		r.lock = l.Addr
		if r.tmp, err = m.Alloc(i, "armci buffer", par.BufferBytes); err != nil {
			return fmt.Errorf("armci: %w", err)
		}
		w.ranks = append(w.ranks, r)
		out.Ranks = append(out.Ranks, r)
	}
	return nil
}

func (r *shmemRank) Rank() int                        { return r.id }
func (r *shmemRank) Size() int                        { return len(r.w.ranks) }
func (r *shmemRank) CPU() *mem.CPU                    { return r.cpu }
func (r *shmemRank) Buffer(n int) (mem.Region, error) { return r.w.m.Alloc(r.id, "user", n) }

// Malloc: the same allocations in the same order give the same address
// on every PE (shmalloc); the table is filled and all meet at the barrier.
func (r *shmemRank) Malloc(p *sim.Proc, n int) ([]mem.Addr, error) {
	reg, err := r.w.m.Alloc(r.id, "armci malloc", n)
	if err != nil {
		return nil, fmt.Errorf("armci: ARMCI_Malloc of %d bytes on rank %d: %w", n, r.id, err)
	}
	row := publish(&r.w.allocs, r.nallocs, r.id, len(r.w.ranks), reg.Addr)
	r.nallocs++
	r.Barrier(p)
	return row, nil
}

func (r *shmemRank) Free(p *sim.Proc, addrs []mem.Addr) error {
	if len(addrs) != len(r.w.ranks) {
		return fmt.Errorf("armci: ARMCI_Free of %d addresses, want %d", len(addrs), len(r.w.ranks))
	}
	r.AllFence(p)
	r.Barrier(p)
	return nil
}

// Barrier is the machine's barrier.
func (r *shmemRank) Barrier(p *sim.Proc) { r.w.m.Barrier(p, r.id) }

// Fence is shmem_quiet (it waits for every put of the PE, to any rank).
func (r *shmemRank) Fence(p *sim.Proc, proc int) { r.w.m.Quiet(p, r.id) }

// AllFence is shmem_quiet.
func (r *shmemRank) AllFence(p *sim.Proc) { r.w.m.Quiet(p, r.id) }

func (r *shmemRank) check(proc int) error {
	if proc < 0 || proc >= len(r.w.ranks) {
		return fmt.Errorf("armci: rank %d: no rank %d (%d ranks)", r.id, proc, len(r.w.ranks))
	}
	return nil
}

func (r *shmemRank) GetS(p *sim.Proc, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.get(p, segs, proc)
}

func (r *shmemRank) GetV(p *sim.Proc, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.get(p, segs, proc)
}

func (r *shmemRank) PutS(p *sim.Proc, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.put(p, segs, proc)
}

func (r *shmemRank) PutV(p *sim.Proc, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.put(p, segs, proc)
}

func (r *shmemRank) AccS(p *sim.Proc, t stacks.AccType, scale complex128, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.acc(p, t, scale, segs, proc)
}

func (r *shmemRank) AccV(p *sim.Proc, t stacks.AccType, scale complex128, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.acc(p, t, scale, segs, proc)
}

// get: one shmem_get per block (the local case a copy).
func (r *shmemRank) get(p *sim.Proc, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	for _, g := range segs {
		if proc == r.id {
			// Remote puts may have left this PE's cached lines stale.
			r.cpu.InvalidateRange(p, g.src, g.n)
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
			continue
		}
		r.w.m.Get(p, r.id, proc, g.dst, g.src, g.n)
	}
	return nil
}

// put: one shmem_put per block; it returns at local completion.
func (r *shmemRank) put(p *sim.Proc, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	for _, g := range segs {
		if proc == r.id {
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
			continue
		}
		r.w.m.Put(p, r.id, proc, g.dst, g.src, g.n)
	}
	return nil
}

// lockAt takes proc's lock: swap in 1 until the old value is 0 (a failed
// attempt swaps 1 for 1 and changes nothing).
func (r *shmemRank) lockAt(p *sim.Proc, proc int) {
	for r.w.m.Swap(p, r.id, proc, r.w.ranks[proc].lock, 1) != 0 {
		r.cpu.Compute(p, lockBackoffCycles)
	}
}

// unlockAt releases proc's lock once every put is delivered.
func (r *shmemRank) unlockAt(p *sim.Proc, proc int) {
	r.w.m.Quiet(p, r.id)
	if old := r.w.m.Swap(p, r.id, proc, r.w.ranks[proc].lock, 0); old != 1 {
		r.w.m.Engine().Fail(fmt.Errorf("armci: rank %d released rank %d's lock, which was not held (%d)", r.id, proc, old))
	}
}

// acc: the requester locks the owner's memory, gets each block, adds,
// puts it back, and unlocks.
func (r *shmemRank) acc(p *sim.Proc, t stacks.AccType, scale complex128, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	if err := checkAcc(t, segs); err != nil {
		return err
	}
	m := r.w.m
	r.lockAt(p, proc)
	for _, c := range chunks(segs, r.w.par.BufferBytes, t.Size()) {
		for _, g := range c {
			// shmem_get and shmem_put also to this PE itself: the data
			// then bypasses this PE's cache, which remote writes leave
			// stale (the T3D's caches are not coherent with them).
			m.Get(p, r.id, proc, r.tmp.Addr, g.dst, g.n)
			r.cpu.InvalidateRange(p, r.tmp.Addr, g.n)
			x, y := make([]byte, g.n), make([]byte, g.n)
			r.cpu.Peek(r.tmp.Addr, x)
			r.cpu.Peek(g.src, y)
			accumulate(t, scale, x, y)
			r.cpu.Compute(p, float64(accCyclesPerElem*g.n/t.Size()))
			r.cpu.Poke(r.tmp.Addr, x)
			m.Put(p, r.id, proc, g.dst, r.tmp.Addr, g.n)
			m.Quiet(p, r.id) // tmp is reused for the next block
		}
	}
	r.unlockAt(p, proc)
	return nil
}

// Rmw: under the owner's lock, get the word, update it, put it back.
func (r *shmemRank) Rmw(p *sim.Proc, op stacks.RmwOp, proc int, a mem.Addr, v int64) (int64, error) {
	if err := r.check(proc); err != nil {
		return 0, err
	}
	if op != stacks.FetchAndAdd && op != stacks.Swap {
		return 0, fmt.Errorf("armci: unknown read-modify-write operator %d", op)
	}
	m := r.w.m
	r.lockAt(p, proc)
	m.Get(p, r.id, proc, r.tmp.Addr, a, 8)
	r.cpu.InvalidateRange(p, r.tmp.Addr, 8)
	old := int64(r.cpu.Load(p, r.tmp.Addr, 8))
	nv := v
	if op == stacks.FetchAndAdd {
		nv = old + v
	}
	r.cpu.Store(p, r.tmp.Addr, 8, uint64(nv))
	r.cpu.Fence(p)
	m.Put(p, r.id, proc, a, r.tmp.Addr, 8)
	r.unlockAt(p, proc)
	return old, nil
}

package armci

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// The shared-memory port (armci-sp.txt 2.4: "On shared memory systems,
// ARMCI operations currently require the remote data to be located in
// shared memory ... allowing the library to use simply an optimized memory
// copy"; "Mutual exclusion is implemented using vendor-specific locks ...,
// System V semaphores (Unix)"), on the shared-segments verb when every
// process runs on one node (an SX-4 node; a Power Challenge; an SCI
// node's processors):
// ARMCI_Malloc places every rank's part in a segment of the node's shared
// memory; a get or put is one library memcpy per block
// (machines.Memcpy: on the SX-4 a vector move, which bypasses the
// non-coherent scalar caches and is visible to every processor when it
// returns: local and remote completion at once, so operations to one rank
// complete in issue order (2.3) with no ordering code,
// TestPortsOrdering); accumulate and read-modify-write run under the
// owner's lock: a test-and-set lock whose release is PKT_READY_SET (store
// made visible after every earlier store), or a System V semaphore (param
// lock, the semaphores verb). The shared words (lock, barrier, the
// read-modify-write's word) are read from memory (uncached loads) behind
// non-coherent caches, with plain loads where the hardware keeps caches
// coherent (the Power Challenge's snooping bus, whose "vendor-specific
// locks (on SGI ...)" are LL/SC on a cached word). The barrier is a
// counter in shared memory or, as the paper's programs did, zero-byte messages of a
// message-passing stack on the same machine (param barrier; the registry
// gives MPICH, see MessagePassing).

// The NEC-supplied synchronization routines of papers/mpich-sx4.txt
// section 5 ("We solve the cache coherency problem by using vector move
// instructions ... which bypass the cache. We solve the sequential
// consistency problem by using the NEC routines for the critical
// operations of setting and testing the bit"), as this port's own code
// from the CPU's operations.

// readySet is PKT_READY_SET: it stores v into the word at a so that every
// earlier store of this process is visible first and the word itself is
// visible on return (sync, store, sync).
func readySet(p *sim.Proc, c machines.Processor, a mem.Addr, v uint64) {
	c.Fence(p)
	c.Store(p, a, 8, v)
	c.Fence(p)
}

// readyIsSet is PKT_READY_IS_SET: it reads the word at a from memory, not
// from a (stale) copy in the cache.
func readyIsSet(p *sim.Proc, c machines.Processor, a mem.Addr) bool {
	return syncLoad(p, c, a) != 0
}

// syncLoad reads a word other processes write: from memory (an uncached
// load), or, where the hardware keeps caches coherent (Processor.Coherent:
// a bus-snooping SMP), a plain load, which sees the last store.
func syncLoad(p *sim.Proc, c machines.Processor, a mem.Addr) uint64 {
	if c.Coherent() {
		return c.Load(p, a, 8)
	}
	return c.LoadUncached(p, a, 8)
}

type shmWorld struct {
	m      machines.SharedSegments
	node   int // the node every process runs on
	par    Params
	ranks  []*shmRank
	allocs [][]mem.Addr
	// sync is a shared segment: one lock word per rank, then the barrier's
	// lock, count and sense words.
	sync mem.Region
	// sems are, with lock: sysv, one semaphore per rank, then the
	// barrier's (indexed as the lock words).
	sems    []int
	semops  machines.Semaphores
	mpi     []stacks.Comm // with a message-passing barrier, the message-passing stack's ranks
	mpiZero []mem.Region  // a zero-byte buffer per rank for them
}

func (w *shmWorld) lockWord(rank int) mem.Addr { return w.sync.Addr + mem.Addr(8*rank) }
func (w *shmWorld) barrierWord(i int) mem.Addr {
	return w.sync.Addr + mem.Addr(8*(len(w.ranks)+i))
}

// shmRank is one process's ARMCI on shared memory.
type shmRank struct {
	w       *shmWorld
	id      int
	cpu     machines.Processor
	tmp     mem.Region
	nallocs int
	sense   uint64
}

func openShared(m machines.SharedSegments, par Params, mp MessagePassing, out *stacks.World) error {
	w := &shmWorld{m: m, node: m.NodeOf(0), par: par}
	var err error
	if w.sync, err = m.SharedSegment(w.node, "armci sync", 8*(m.Procs()+3)); err != nil {
		return fmt.Errorf("armci: %w", err)
	}
	if par.Lock == LockSysV {
		sem, err := machines.Need[machines.Semaphores](m, user+" with lock: sysv", machines.VerbSemaphores)
		if err != nil {
			return err
		}
		w.semops = sem
		for i := 0; i <= m.Procs(); i++ {
			w.sems = append(w.sems, sem.Semget(fmt.Sprintf("armci lock %d", i), 1))
		}
	}
	if par.Barrier != BarrierShared {
		if mp == nil {
			return fmt.Errorf("armci: barrier %s: no message-passing stack was given to open on %s", par.Barrier, m.Name())
		}
		mw, err := mp(m)
		if err != nil {
			return fmt.Errorf("armci: barrier %s: message passing on %s: %w", par.Barrier, m.Name(), err)
		}
		if w.mpi, err = stacks.As[stacks.Comm](mw, "ARMCI (stack armci, barrier: "+par.Barrier+")", "message passing (stacks.Comm)"); err != nil {
			return err
		}
		for _, c := range w.mpi {
			z, err := c.Buffer(0)
			if err != nil {
				return fmt.Errorf("armci: %w", err)
			}
			w.mpiZero = append(w.mpiZero, z)
		}
	}
	for i := 0; i < m.Procs(); i++ {
		r := &shmRank{w: w, id: i, cpu: machines.ProcessorOf(m, i)}
		if r.tmp, err = m.Alloc(i, "armci buffer", par.BufferBytes); err != nil {
			return fmt.Errorf("armci: %w", err)
		}
		w.ranks = append(w.ranks, r)
		out.Ranks = append(out.Ranks, r)
	}
	return nil
}

func (r *shmRank) Rank() int                        { return r.id }
func (r *shmRank) Size() int                        { return len(r.w.ranks) }
func (r *shmRank) CPU() *mem.CPU                    { return r.w.m.CPU(r.id) }
func (r *shmRank) Buffer(n int) (mem.Region, error) { return r.w.m.Alloc(r.id, "user", n) }

// Malloc: each rank creates a shared segment for its part (shmget), writes
// its address in the table, and all meet at the barrier.
func (r *shmRank) Malloc(p *sim.Proc, n int) ([]mem.Addr, error) {
	seg, err := r.w.m.SharedSegment(r.w.node, fmt.Sprintf("armci rank %d", r.id), n)
	if err != nil {
		return nil, fmt.Errorf("armci: ARMCI_Malloc of %d bytes on rank %d: %w", n, r.id, err)
	}
	row := publish(&r.w.allocs, r.nallocs, r.id, len(r.w.ranks), seg.Addr)
	r.nallocs++
	r.Barrier(p)
	return row, nil
}

func (r *shmRank) Free(p *sim.Proc, addrs []mem.Addr) error {
	if len(addrs) != len(r.w.ranks) {
		return fmt.Errorf("armci: ARMCI_Free of %d addresses, want %d", len(addrs), len(r.w.ranks))
	}
	r.Barrier(p)
	return nil
}

// lock takes lock i (rank i's, or the barrier's for i = ranks): a System
// V semaphore (P, a system call that sleeps while it is held) or the
// test-and-set lock at its word, spinning (syncLoad) while held.
func (r *shmRank) lock(p *sim.Proc, i int) error {
	if r.w.sems != nil {
		if err := r.w.semops.Semop(p, r.id, r.w.sems[i], -1); err != nil {
			return fmt.Errorf("armci: lock: %w", err)
		}
		return nil
	}
	a := r.w.lockWord(i)
	for r.cpu.TestAndSet(p, a) != 0 {
		r.cpu.SpinUntil(p, sim.Reason("armci: a lock held by another process"), func() bool { return !readyIsSet(p, r.cpu, a) }, a)
	}
	return nil
}

// unlock releases lock i: V on the semaphore (a system call, which drains
// the caller's stores first), or the test-and-set word cleared after
// every earlier store (PKT_READY_SET).
func (r *shmRank) unlock(p *sim.Proc, i int) error {
	if r.w.sems != nil {
		if err := r.w.semops.Semop(p, r.id, r.w.sems[i], +1); err != nil {
			return fmt.Errorf("armci: unlock: %w", err)
		}
		return nil
	}
	readySet(p, r.cpu, r.w.lockWord(i), 0)
	return nil
}

// Barrier synchronizes every rank: by messages (barrier: message-passing)
// or in shared memory.
func (r *shmRank) Barrier(p *sim.Proc) {
	if r.w.mpi != nil {
		barrier := r.msgBarrier
		if r.w.par.Barrier == BarrierRecDbl {
			barrier = r.recBarrier
		}
		if err := barrier(p); err != nil {
			p.Engine().Fail(err)
		}
		return
	}
	if err := r.shmBarrier(p); err != nil {
		p.Engine().Fail(err)
	}
}

// msgBarrier: every rank sends a zero-byte MPICH message to rank 0, which
// answers each once all have arrived (the naive message-passing barrier).
func (r *shmRank) msgBarrier(p *sim.Proc) error {
	c, z, n := r.w.mpi[r.id], r.w.mpiZero[r.id], len(r.w.ranks)
	const arrive, release = 1, 2
	if r.id != 0 {
		if err := c.Send(p, z, 0, arrive); err != nil {
			return fmt.Errorf("armci: barrier: %w", err)
		}
		if _, err := c.Recv(p, z, 0, release); err != nil {
			return fmt.Errorf("armci: barrier: %w", err)
		}
		return nil
	}
	for i := 1; i < n; i++ {
		if _, err := c.Recv(p, z, stacks.AnySource, arrive); err != nil {
			return fmt.Errorf("armci: barrier: %w", err)
		}
	}
	for i := 1; i < n; i++ {
		if err := c.Send(p, z, i, release); err != nil {
			return fmt.Errorf("armci: barrier: %w", err)
		}
	}
	return nil
}

// recBarrier is MPICH 1's MPI_Barrier pattern: with m the largest power
// of two not above n, rank m+i first reports to rank i; ranks below m
// exchange zero-byte messages with rank xor 1, 2, ..., m/2 (a Sendrecv:
// Isend, Recv, Wait); then rank i releases rank m+i.
func (r *shmRank) recBarrier(p *sim.Proc) error {
	c, z, n := r.w.mpi[r.id], r.w.mpiZero[r.id], len(r.w.ranks)
	const fold, round, unfold = 4, 5, 6
	m := 1
	for 2*m <= n {
		m *= 2
	}
	wrap := func(err error) error { return fmt.Errorf("armci: barrier: %w", err) }
	if r.id >= m {
		if err := c.Send(p, z, r.id-m, fold); err != nil {
			return wrap(err)
		}
		if _, err := c.Recv(p, z, r.id-m, unfold); err != nil {
			return wrap(err)
		}
		return nil
	}
	if r.id+m < n {
		if _, err := c.Recv(p, z, r.id+m, fold); err != nil {
			return wrap(err)
		}
	}
	for d := 1; d < m; d <<= 1 {
		peer := r.id ^ d
		rq, err := c.Isend(p, z, peer, round)
		if err != nil {
			return wrap(err)
		}
		if _, err := c.Recv(p, z, peer, round); err != nil {
			return wrap(err)
		}
		if _, err := rq.Wait(p); err != nil {
			return wrap(err)
		}
	}
	if r.id+m < n {
		if err := c.Send(p, z, r.id+m, unfold); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// shmBarrier is a sense-reversing counter barrier in the shared segment.
func (r *shmRank) shmBarrier(p *sim.Proc) error {
	w := r.w
	lk, count, sense := len(w.ranks), w.barrierWord(1), w.barrierWord(2)
	r.sense ^= 1
	if err := r.lock(p, lk); err != nil {
		return err
	}
	c := syncLoad(p, r.cpu, count) + 1
	if int(c) == len(w.ranks) {
		readySet(p, r.cpu, count, 0)
		readySet(p, r.cpu, sense, r.sense)
		return r.unlock(p, lk)
	}
	readySet(p, r.cpu, count, c)
	if err := r.unlock(p, lk); err != nil {
		return err
	}
	r.cpu.SpinUntil(p, sim.Reason("armci: barrier"), func() bool { return syncLoad(p, r.cpu, sense) == r.sense }, sense)
	return nil
}

// Fence and AllFence: a put is complete at the target when it returns.
func (r *shmRank) Fence(p *sim.Proc, proc int) {}
func (r *shmRank) AllFence(p *sim.Proc)        {}

func (r *shmRank) check(proc int) error {
	if proc < 0 || proc >= len(r.w.ranks) {
		return fmt.Errorf("armci: rank %d: no rank %d (%d ranks)", r.id, proc, len(r.w.ranks))
	}
	return nil
}

// copySegs moves every block with the library memcpy.
func (r *shmRank) copySegs(p *sim.Proc, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	for _, g := range segs {
		machines.Memcpy(r.w.m, p, r.id, g.dst, g.src, g.n)
	}
	return nil
}

func (r *shmRank) GetS(p *sim.Proc, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.copySegs(p, segs, proc)
}

func (r *shmRank) GetV(p *sim.Proc, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.copySegs(p, segs, proc)
}

func (r *shmRank) PutS(p *sim.Proc, s stacks.Strided, proc int) error { return r.GetS(p, s, proc) }
func (r *shmRank) PutV(p *sim.Proc, v []stacks.GIOV, proc int) error  { return r.GetV(p, v, proc) }

func (r *shmRank) AccS(p *sim.Proc, t stacks.AccType, scale complex128, s stacks.Strided, proc int) error {
	segs, err := stridedSegs(s)
	if err != nil {
		return err
	}
	return r.acc(p, t, scale, segs, proc)
}

func (r *shmRank) AccV(p *sim.Proc, t stacks.AccType, scale complex128, v []stacks.GIOV, proc int) error {
	segs, err := vectorSegs(v)
	if err != nil {
		return err
	}
	return r.acc(p, t, scale, segs, proc)
}

// acc: under the owner's lock, each block is moved into a private buffer
// by the library memcpy (on the SX-4 a vector move: the shared data is
// read from memory, not a stale cache line), added to, and moved back.
func (r *shmRank) acc(p *sim.Proc, t stacks.AccType, scale complex128, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	if err := checkAcc(t, segs); err != nil {
		return err
	}
	m := r.w.m
	if err := r.lock(p, proc); err != nil {
		return err
	}
	for _, c := range chunks(segs, r.w.par.BufferBytes, t.Size()) {
		for _, g := range c {
			machines.Memcpy(m, p, r.id, r.tmp.Addr, g.dst, g.n)
			r.cpu.Reduce(p, r.tmp.Addr, g.src, g.n, t.Size(), float64(accCyclesPerElem*g.n/t.Size()), func(x, y []byte) {
				accumulate(t, scale, x, y)
			})
			machines.Memcpy(m, p, r.id, g.dst, r.tmp.Addr, g.n)
		}
	}
	return r.unlock(p, proc)
}

// Rmw: under the owner's lock, an uncached load and a visible store.
func (r *shmRank) Rmw(p *sim.Proc, op stacks.RmwOp, proc int, a mem.Addr, v int64) (int64, error) {
	if err := r.check(proc); err != nil {
		return 0, err
	}
	if op != stacks.FetchAndAdd && op != stacks.Swap {
		return 0, fmt.Errorf("armci: unknown read-modify-write operator %d", op)
	}
	if err := r.lock(p, proc); err != nil {
		return 0, err
	}
	old := int64(syncLoad(p, r.cpu, a))
	nv := v
	if op == stacks.FetchAndAdd {
		nv = old + v
	}
	readySet(p, r.cpu, a, uint64(nv))
	return old, r.unlock(p, proc)
}

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
// swap on the Cray T3E"), on the remote-write and remote-read verbs: every
// block is one put or get; accumulate and read-modify-write are done by
// the requester under a lock at the owner, with get and put.
//
// The lock is the owner's lock word taken with the remote swap where the
// machine has one (the T3D); else a ticket lock on the remote
// fetch-and-increment (the PCI-SCI adapter's only atomic): the requester
// takes a ticket at the owner and waits until the owner's now-serving word
// equals it; the releaser writes the next ticket's number there.
//
// The barrier is the machine's barrier network where it has one; else a
// dissemination barrier of remote writes: in round k every rank writes the
// barrier's episode into flag k of rank id+2^k and waits for its own flag
// k, polling it with uncached loads.
//
// Ordering (2.3): operations to one rank complete in issue order. A put
// returns when its source may be reused, its data still on the way, and
// a machine without OrderedWrites promises nothing of the order in which
// one process's remote operations land (an SCI fabric reorders packets),
// so there an operation to a rank with a put still outstanding first waits
// for it (Quiet, the only completion the verbs offer: it waits for every
// put of the process). Gets, and accumulates and read-modify-writes
// (whose lock release waits for their puts), leave nothing outstanding;
// operations to different ranks wait for nothing. Fence and AllFence are
// Quiet.
type shmemVerbs struct {
	machines.RemoteWrite // the machine itself (MapRemote asks it whether it maps)
	rd                   machines.RemoteRead
	swap                 machines.Swap           // nil: the ticket lock on fi
	fi                   machines.RemoteFetchInc // the ticket lock's atomic
	bar                  machines.Barrier        // nil: the barrier of remote writes
}

// shmemVerbsOf returns m's verbs for the SHMEM port, and whether it has
// them: remote write and read, and a swap or a remote
// fetch-and-increment.
func shmemVerbsOf(m machines.Machine) (shmemVerbs, bool) {
	rw, okw := m.(machines.RemoteWrite)
	rd, okr := m.(machines.RemoteRead)
	sw, _ := m.(machines.Swap)
	fi, _ := m.(machines.RemoteFetchInc)
	bar, _ := m.(machines.Barrier)
	if !okw || !okr || (sw == nil && fi == nil) {
		return shmemVerbs{}, false
	}
	return shmemVerbs{RemoteWrite: rw, rd: rd, swap: sw, fi: fi, bar: bar}, true
}

// lockBackoffCycles is the pause between two attempts at a held lock (a
// swap, or a read of a remote now-serving word). Assumed: 100 cycles (a
// short spin before the next remote operation).
const lockBackoffCycles = 100

// The ticket lock's words at its owner.
const (
	ticketWord  = 0 // the next ticket (fetch-and-increment)
	servingWord = 8 // the ticket being served
)

type shmemWorld struct {
	m      shmemVerbs
	par    Params
	ranks  []*shmemRank
	allocs [][]mem.Addr
	rounds int // the dissemination barrier's rounds (without a barrier verb)
	// cachedPolls makes the dissemination barrier poll its flags through
	// the cache: on a machine whose caches do not see remote writes the
	// run then ends in a livelock report (the tests' check that the spin
	// honours the cache model).
	cachedPolls bool
	// inOrder: the machine lands a process's writes to another in issue
	// order (machines.OrderedWrites): no Quiet is needed to keep them so.
	inOrder bool
}

// shmemRank is one process's ARMCI on the SHMEM port.
type shmemRank struct {
	w       *shmemWorld
	id      int
	cpu     machines.Processor
	lock    mem.Addr   // this rank's lock word(s)
	tmp     mem.Region // the requester's copy of a block being accumulated
	flags   mem.Addr   // the dissemination barrier's flag words, one per round
	episode uint64     // barriers passed
	ticket  uint64     // the ticket of the lock this rank holds
	nallocs int
	// pending[j]: a put to rank j may not have landed (issued since the
	// last Quiet); flagged[j]: a barrier flag to rank j may not have.
	pending, flagged []bool
	npend            int // marks set since the last Quiet
}

func openSHMEM(m shmemVerbs, par Params, out *stacks.World) error {
	_, inOrder := m.RemoteWrite.(machines.OrderedWrites)
	w := &shmemWorld{m: m, par: par, inOrder: inOrder}
	n := m.Procs()
	if m.bar == nil {
		for d := 1; d < n; d *= 2 {
			w.rounds++
		}
	}
	lockBytes := 8
	if m.swap == nil {
		lockBytes = 16
	}
	for i := 0; i < n; i++ {
		r := &shmemRank{w: w, id: i, cpu: machines.ProcessorOf(m, i), pending: make([]bool, n), flagged: make([]bool, n)}
		// Words others reach remotely are mapped where the machine must map
		// them (set-up: no cost).
		l, err := machines.MapRemote(m.RemoteWrite, nil, i, i, "armci lock", lockBytes)
		if err != nil {
			return fmt.Errorf("armci: %w", err)
		}
		r.lock = l.Addr
		if r.tmp, err = m.Alloc(i, "armci buffer", par.BufferBytes); err != nil {
			return fmt.Errorf("armci: %w", err)
		}
		if w.rounds > 0 {
			f, err := machines.MapRemote(m.RemoteWrite, nil, i, i, "armci barrier", 8*w.rounds)
			if err != nil {
				return fmt.Errorf("armci: %w", err)
			}
			r.flags = f.Addr
		}
		w.ranks = append(w.ranks, r)
		out.Ranks = append(out.Ranks, r)
	}
	return nil
}

func (r *shmemRank) Rank() int                        { return r.id }
func (r *shmemRank) Size() int                        { return len(r.w.ranks) }
func (r *shmemRank) CPU() *mem.CPU                    { return r.w.m.CPU(r.id) }
func (r *shmemRank) Buffer(n int) (mem.Region, error) { return r.w.m.Alloc(r.id, "user", n) }

// Malloc: the same allocations in the same order give the same address
// on every PE (shmalloc; memory mapped for remote access where the
// machine must map it, each rank paying for its own); the table is filled
// and all meet at the barrier.
func (r *shmemRank) Malloc(p *sim.Proc, n int) ([]mem.Addr, error) {
	reg, err := machines.MapRemote(r.w.m.RemoteWrite, p, r.id, r.id, "armci malloc", n)
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

// quiet waits until every put of this rank has landed.
func (r *shmemRank) quiet(p *sim.Proc) {
	r.w.m.Quiet(p, r.id)
	if r.npend > 0 {
		clear(r.pending)
		clear(r.flagged)
		r.npend = 0
	}
}

// order applies the ordering rule before an operation to proc: it waits
// for the puts still outstanding there, if any, unless the machine lands
// one process's writes to another in issue order (machines.OrderedWrites).
func (r *shmemRank) order(p *sim.Proc, proc int) {
	if r.pending[proc] && !r.w.inOrder {
		r.quiet(p)
	}
}

// wrote notes a put to proc that may not have landed.
func (r *shmemRank) wrote(proc int) {
	r.pending[proc] = true
	r.npend++
}

// Fence is Quiet (it waits for every put of the rank, to any rank).
func (r *shmemRank) Fence(p *sim.Proc, proc int) { r.quiet(p) }

// AllFence is Quiet.
func (r *shmemRank) AllFence(p *sim.Proc) { r.quiet(p) }

// Barrier is the machine's barrier, or the dissemination barrier of
// remote writes.
func (r *shmemRank) Barrier(p *sim.Proc) {
	if b := r.w.m.bar; b != nil {
		b.Barrier(p, r.id)
		return
	}
	r.episode++
	n := len(r.w.ranks)
	for k, d := 0, 1; d < n; k, d = k+1, 2*d {
		to := (r.id + d) % n
		flag := r.flags + mem.Addr(8*k)
		// The flag lands after the previous episode's flag to the same
		// word (which the partner may have passed before it landed): the
		// episodes written there only grow. (The barrier orders no
		// ARMCI operation: those wait for their own puts only.)
		if r.flagged[to] {
			r.quiet(p)
		}
		r.w.m.PutWord(p, r.id, to, r.w.ranks[to].flags+mem.Addr(8*k), r.episode)
		r.flagged[to] = true
		r.npend++
		load := r.cpu.LoadUncached
		if r.w.cachedPolls {
			load = r.cpu.Load
		}
		r.cpu.SpinUntil(p, sim.Reason("armci: dissemination barrier"), func() bool { return load(p, flag, 8) >= r.episode }, flag)
	}
}

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

// get: one remote read per block (the local case a copy).
func (r *shmemRank) get(p *sim.Proc, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	r.order(p, proc)
	for _, g := range segs {
		if proc == r.id {
			// Remote puts may have left this rank's cached lines stale.
			r.cpu.InvalidateRange(p, g.src, g.n)
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
			continue
		}
		r.w.m.rd.Get(p, r.id, proc, g.dst, g.src, g.n)
	}
	return nil
}

// put: one remote write per block; it returns at local completion.
func (r *shmemRank) put(p *sim.Proc, segs []seg, proc int) error {
	if err := r.check(proc); err != nil {
		return err
	}
	r.order(p, proc)
	for _, g := range segs {
		if proc == r.id {
			r.cpu.Memcpy(p, g.dst, g.src, g.n)
			continue
		}
		r.w.m.Put(p, r.id, proc, g.dst, g.src, g.n)
		r.wrote(proc)
	}
	return nil
}

// lockAt takes proc's lock.
func (r *shmemRank) lockAt(p *sim.Proc, proc int) {
	m, lk := r.w.m, r.w.ranks[proc].lock
	if m.swap != nil {
		// Swap in 1 until the old value is 0 (a failed attempt swaps 1
		// for 1 and changes nothing).
		for m.swap.Swap(p, r.id, proc, lk, 1) != 0 {
			r.cpu.Compute(p, lockBackoffCycles)
		}
		return
	}
	// A ticket, then wait until it is served: at this rank's own lock by
	// polling the word with uncached loads (the releaser's remote write
	// lands in this rank's memory), at another's by reading it remotely.
	t := m.fi.FetchIncAt(p, r.id, proc, lk+ticketWord)
	r.ticket = t
	serving := lk + servingWord
	if proc == r.id {
		r.cpu.SpinUntil(p, sim.Reason("armci: a ticket lock held by another process"), func() bool { return r.cpu.LoadUncached(p, serving, 8) == t }, serving)
		return
	}
	for {
		m.rd.Get(p, r.id, proc, r.tmp.Addr, serving, 8)
		if r.cpu.LoadUncached(p, r.tmp.Addr, 8) == t {
			return
		}
		r.cpu.Compute(p, lockBackoffCycles)
	}
}

// unlockAt releases proc's lock once every put is delivered: a swap of 0,
// or the next ticket's number written to the now-serving word. That write
// orders nothing: the next holder waits until it has landed, and so does
// this rank's next release of the lock (it must hold a later ticket).
func (r *shmemRank) unlockAt(p *sim.Proc, proc int) {
	m, lk := r.w.m, r.w.ranks[proc].lock
	r.quiet(p)
	if m.swap != nil {
		if old := m.swap.Swap(p, r.id, proc, lk, 0); old != 1 {
			m.Engine().Fail(fmt.Errorf("armci: rank %d released rank %d's lock, which was not held (%d)", r.id, proc, old))
		}
		return
	}
	m.PutWord(p, r.id, proc, lk+servingWord, r.ticket+1)
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
	r.order(p, proc)
	r.lockAt(p, proc)
	for _, c := range chunks(segs, r.w.par.BufferBytes, t.Size()) {
		for _, g := range c {
			// Get and put also to this rank itself: the data then bypasses
			// this rank's cache, which remote writes may leave stale (the
			// T3D's caches are not coherent with them).
			m.rd.Get(p, r.id, proc, r.tmp.Addr, g.dst, g.n)
			r.cpu.InvalidateRange(p, r.tmp.Addr, g.n)
			r.cpu.Reduce(p, r.tmp.Addr, g.src, g.n, t.Size(), float64(accCyclesPerElem*g.n/t.Size()), func(x, y []byte) {
				accumulate(t, scale, x, y)
			})
			m.Put(p, r.id, proc, g.dst, r.tmp.Addr, g.n)
			r.quiet(p) // tmp is reused for the next block
		}
	}
	r.unlockAt(p, proc)
	return nil
}

// Rmw: under the owner's lock, get the word, update it, put it back (a
// swap too: the lock makes it atomic against the other read-modify-writes
// and accumulates).
func (r *shmemRank) Rmw(p *sim.Proc, op stacks.RmwOp, proc int, a mem.Addr, v int64) (int64, error) {
	if err := r.check(proc); err != nil {
		return 0, err
	}
	if op != stacks.FetchAndAdd && op != stacks.Swap {
		return 0, fmt.Errorf("armci: unknown read-modify-write operator %d", op)
	}
	m := r.w.m
	r.order(p, proc)
	r.lockAt(p, proc)
	m.rd.Get(p, r.id, proc, r.tmp.Addr, a, 8)
	r.cpu.InvalidateRange(p, r.tmp.Addr, 8)
	old := int64(r.cpu.Load(p, r.tmp.Addr, 8))
	nv := v
	if op == stacks.FetchAndAdd {
		nv = old + v
	}
	r.cpu.Store(p, r.tmp.Addr, 8, uint64(nv))
	r.cpu.Fence(p)
	m.Put(p, r.id, proc, a, r.tmp.Addr, 8)
	r.wrote(proc)
	r.unlockAt(p, proc)
	return old, nil
}

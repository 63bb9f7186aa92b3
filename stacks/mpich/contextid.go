package mpich

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Context ids (papers/mpich2-threads.txt section 5). A message carries its
// communicator's context id in the high 32 bits of the tag word of its
// envelope, so a receive on one communicator never matches a message sent
// on another. MPI_COMM_WORLD has context id 0: its messages are exactly
// those of a build without communicators.
const (
	ctxShift = 32
	maxTag   = 1 << 31 // MPI_TAG_UB + 1
	// ContextIDs is the number of context ids a process can hold: "32
	// 32-bit integers will cover 1024 context ids" (section 5.3).
	ContextIDs = 1024
	maskWords  = ContextIDs / 64
	maskBytes  = 8 * maskWords
	// maxContextRetries bounds the retries of one context-id allocation:
	// past it the run is reported as a livelock (the naive algorithm of
	// 5.2, or a broken Figure 3). Assumed: 1000 retries of an allreduce
	// that succeeds at the first try in the common case (5.3). A schedule
	// explorer finds a livelock sooner, as a repeated state (stateRepeat).
	maxContextRetries = 1000
	// collTag is the tag of the allreduce's messages (on the input
	// communicator's context, so collectives on different communicators
	// never meet).
	collTag = maxTag - 1
	// maskCycles is the software work of scanning or updating the mask
	// (16 words): assumed 50 cycles.
	maskCycles = 50
	// Figure 3's global variables in the process's memory ("stored in
	// global memory (shared among the threads of a process)", section
	// 5.3): the mask, then mask_in_use, then lowestContextId.
	offInUse      = maskBytes
	offLowest     = maskBytes + 8
	ctxBlockBytes = maskBytes + 16
)

// Context-id algorithms (Params.ContextIDs), and the planted bugs tests use.
const (
	ContextSingle    = "single"
	ContextMulti     = "multi"
	ContextNaiveLock = "naive-lock"
	ContextNaiveTwo  = "naive-two"
	// bugNoLowest drops Figure 3's lowestContextId rule (a livelock);
	// bugEarlyRelease is Figure 3 with the lock released before
	// mask_in_use is set (lock, test mask_in_use, copy the mask, unlock,
	// compute, then set mask_in_use and lowestContextId): the code order
	// the paper's "sets the flags ... Then it releases the lock" rules
	// out. Two threads can both find the mask free and take the same id.
	bugNoLowest     = "bug-no-lowest"
	bugEarlyRelease = "bug-early-release"
)

// Allreduce algorithms (Params.Allreduce).
const (
	AllreduceLinear            = "linear"
	AllreduceRecursiveDoubling = "recursive-doubling"
)

var contextAlgorithms = []string{ContextMulti, ContextSingle, ContextNaiveLock, ContextNaiveTwo}

func wireTag(tag, ctx int) int {
	if tag < 0 {
		return tag
	}
	return ctx<<ctxShift | tag
}

func userTag(t int) int {
	if t < 0 {
		return t
	}
	return t & (1<<ctxShift - 1)
}

// ctxState is a process's context-id allocator: Figure 3's global
// variables, shared among its threads.
type ctxState struct {
	// base is the address of the variables in the process's memory
	// (offInUse, offLowest; the mask at base, bit set: context id
	// available), allocated by the first MPI_Comm_dup (ctxVars).
	base      mem.Addr
	allocated bool
	// stored is what the process's program last stored in the variables
	// (ctxVars, ctxStore), word by word: what the livelock checks
	// compare, which are the simulator's, not the protocol's, and read no
	// memory.
	stored     [ctxBlockBytes / 8]uint64
	lock       *threadMutex
	world      *Comm
	dups       int
	variant    string   // algorithm (params, or a planted bug in tests)
	maxRetries int      // retries before a livelock is reported
	contention int      // allocations that needed more than one allreduce
	active     []dupper // threads inside MPI_Comm_dup (livelock reports)
}

// dupper is a thread allocating a context id for a duplicate of context ctx.
type dupper struct {
	p   *sim.Proc
	ctx int
}

func (r *Rank) initContexts() {
	c := &r.ctx
	c.variant = r.w.params.ContextIDs
	c.maxRetries = maxContextRetries
	c.world = &Comm{r: r, ctx: 0}
}

// ctxVars allocates Figure 3's global variables in the process's memory
// the first time a communicator is duplicated, initialised as the paper
// says (every context id available but 0, MPI_COMM_WORLD's; mask_in_use
// 0; lowestContextId MAXINT): a run that never duplicates allocates
// nothing.
func (r *Rank) ctxVars() error {
	s := &r.ctx
	if s.allocated {
		return nil
	}
	b, err := r.w.host.Alloc(r.rank, "context ids", ctxBlockBytes)
	if err != nil {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_dup: %w", r.rank, err)
	}
	for i := 0; i < maskWords; i++ {
		w := ^uint64(0)
		if i == 0 {
			w &^= 1 // context id 0: MPI_COMM_WORLD
		}
		s.stored[i] = w
	}
	s.stored[offLowest/8] = ContextIDs
	r.cpu.Update(nil, b.Addr, ctxBlockBytes, 0, func(raw []byte) {
		for i, w := range s.stored {
			binary.LittleEndian.PutUint64(raw[8*i:], w)
		}
	})
	s.base, s.allocated = b.Addr, true
	return nil
}

// ctxLoad and ctxStore are the CPU's loads and stores of a word of the
// context-id variables (offInUse, offLowest, a word of the mask).
func (r *Rank) ctxLoad(p *sim.Proc, off int) uint64 {
	return r.cpu.Load(p, r.ctx.base+mem.Addr(off), 8)
}

func (r *Rank) ctxStore(p *sim.Proc, off int, v uint64) {
	r.cpu.Store(p, r.ctx.base+mem.Addr(off), 8, v)
	r.ctx.stored[off/8] = v
}

// readMask is local_mask = mask: a copy of the mask into the
// communicator's allreduce send buffer, read back from there.
func (c *Comm) readMask(p *sim.Proc) ([maskWords]uint64, error) {
	r := c.r
	if err := c.buffers(); err != nil {
		return [maskWords]uint64{}, err
	}
	r.cpu.Memcpy(p, c.buf[0].Addr, r.ctx.base, maskBytes)
	return c.get(p, c.buf[0]), nil
}

// storedMask is the mask as the program last stored it: for the livelock
// checks, which are the simulator's, not the protocol's.
func (r *Rank) storedMask() (m [maskWords]uint64) {
	copy(m[:], r.ctx.stored[:maskWords])
	return m
}

// Retries is the number of context-id allocations on this process that
// needed more than one allreduce.
func (r *Rank) Retries() int { return r.ctx.contention }

// Comm is a communicator of one process: MPI_COMM_WORLD or one returned by
// Dup. Its messages carry its context id.
type Comm struct {
	r    *Rank
	ctx  int
	refs int // reference count (section 4.1), atomic under thread locks
	ref  mem.Addr
	obj  mem.Addr      // MPICH2 (ch3:sock): the MPID_Comm object (commobj.go)
	buf  [2]mem.Region // the allreduce's send and receive buffers
}

// World is MPI_COMM_WORLD of this process (a *Comm).
func (r *Rank) World() stacks.Communicator { return r.ctx.world }

// ContextID is the communicator's context id.
func (c *Comm) ContextID() int { return c.ctx }

// Rank is the process's rank in the communicator.
func (c *Comm) Rank() int { return c.r.rank }

// Size is the number of processes (every communicator spans them all:
// only MPI_Comm_dup creates communicators).
func (c *Comm) Size() int { return c.r.Size() }

// Send is MPI_Send on the communicator.
func (c *Comm) Send(p *sim.Proc, buf mem.Region, dest, tag int) error {
	return c.r.send(p, buf, dest, tag, c.ctx)
}

// Recv is MPI_Recv on the communicator (AnySource and AnyTag match only
// its messages).
func (c *Comm) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	return c.r.recv(p, buf, src, tag, c.ctx)
}

// addRef changes the reference count by delta (section 4.1): with thread
// locks an atomic fetch-and-add on the count's word, otherwise a load and
// a store.
func (c *Comm) addRef(p *sim.Proc, delta int) {
	cpu := c.r.cpu
	if c.r.th.locks {
		cpu.FetchAdd(p, c.ref, uint64(delta))
	} else {
		cpu.Store(p, c.ref, 8, cpu.Load(p, c.ref, 8)+uint64(delta))
	}
	c.refs += delta
}

// Free is MPI_Comm_free: the reference is dropped and, at zero, the context
// id returned to the mask. With MPICH2's MPI layer (ch3:sock) it is the
// binding and MPIR_Comm_release (commobj.go).
func (c *Comm) Free(p *sim.Proc) error {
	r := c.r
	if c.ctx == 0 {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_free of MPI_COMM_WORLD", r.rank)
	}
	if c.refs <= 0 {
		return fmt.Errorf("mpich: rank %d: MPI_Comm_free of communicator %d, already freed", r.rank, c.ctx)
	}
	if r.mpich2() {
		if err := r.enter(p, "MPI_Comm_free"); err != nil {
			return err
		}
		defer r.exit(p)
		r.cpu.Compute(p, bindingCycles)
		return c.release(p)
	}
	c.addRef(p, -1)
	if c.refs > 0 {
		return nil
	}
	r.freeContextID(p, c.ctx)
	return nil
}

// freeContextID is MPIR_Free_contextid: the id's bit set again in the
// mask, under the context-id lock.
func (r *Rank) freeContextID(p *sim.Proc, id int) {
	r.ctxLock(p)
	w := (id / 64) * 8
	r.ctxStore(p, w, r.ctxLoad(p, w)|1<<(id%64))
	r.ctxUnlock(p)
}

func (r *Rank) ctxLock(p *sim.Proc) {
	if r.th.locks {
		r.ctx.lock.lockAt(p, r, "(context id)")
	}
}

func (r *Rank) ctxUnlock(p *sim.Proc) {
	if r.th.locks {
		r.ctx.lock.unlock(p)
	}
}

// DuplicateContextError: two communicators of one process got the same
// context id (a broken algorithm).
type DuplicateContextError struct {
	Rank, ID int
	Thread   string
	At       sim.Time
}

func (e *DuplicateContextError) Error() string {
	return fmt.Sprintf("mpich: rank %d: %s got context id %d at %v, which another communicator of the process holds", e.Rank, e.Thread, e.ID, e.At)
}

// Dup is MPI_Comm_dup: a new communicator over the same processes with a
// context id agreed by all of them (Params.ContextIDs chooses the
// algorithm). It is collective: every process calls it, and the threads of
// a process call it on different communicators. The new communicator is a
// *Comm.
func (c *Comm) Dup(p *sim.Proc) (stacks.Communicator, error) {
	r := c.r
	if err := r.enter(p, "MPI_Comm_dup"); err != nil {
		return nil, err
	}
	defer r.exit(p)
	r.ctx.active = append(r.ctx.active, dupper{p, c.ctx})
	defer func() {
		for i, d := range r.ctx.active {
			if d.p == p {
				r.ctx.active = append(r.ctx.active[:i], r.ctx.active[i+1:]...)
				break
			}
		}
	}()
	if err := r.ctxVars(); err != nil {
		return nil, err
	}
	if r.mpich2() {
		// MPICH2: the binding, then MPIR_Comm_copy, which agrees on the
		// context id first (commobj.go).
		if err := r.mpirInit(); err != nil {
			return nil, err
		}
		r.cpu.Compute(p, bindingCycles+callCycles)
		r.cpu.Load(p, c.obj+commKind, 8) // an intracommunicator: MPIR_Get_contextid
	}
	var id int
	var err error
	switch r.ctx.variant {
	case ContextSingle:
		id, err = c.ctxSingle(p)
	case ContextNaiveLock:
		id, err = c.ctxNaiveLock(p)
	case ContextNaiveTwo:
		id, err = c.ctxNaiveTwo(p)
	default:
		id, err = c.ctxMulti(p)
	}
	if err != nil {
		return nil, err
	}
	if r.mpich2() {
		n, err := c.commCopy(p, id)
		if err != nil {
			return nil, err
		}
		return n, nil
	}
	n, err := r.newComm(p, id)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (r *Rank) newComm(p *sim.Proc, id int) (*Comm, error) {
	r.ctx.dups++
	b, err := r.w.host.Alloc(r.rank, fmt.Sprintf("comm%d", r.ctx.dups), 8+2*maskBytes)
	if err != nil {
		return nil, fmt.Errorf("mpich: rank %d: MPI_Comm_dup: %w", r.rank, err)
	}
	n := &Comm{r: r, ctx: id, ref: b.Addr}
	n.buf[0], n.buf[1] = b.Slice(8, maskBytes), b.Slice(8+maskBytes, maskBytes)
	n.addRef(p, 1)
	return n, nil
}

// take claims context id id in the mask (the lock held, or no threads);
// a bit already clear means another communicator holds it.
func (r *Rank) take(p *sim.Proc, id int) error {
	w, b := (id/64)*8, uint64(1)<<(id%64)
	v := r.ctxLoad(p, w)
	if v&b == 0 {
		return &DuplicateContextError{Rank: r.rank, ID: id, Thread: p.Name(), At: p.Now()}
	}
	r.ctxStore(p, w, v&^b)
	return nil
}

func firstSet(m [maskWords]uint64) int {
	for i, w := range m {
		if w != 0 {
			return 64*i + bits.TrailingZeros64(w)
		}
	}
	return 0
}

// ctxSingle is section 5.1: allreduce the bit vector with MPI_BAND and take
// the lowest set bit. Correct with one thread per process only.
func (c *Comm) ctxSingle(p *sim.Proc) (int, error) {
	r := c.r
	r.cpu.Compute(p, maskCycles)
	mask, err := c.readMask(p)
	if err != nil {
		return 0, err
	}
	res, err := c.allreduceAnd(p, mask)
	if err != nil {
		return 0, err
	}
	id := firstSet(res)
	if id == 0 {
		return 0, fmt.Errorf("mpich: rank %d: MPI_Comm_dup: no free context id (all %d in use)", r.rank, ContextIDs)
	}
	return id, r.take(p, id)
}

// ctxMulti is Figure 3.
func (c *Comm) ctxMulti(p *sim.Proc) (int, error) {
	r, s := c.r, &c.r.ctx
	contextID := 0
	var seen sim.StateSet
	for tries := 0; contextID == 0; tries++ {
		if tries == 1 {
			s.contention++
		}
		if tries >= s.maxRetries {
			return 0, c.livelock(p, tries)
		}
		if tries > 0 && seen.Repeats(p, r.ctxState()) {
			return 0, c.stateRepeat(p, tries)
		}
		var local [maskWords]uint64
		iOwn := false
		r.ctxLock(p)
		early := s.variant == bugEarlyRelease
		if !early {
			r.cpu.Compute(p, maskCycles)
		}
		inUse := r.ctxLoad(p, offInUse) != 0
		lowest := int(r.ctxLoad(p, offLowest))
		if inUse || (s.variant != bugNoLowest && c.ctx > lowest) {
			if c.ctx < lowest {
				r.ctxStore(p, offLowest, uint64(c.ctx))
			}
			r.ctxUnlock(p)
		} else {
			var err error
			if local, err = c.readMask(p); err != nil {
				r.ctxUnlock(p)
				return 0, err
			}
			if early {
				// The planted bug: the lock released before the flags
				// are set.
				r.ctxUnlock(p)
				r.cpu.Compute(p, maskCycles)
			}
			r.ctxStore(p, offInUse, 1)
			r.ctxStore(p, offLowest, uint64(c.ctx))
			iOwn = true
			if !early {
				r.ctxUnlock(p)
			}
		}
		res, err := c.allreduceAnd(p, local)
		if err != nil {
			return 0, err
		}
		if iOwn {
			r.ctxLock(p)
			if id := firstSet(res); id != 0 {
				if err := r.take(p, id); err != nil {
					r.ctxUnlock(p)
					return 0, err
				}
				contextID = id
				if int(r.ctxLoad(p, offLowest)) == c.ctx {
					r.ctxStore(p, offLowest, ContextIDs)
				}
			}
			r.ctxStore(p, offInUse, 0)
			r.ctxUnlock(p)
		}
	}
	return contextID, nil
}

// ctxNaiveLock is the first naive algorithm of 5.2: hold the lock across
// the allreduce. Threads of different processes taking their locks in
// different orders wait for each other for ever (a deadly embrace).
func (c *Comm) ctxNaiveLock(p *sim.Proc) (int, error) {
	r := c.r
	r.ctxLock(p)
	defer r.ctxUnlock(p)
	r.cpu.Compute(p, maskCycles)
	mask, err := c.readMask(p)
	if err != nil {
		return 0, err
	}
	res, err := c.allreduceAnd(p, mask)
	if err != nil {
		return 0, err
	}
	id := firstSet(res)
	if id == 0 {
		return 0, fmt.Errorf("mpich: rank %d: MPI_Comm_dup: no free context id", r.rank)
	}
	return id, r.take(p, id)
}

// ctxNaiveTwo is the second naive algorithm of 5.2: read the mask under
// the lock, allreduce it, then claim the id if the mask did not change
// meanwhile and agree on that with a second allreduce; otherwise give the
// claim back and start again. Two competing threads can invalidate each
// other's choice for ever: a round that fails and leaves the mask as it
// found it is a cycle in the state space (the scheduler, which may delay
// any thread, can repeat the round's order every time), reported as a
// livelock naming the competing threads.
func (c *Comm) ctxNaiveTwo(p *sim.Proc) (int, error) {
	r, s := c.r, &c.r.ctx
	for tries := 0; ; tries++ {
		if tries == 1 {
			s.contention++
		}
		if tries >= s.maxRetries {
			return 0, c.livelock(p, tries)
		}
		r.ctxLock(p)
		r.cpu.Compute(p, maskCycles)
		snap, err := c.readMask(p)
		r.ctxUnlock(p)
		if err != nil {
			return 0, err
		}
		res, err := c.allreduceAnd(p, snap)
		if err != nil {
			return 0, err
		}
		id := firstSet(res)
		var ok [maskWords]uint64
		r.ctxLock(p)
		now, err := c.readMask(p)
		if err != nil {
			r.ctxUnlock(p)
			return 0, err
		}
		if id != 0 && now == snap {
			w := (id / 64) * 8
			r.ctxStore(p, w, now[id/64]&^(1<<(id%64))) // claim it
			ok[0] = 1
		}
		r.ctxUnlock(p)
		agreed, err := c.allreduceAnd(p, ok)
		if err != nil {
			return 0, err
		}
		if agreed[0] == 1 {
			return id, nil
		}
		if ok[0] == 1 { // give the claim back and retry
			r.ctxLock(p)
			w := (id / 64) * 8
			r.ctxStore(p, w, r.ctxLoad(p, w)|1<<(id%64))
			r.ctxUnlock(p)
		}
		if r.storedMask() == snap && len(s.active) > 1 {
			return 0, c.noProgress(p, tries+1)
		}
	}
}

// noProgress reports a round of ctxNaiveTwo that failed and left the
// mask as it began while other threads competed: a livelock.
func (c *Comm) noProgress(p *sim.Proc, rounds int) error {
	r := c.r
	var ws []sim.Waiter
	for _, d := range r.ctx.active {
		ws = append(ws, sim.Waiter{Proc: d.p.Name(), Spinning: true, Since: p.Now(),
			Reason: fmt.Sprintf("rank %d: MPI_Comm_dup of context %d (algorithm %s): round %d ended with the context-id mask as it began, the claim invalidated by a competing thread; repeating the round's schedule loops for ever", r.rank, d.ctx, r.ctx.variant, rounds)})
	}
	return &sim.LivelockError{At: p.Now(), Waiting: ws}
}

// ctxState is a hash of every process's context-id variables (as each
// program last stored them: the simulator's check reads no memory), the
// shared state of Figure 3's loop at its head, where the thread's own
// variables are reset. Other state (message queues) is left out: at the
// loop head the previous round's allreduce is over.
func (r *Rank) ctxState() uint64 {
	h := uint64(14695981039346656037)
	var raw [8]byte
	for _, q := range r.w.ranks {
		if !q.ctx.allocated {
			continue
		}
		for _, w := range q.ctx.stored {
			binary.LittleEndian.PutUint64(raw[:], w)
			for _, b := range raw {
				h = (h ^ uint64(b)) * 1099511628211
			}
		}
	}
	return h
}

// stateRepeat reports the livelock a sim.StateSet found: the loop back at
// a state it met before under a schedule explorer.
func (c *Comm) stateRepeat(p *sim.Proc, tries int) error {
	r := c.r
	var ws []sim.Waiter
	for _, d := range r.ctx.active {
		ws = append(ws, sim.Waiter{Proc: d.p.Name(), Spinning: true, Since: p.Now(),
			Reason: fmt.Sprintf("rank %d: MPI_Comm_dup of context %d (algorithm %s): after %d rounds %s is back at a state it met before (the context-id variables of every process and where every thread is): repeating the schedule in between loops for ever", r.rank, d.ctx, r.ctx.variant, tries, p.Name())})
	}
	return &sim.LivelockError{At: p.Now(), Waiting: ws}
}

func (c *Comm) livelock(p *sim.Proc, tries int) error {
	return &sim.LivelockError{At: p.Now(), Waiting: []sim.Waiter{{Proc: p.Name(), Spinning: true, Since: p.Now(),
		Reason: fmt.Sprintf("rank %d: MPI_Comm_dup of context %d retried %d times without agreeing on a context id (algorithm %s)", c.r.rank, c.ctx, tries, c.r.ctx.variant)}}}
}

// allreduceAnd is MPI_Allreduce(MPI_BAND) of a mask over the communicator:
// every process sends its mask to process 0, which ANDs them in rank order
// and sends the result back. Real bytes travel as ordinary messages on the
// communicator's context.
func (c *Comm) allreduceAnd(p *sim.Proc, m [maskWords]uint64) ([maskWords]uint64, error) {
	r := c.r
	if err := c.buffers(); err != nil {
		return m, err
	}
	put := func(b mem.Region, m [maskWords]uint64) {
		r.cpu.Update(p, b.Addr, maskBytes, 0, func(raw []byte) {
			for i, w := range m {
				binary.LittleEndian.PutUint64(raw[8*i:], w)
			}
		})
	}
	get := func(b mem.Region) [maskWords]uint64 { return c.get(p, b) }
	if c.Size() == 1 {
		return m, nil
	}
	if r.mpich2() {
		// MPIR_Get_contextid calls MPI_Allreduce through its binding
		// (NMPI_Allreduce): a nested MPI call, whose nesting level is
		// thread-private (section 4.2).
		if err := r.enter(p, "MPI_Allreduce"); err != nil {
			return m, err
		}
		defer r.exit(p)
		r.cpu.Compute(p, bindingCycles)
	}
	if r.w.params.Allreduce == AllreduceRecursiveDoubling {
		return c.allreduceRD(p, m, put, get)
	}
	if r.rank != 0 {
		put(c.buf[0], m)
		if err := c.Send(p, c.buf[0], 0, collTag); err != nil {
			return m, err
		}
		if _, err := c.Recv(p, c.buf[1], 0, collTag); err != nil {
			return m, err
		}
		return get(c.buf[1]), nil
	}
	acc := m
	for src := 1; src < c.Size(); src++ {
		if _, err := c.Recv(p, c.buf[1], src, collTag); err != nil {
			return m, err
		}
		in := get(c.buf[1])
		for i := range acc {
			acc[i] &= in[i]
		}
		r.cpu.Compute(p, maskCycles)
	}
	put(c.buf[0], acc)
	for dst := 1; dst < c.Size(); dst++ {
		if err := c.Send(p, c.buf[0], dst, collTag); err != nil {
			return m, err
		}
	}
	return acc, nil
}

// allreduceRD is MPICH2's recursive-doubling MPI_Allreduce for short
// messages (Thakur, Rabenseifner and Gropp 2005): with pof2 the largest
// power of two not above p and rem = p - pof2, each of the first 2 rem
// processes of even rank sends its mask to the next one and waits for the
// result; the others take part, renumbered, in log2(pof2) rounds of
// exchanging masks with the partner whose new rank differs in one bit,
// each ANDing what it gets; at the end the odd ones send the result to
// the process they absorbed.
func (c *Comm) allreduceRD(p *sim.Proc, m [maskWords]uint64, put func(mem.Region, [maskWords]uint64), get func(mem.Region) [maskWords]uint64) ([maskWords]uint64, error) {
	r := c.r
	n, me := c.Size(), r.rank
	pof2 := 1
	for pof2*2 <= n {
		pof2 *= 2
	}
	rem := n - pof2
	acc := m
	newRank := -1
	switch {
	case me < 2*rem && me%2 == 0:
		put(c.buf[0], acc)
		if err := c.Send(p, c.buf[0], me+1, collTag); err != nil {
			return m, err
		}
	case me < 2*rem:
		if _, err := c.Recv(p, c.buf[1], me-1, collTag); err != nil {
			return m, err
		}
		in := get(c.buf[1])
		for i := range acc {
			acc[i] &= in[i]
		}
		r.cpu.Compute(p, maskCycles)
		newRank = me / 2
	default:
		newRank = me - rem
	}
	if newRank >= 0 {
		for mask := 1; mask < pof2; mask <<= 1 {
			nd := newRank ^ mask
			dst := nd + rem
			if nd < rem {
				dst = nd*2 + 1
			}
			put(c.buf[0], acc)
			// MPIC_Sendrecv: the send posted, then the receive.
			q, err := r.isend(p, c.buf[0], dst, collTag, c.ctx)
			if err != nil {
				return m, err
			}
			if _, err := c.Recv(p, c.buf[1], dst, collTag); err != nil {
				return m, err
			}
			if _, err := q.wait(p); err != nil {
				return m, err
			}
			in := get(c.buf[1])
			for i := range acc {
				acc[i] &= in[i]
			}
			r.cpu.Compute(p, maskCycles)
		}
	}
	if me < 2*rem {
		if me%2 == 1 {
			put(c.buf[0], acc)
			if err := c.Send(p, c.buf[0], me-1, collTag); err != nil {
				return m, err
			}
		} else {
			if _, err := c.Recv(p, c.buf[1], me+1, collTag); err != nil {
				return m, err
			}
			acc = get(c.buf[1])
		}
	}
	return acc, nil
}

// buffers allocates MPI_COMM_WORLD's allreduce buffers on first use (a
// duplicate gets them with its reference count).
func (c *Comm) buffers() error {
	if c.buf[0].Mem != nil {
		return nil
	}
	r := c.r
	b, err := r.w.host.Alloc(r.rank, "comm world allreduce", 2*maskBytes)
	if err != nil {
		return fmt.Errorf("mpich: rank %d: allreduce: %w", r.rank, err)
	}
	c.buf[0], c.buf[1] = b.Slice(0, maskBytes), b.Slice(maskBytes, maskBytes)
	return nil
}

// get reads a mask from b (the message's bytes as delivered): p's
// program reading its buffer, whose cycles the caller charges with the
// combine (maskCycles).
func (c *Comm) get(p *sim.Proc, b mem.Region) (m [maskWords]uint64) {
	c.r.cpu.Update(p, b.Addr, maskBytes, 0, func(raw []byte) {
		for i := range m {
			m[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
	})
	return m
}

// SchedulingPoints implements stacks.Schedulable: where MPICH's thread
// code offers a schedule explorer a choice.
func (r *Rank) SchedulingPoints() []string {
	return []string{
		"a thread entering an MPI call (touching rank<i>.mpi, the process's MPI state)",
		"a thread taking a thread lock: rank<i>.ctxid, the context-id mask (Figure 3)",
	}
}

// Rank implements stacks.Threaded and stacks.Schedulable; Comm implements
// stacks.Communicator.
var (
	_ stacks.Threaded     = (*Rank)(nil)
	_ stacks.Schedulable  = (*Rank)(nil)
	_ stacks.Communicator = (*Comm)(nil)
)

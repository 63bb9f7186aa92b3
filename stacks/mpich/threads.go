package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Level is an MPI thread level (papers/mpich2-threads.txt section 2), in
// increasing order of what the program may do: stacks.ThreadLevel, so that
// *Rank implements stacks.Threaded.
type Level = stacks.ThreadLevel

// The four levels of MPI_Init_thread.
const (
	LevelSingle     = stacks.ThreadSingle     // MPI_THREAD_SINGLE: one thread
	LevelFunneled   = stacks.ThreadFunneled   // MPI_THREAD_FUNNELED: only the thread that initialized MPI calls it
	LevelSerialized = stacks.ThreadSerialized // MPI_THREAD_SERIALIZED: one thread at a time calls MPI
	LevelMultiple   = stacks.ThreadMultiple   // MPI_THREAD_MULTIPLE: any thread, concurrently
)

// Builds (Params.Threads), thread waits (Params.ThreadWait) and lock
// placements (Params.ThreadLocking).
const (
	BuildSingle     = "single"
	BuildRuntime    = "runtime"
	BuildMultiple   = "multiple"
	WaitYield       = "yield"
	WaitSpin        = "spin"
	LockingProgress = "progress"
	LockingPerCall  = "per-call"
)

// Software costs of thread support, in CPU cycles (charged only when thread
// locks are taken: the multiple build, or the runtime build after
// MPI_Init_thread(multiple)).
const (
	// tlsCycles is one access to thread-private memory
	// (pthread_getspecific, section 4.2: "accessing thread-private data
	// requires a function call"): assumed 20 cycles, a call and a table
	// load.
	tlsCycles = 20
	// wakeCycles is a thread woken from a mutex or condition variable
	// getting the CPU back: a system call return and a thread switch, on a
	// machine whose kernel does not say what that costs
	// (machines.Scheduler).
	// Assumed 1000 cycles (8 us at the SX-4's 125 MHz): the order of the
	// System V semaphore operation that is the SX-4's kernel-assisted
	// blocking primitive (papers/mpich-sx4.txt section 4).
	wakeCycles = 1000
	// threadPollCycles is the interval at which a spinning waiter
	// (thread_wait: spin) re-enters the progress engine. Assumed: 200
	// cycles, a short back-off loop.
	threadPollCycles = 200
)

// ThreadLevelError is a program breaking the thread level it declared
// (section 2: "The user program must meet the restrictions of the level
// supported"): which rank, which threads, which call.
type ThreadLevelError struct {
	Rank   int
	Level  Level
	Thread string // the thread that made the offending call
	Other  string // the initializing thread (funneled) or the thread inside MPI (serialized)
	Call   string
	At     sim.Time
}

func (e *ThreadLevelError) Error() string {
	switch e.Level {
	case LevelSerialized:
		return fmt.Sprintf("mpich: rank %d: thread level violation at %v: %s calls %s while %s is inside MPI (level serialized)", e.Rank, e.At, e.Thread, e.Call, e.Other)
	default:
		return fmt.Sprintf("mpich: rank %d: thread level violation at %v: %s calls %s but only %s, which initialized MPI, may call it (level %s)", e.Rank, e.At, e.Thread, e.Call, e.Other, e.Level)
	}
}

// threadState is what a rank knows of its threads.
type threadState struct {
	level    Level
	explicit bool // MPI_Init_thread was called: the level is enforced
	main     *sim.Proc
	locks    bool // thread locks are taken (section 2: the build and level)
	cs       *threadMutex
	nesting  map[*sim.Proc]int // thread-private nesting level (section 4.2)
	inside   *sim.Proc         // serialized: the thread inside MPI
	poller   *sim.Proc         // the thread waiting on the device
	progress *sim.Cond         // broadcast when the progress engine made progress
	threads  int
	core     *sim.Core // ch_t3d: the PE's one CPU, time-shared by the threads
	// object names the process's MPI state (queues, requests, the device)
	// at scheduling points: entering a call touches only it.
	object string
}

// initThreads sets up the rank's thread support for its build: with the
// multiple build the level is always multiple and the locks always taken.
func (r *Rank) initThreads() error {
	r.th.nesting = map[*sim.Proc]int{}
	r.th.progress = sim.NewCond(fmt.Sprintf("rank%d.progress", r.rank))
	r.th.object = fmt.Sprintf("rank%d.mpi", r.rank)
	r.initContexts()
	if r.w.params.Threads == BuildMultiple {
		r.th.level = LevelMultiple
		return r.takeLocks()
	}
	return nil
}

// takeLocks turns thread locks on, creating the locks (their words in the
// process's memory) the first time: a run without thread locks allocates
// nothing, so its memory layout is the same as before threads existed.
func (r *Rank) takeLocks() error {
	r.th.locks = true
	if r.th.cs != nil {
		return nil
	}
	var err error
	if r.th.cs, err = r.newThreadMutex(fmt.Sprintf("rank%d.mpi", r.rank)); err != nil {
		return err
	}
	r.ctx.lock, err = r.newThreadMutex(fmt.Sprintf("rank%d.ctxid", r.rank))
	return err
}

// InitThread is MPI_Init_thread, called by the thread that becomes the main
// thread: it returns the level provided. The single build provides at most
// serialized (no locks compiled in; one thread at a time needs none); the
// runtime build provides what is asked and takes locks only for multiple;
// the multiple build provides what is asked and always takes them.
func (r *Rank) InitThread(p *sim.Proc, required Level) (Level, error) {
	if required < LevelSingle || required > LevelMultiple {
		return 0, fmt.Errorf("mpich: rank %d: MPI_Init_thread: invalid level %d", r.rank, int(required))
	}
	provided := required
	switch r.w.params.Threads {
	case BuildSingle:
		provided = min(required, LevelSerialized)
	case BuildRuntime, BuildMultiple:
		if provided == LevelMultiple || r.w.params.Threads == BuildMultiple {
			if err := r.takeLocks(); err != nil {
				return 0, err
			}
		}
	}
	r.th.level, r.th.explicit, r.th.main = provided, true, p
	return provided, nil
}

// Level is the thread level in force.
func (r *Rank) Level() Level { return r.th.level }

// LocksTaken reports whether MPI calls take thread locks.
func (r *Rank) LocksTaken() bool { return r.th.locks }

// SpawnThread starts another thread of this process, from its thread p:
// a simulated process that shares the rank's memory and MPI state. A
// blocking MPI call blocks only the thread that makes it.
//
// With ch_t3d on a machine whose process runs its threads on its one CPU
// (machines.Threads: a T3D PE has one Alpha) the threads time-share it as
// equals (a sim.Core without an application): the work of every thread,
// the spawning one included, is serialized first come, first served, and
// each change of the thread working costs the machine's thread switch
// (the T3D's thread_switch_cycles). On the shared-memory devices (the
// SX-4 node), and on a machine that does not say its threads share a
// CPU, each thread runs on its own CPU and nothing is serialized.
func (r *Rank) SpawnThread(p *sim.Proc, name string, fn func(p *sim.Proc)) *sim.Proc {
	r.th.threads++
	t := machines.Spawn(r.w.host, p, fmt.Sprintf("rank%d.%s", r.rank, name), fn) // the rank's queues and requests: steps dependent (sim/explore)
	if tm, ok := r.w.host.(machines.Threads); ok && r.w.params.Device == DeviceT3D {
		if r.th.core == nil {
			r.th.core = tm.NewThreadCore(r.rank, fmt.Sprintf("PE %d", r.rank))
			if p != nil {
				r.th.core.BindHandler(p)
			}
		}
		r.th.core.BindHandler(t)
	}
	return t
}

// Nesting is p's current MPI nesting level (section 4.2): 1 inside a
// top-level call, more inside calls MPI makes of itself.
func (r *Rank) Nesting(p *sim.Proc) int { return r.th.nesting[p] }

// enter begins an MPI call by p: the level check, the nesting level and,
// with per-call locking, the lock.
func (r *Rank) enter(p *sim.Proc, call string) error {
	t := &r.th
	if !t.explicit && !t.locks {
		return nil // MPI_Init: nothing to check, no thread-private state
	}
	if t.locks {
		r.cpu.Compute(p, tlsCycles) // pthread_getspecific of the nesting level
	}
	n := t.nesting[p]
	if n == 0 {
		p.Point(t.object, "enters "+call)
	}
	if n == 0 && t.explicit {
		if err := r.checkLevel(p, call); err != nil {
			return err
		}
	}
	t.nesting[p] = n + 1
	if n == 0 {
		t.inside = p
		if t.locks && r.w.params.ThreadLocking == LockingPerCall {
			t.cs.lock(p)
		}
	}
	return nil
}

// exit ends an MPI call begun by enter.
func (r *Rank) exit(p *sim.Proc) {
	t := &r.th
	if !t.explicit && !t.locks {
		return
	}
	n := t.nesting[p] - 1
	if n > 0 {
		t.nesting[p] = n
		return
	}
	delete(t.nesting, p)
	if t.inside == p {
		t.inside = nil
	}
	if t.locks && r.w.params.ThreadLocking == LockingPerCall {
		t.cs.unlock(p)
	}
}

func (r *Rank) checkLevel(p *sim.Proc, call string) error {
	t := &r.th
	e := &ThreadLevelError{Rank: r.rank, Level: t.level, Thread: p.Name(), Call: call, At: p.Now()}
	switch t.level {
	case LevelSingle, LevelFunneled:
		if p != t.main {
			e.Other = t.main.Name()
			return e
		}
	case LevelSerialized:
		if t.inside != nil && t.inside != p {
			e.Other = t.inside.Name()
			return e
		}
	}
	return nil
}

// csLock takes the rank's MPI lock around one step of the progress engine
// (locking above the device, section 4) when locks are taken and placed
// there.
func (r *Rank) csLock(p *sim.Proc) {
	if r.th.locks && r.w.params.ThreadLocking == LockingProgress {
		r.th.cs.lock(p)
	}
}

func (r *Rank) csUnlock(p *sim.Proc) {
	if r.th.locks && r.w.params.ThreadLocking == LockingProgress {
		r.th.cs.unlock(p)
	}
}

// waitThreaded is waitUntil under thread locks: the lock is held only
// while the progress engine runs, never across a blocking wait (section
// 4, Figure 2). One waiting thread at a time polls the device; the others
// yield on a condition variable broadcast whenever progress is made, or
// with thread_wait spin re-enter the progress engine every threadPollCycles
// (section 4.6: the latency / scheduling trade-off).
func (r *Rank) waitThreaded(p *sim.Proc, done func() bool) error {
	t := &r.th
	backoff := backoffMin
	t.cs.lock(p)
	var err error
	for !done() {
		did, retry, perr := r.progress(p)
		if perr != nil {
			err = perr
			break
		}
		if did {
			t.progress.Broadcast()
		}
		switch {
		case done():
		case did:
			backoff = backoffMin
		case retry:
			t.cs.unlock(p)
			if r.room != nil {
				r.room.WaitRoom(p)
			} else {
				r.cpu.Delay(p, backoff)
				backoff = min(2*backoff, backoffMax)
			}
			t.cs.lock(p)
		case t.poller == nil || t.poller == p:
			t.poller = p
			t.cs.unlock(p)
			r.dev.WaitControl(p)
			t.cs.lock(p)
		case r.w.params.ThreadWait == WaitSpin:
			t.cs.unlock(p)
			r.cpu.Compute(p, threadPollCycles)
			t.cs.lock(p)
		default:
			t.cs.wait(p, t.progress)
		}
	}
	if t.poller == p {
		t.poller = nil
		t.progress.Broadcast() // another waiter takes over the polling
	}
	t.cs.unlock(p)
	return err
}

// threadMutex is a pthread mutex on the machine: a lock word in the
// process's memory taken with the CPU's test-and-set (one atomic: on the
// SX-4 its AtomicCycles, the cost of the test-and-set instruction the NEC
// locks of papers/mpich-sx4.txt section 6 are built from), released with a
// fence and a store (release consistency, section 4.3). A thread that
// finds it held sleeps in the kernel (a futex) instead of spinning and
// pays wakeCycles when handed the lock. The threads of a process share
// its CPU model (one cache view), so no cache flush is needed, unlike the
// inter-process locks of lock.go.
type threadMutex struct {
	m      *sim.Mutex
	cpu    machines.Processor
	word   mem.Addr
	resume func(p *sim.Proc) // a woken thread getting its CPU back
}

func (r *Rank) newThreadMutex(name string) (*threadMutex, error) {
	w, err := r.w.host.Alloc(r.rank, name+" lock word", 8)
	if err != nil {
		return nil, fmt.Errorf("mpich: rank %d: thread mutex %s: %w", r.rank, name, err)
	}
	l := &threadMutex{m: sim.NewMutex(name), cpu: r.cpu, word: w.Addr}
	if s, ok := r.w.host.(machines.Scheduler); ok {
		rank := r.rank
		l.resume = func(p *sim.Proc) { s.Resume(p, rank) }
	} else {
		l.resume = func(p *sim.Proc) { r.cpu.Compute(p, wakeCycles) }
	}
	return l, nil
}

func (l *threadMutex) lock(p *sim.Proc) {
	if l.m.TryLock(p) {
		l.cpu.TestAndSet(p, l.word)
		return
	}
	l.cpu.TestAndSet(p, l.word) // finds it set
	l.m.Lock(p)
	l.resume(p)
}

// lockAt is lock at a scheduling point named by what the lock is for.
func (l *threadMutex) lockAt(p *sim.Proc, r *Rank, what string) {
	p.Point(l.m.Name(), "locks "+l.m.Name()+" "+what)
	if l.m.TryLock(p) {
		l.cpu.TestAndSet(p, l.word)
		return
	}
	l.cpu.TestAndSet(p, l.word)
	l.m.Lock(p)
	l.resume(p)
}

func (l *threadMutex) unlock(p *sim.Proc) {
	l.cpu.Fence(p)
	l.cpu.Store(p, l.word, 8, 0)
	l.m.Unlock(p)
}

// wait is pthread_cond_wait on c with l held.
func (l *threadMutex) wait(p *sim.Proc, c *sim.Cond) {
	l.cpu.Fence(p)
	l.cpu.Store(p, l.word, 8, 0)
	c.Wait(p, l.m)
	l.resume(p)
	l.cpu.TestAndSet(p, l.word)
}

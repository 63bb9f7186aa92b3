package machines

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The capabilities below are the hardware's verbs: what a stack may ask of a
// machine beyond Machine. Each is a small interface, named for what it does
// and never for a machine; a machine implements those its hardware has, and
// a stack states its needs in them (Require turns a missing one into a
// *MissingCapability naming it). Where a stack's protocol needs a verb a
// machine lacks, the stack's port may build it from verbs that are there
// (a fetch-and-increment register from an atomic on a word, a barrier from
// remote writes), and its cost is then that of the operations it uses.
//
// Addresses: every process pe has a CPU and memory it allocates from
// (Local). A remote verb names the process whose memory it reaches (to,
// from, target); an address there is one that process's Alloc returned
// (or, on a machine with SharedSegments, one in its node's segments).
// Processes that share a node share its memory: on such machines an
// address is the node's, whoever allocated it.

// Local is what every machine offers each process: the CPU it runs on
// (loads, stores, fences, local atomics, copies, compute: sim/mem.CPU) and
// memory of its own.
type Local interface {
	Machine
	CPU(pe int) *mem.CPU
	Alloc(pe int, name string, n int) (mem.Region, error)
}

// RemoteWrite is one-sided remote write: Put copies n bytes at src in pe's
// memory to dst in process to's memory, PutWord writes one 8-byte word;
// both return when the source may be reused, and the data lands later.
// Quiet returns when every write pe issued has landed (SHMEM's shmem_quiet,
// SCI's MemBarrier, LAPI_Fence).
type RemoteWrite interface {
	Local
	Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int)
	PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64)
	Quiet(p *sim.Proc, pe int)
}

// OrderedWrites is a machine whose remote writes from one process to
// another land in the order they were issued (one fixed route through
// links that keep order: the T3D's torus), so that a protocol needs no
// Quiet between two writes to the same process to keep them in order.
// WritesInOrder does nothing; having it is the property.
type OrderedWrites interface {
	RemoteWrite
	WritesInOrder()
}

// SymmetricHeap is a machine whose processes share one memory but whose
// remote verbs (RemoteWrite, RemoteRead, RemoteFetchInc) address another
// process's copy of the caller's remotely written memory: an address in
// memory the caller had mapped for itself (Map) names the same offset of
// the target's, as the same address names the same word on every PE of a
// T3D. Processes that make the same allocations in the same order get the
// same offsets (a SHMEM symmetric heap in shared segments, the SX-4's).
// SymmetricHeap does nothing; having it is the property.
type SymmetricHeap interface {
	RemoteWrite
	SymmetricHeap()
}

// RemoteRead is one-sided remote read: Get copies n bytes at src in process
// from's memory to dst in pe's memory and returns when they are there.
type RemoteRead interface {
	Local
	Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int)
}

// RemoteFetchInc is an atomic fetch-and-increment by one of an 8-byte word
// at a in process target's memory, returning the old value (the PCI-SCI
// adapter's only atomic; LAPI_Rmw's FETCH_AND_ADD of one).
type RemoteFetchInc interface {
	Local
	FetchIncAt(p *sim.Proc, pe, target int, a mem.Addr) uint64
}

// FetchIncRegister is a fetch-and-increment register per process, read (and
// thereby atomically incremented) from any process, that its owner reads
// and resets (the T3D's, papers/aclmpl-t3d.txt 4.2).
type FetchIncRegister interface {
	Machine
	FetchInc(p *sim.Proc, pe, target int) uint64
	ReadFetchInc(p *sim.Proc, pe int) uint64
	SetFetchInc(p *sim.Proc, pe int, v uint64)
}

// Swap is an atomic swap of the 8-byte word at a in process target's
// memory with v, returning the old value (the T3D's; LAPI_Rmw's SWAP).
type Swap interface {
	Machine
	Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64
}

// SharedSegments is memory shared by the processes of a node: a segment of
// node's memory that each of them loads and stores with its own CPU (the
// SX-4's System V segments; an SCI node's local memory, shared by its
// processors). NodeOf is the node process pe runs on.
type SharedSegments interface {
	Local
	NodeOf(pe int) int
	SharedSegment(node int, name string, size int) (mem.Region, error)
}

// Semaphores are System V semaphores: Semget creates one with a value,
// Semop adds delta to it, waiting while the result would be negative (the
// SX-4's, an expensive system call, papers/mpich-sx4.txt section 4).
type Semaphores interface {
	Machine
	Semget(name string, initial int) int
	Semop(p *sim.Proc, pe, id, delta int) error
}

// Barrier is a hardware barrier network (the T3D's): Barrier blocks process
// pe until every process has entered it.
type Barrier interface {
	Machine
	Barrier(p *sim.Proc, pe int)
}

// Checkpoints are error checkpoints around remote writes (the SCI driver's,
// papers/scampi-sci.txt 1.3.2): EndCheckPoint reports whether nothing since
// the StartCheckPoint that returned tok may have been hit by a
// transmission error. Quiet first: writes still outstanding are not
// covered.
type Checkpoints interface {
	Machine
	StartCheckPoint(p *sim.Proc, pe int) uint64
	EndCheckPoint(p *sim.Proc, pe int, tok uint64) bool
}

// Sockets are a kernel's TCP connections between processes, one stream
// for every ordered pair, used as a BSD-sockets program uses non-blocking
// sockets. SockWrite is write(): it copies up to n bytes at src into the
// kernel (as much as the connection's buffers take now) and returns how
// many; the kernel sends them on its own. SockRead is read(): it copies up
// to n bytes that have arrived from process from into dst and returns how
// many. Poll is poll() over every connection of pe: it returns when bytes
// are waiting to be read on one, or when one of the connections to the
// processes in out can take more bytes; with block false it returns at
// once, else the calling thread sleeps in the kernel until then (the
// process's other threads run on). Readable and Writable are what poll()
// reports of one connection (its revents), for a caller that has just
// polled: the bytes waiting, the room to write.
type Sockets interface {
	Local
	SockWrite(p *sim.Proc, pe, to int, src mem.Addr, n int) int
	SockRead(p *sim.Proc, pe, from int, dst mem.Addr, n int) int
	Poll(p *sim.Proc, pe int, out []int, block bool)
	Readable(pe, from int) int
	Writable(pe, to int) int
}

// Scheduler is a machine whose kernel puts threads to sleep and wakes them
// (a futex under a pthread mutex or condition variable): Resume charges
// thread p of process pe what the kernel takes to give it a CPU again
// once woken (the wake-up, the scheduler, the context switch).
type Scheduler interface {
	Machine
	Resume(p *sim.Proc, pe int)
}

// Threads is a machine whose process runs its threads on its one CPU,
// time-shared: NewThreadCore is process pe's CPU as its threads share it,
// named name (a sim.Core without an application: their work serialized
// first come, first served), each change of the thread working costing
// the machine's thread switch. The caller binds the threads to it
// (sim.Core.BindHandler).
type Threads interface {
	Machine
	NewThreadCore(pe int, name string) *sim.Core
}

// Spawn starts fn as a thread of the process whose thread parent is: a
// simulated process on m's engine sharing parent's state (for a schedule
// explorer its steps depend on parent's, sim.Proc.ShareState). A nil
// parent is a thread started before the process runs.
func Spawn(m Machine, parent *sim.Proc, name string, fn func(p *sim.Proc)) *sim.Proc {
	t := m.Engine().Spawn(name, fn)
	if parent != nil {
		t.ShareState(parent)
	}
	return t
}

// Mapper is a machine on which memory that other processes write remotely
// must be created and mapped, at a cost: Map allocates n bytes of owner's
// memory and p (pe's program; nil at set-up) pays for mapping it (the SCI
// driver's segment creation, papers/scampi-sci.txt 1.3). Use MapRemote.
type Mapper interface {
	Local
	Map(p *sim.Proc, pe, owner int, name string, n int) (mem.Region, error)
}

// Copier is a machine whose library memcpy is not its CPU's copy loop but
// a move that reads and writes memory itself, bypassing the cache (the
// SX-4's vector move): a copy never reads a stale cached line, so a reader
// need not drop its cached copies of what it copies. Use Memcpy.
type Copier interface {
	Machine
	Memcpy(p *sim.Proc, pe int, dst, src mem.Addr, n int)
}

// Memory is a machine that bounds each process's memory: MemoryBytes is
// what one process can allocate (an SX-4 node's main memory, shared by its
// processes; a T3D PE's local memory). Stacks check their fixed structures
// and thresholds against it before a run.
type Memory interface {
	Machine
	MemoryBytes() int
}

// Delivered is a machine that counts the bytes remote writes have delivered
// into each process's memory: a harness-side count with no simulated cost,
// with which a benchmark detects lost puts.
type Delivered interface {
	Machine
	Received(pe int) uint64
}

// MapRemote allocates n bytes of owner's memory for pe to write remotely:
// Map where the machine must map it (and p pays), Alloc elsewhere.
func MapRemote(m Local, p *sim.Proc, pe, owner int, name string, n int) (mem.Region, error) {
	if mp, ok := m.(Mapper); ok {
		return mp.Map(p, pe, owner, name, n)
	}
	return m.Alloc(owner, name, n)
}

// Memcpy is the library memcpy of process pe on m: the machine's own
// (Copier) where it has one, else the CPU's copy.
func Memcpy(m Local, p *sim.Proc, pe int, dst, src mem.Addr, n int) {
	if c, ok := m.(Copier); ok {
		c.Memcpy(p, pe, dst, src, n)
		return
	}
	m.CPU(pe).Memcpy(p, dst, src, n)
}

// CopyBypassesCache reports whether m's library memcpy reads memory
// itself, never a stale cached line (Copier).
func CopyBypassesCache(m Machine) bool {
	_, ok := m.(Copier)
	return ok
}

// NodeOf is the node of process pe on m: its SharedSegments node, or pe
// itself on a machine whose processes share no memory.
func NodeOf(m Machine, pe int) int {
	if s, ok := m.(SharedSegments); ok {
		return s.NodeOf(pe)
	}
	return pe
}

// Capability is a machine capability by name, for listings: Has reports
// whether a machine offers it.
type Capability struct {
	Name string // short name, e.g. "remote-write"
	What string // what it is, in words
	Has  func(Machine) bool
}

// Cap is the Capability of interface C.
func Cap[C any](name, what string) Capability {
	return Capability{Name: name, What: what, Has: func(m Machine) bool { _, ok := m.(C); return ok }}
}

// The verbs' listing names, which stacks' Needs and missing-verb errors
// use.
var (
	VerbLocal          = Cap[Local]("local", "a CPU and local memory per process (machines.Local)")
	VerbRemoteWrite    = Cap[RemoteWrite]("remote-write", "one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)")
	VerbOrderedWrites  = Cap[OrderedWrites]("ordered-writes", "remote writes from one process to another land in issue order (machines.OrderedWrites)")
	VerbRemoteRead     = Cap[RemoteRead]("remote-read", "one-sided remote read (get) (machines.RemoteRead)")
	VerbRemoteFetchInc = Cap[RemoteFetchInc]("remote-fetch-inc", "atomic fetch-and-increment of a remote word (machines.RemoteFetchInc)")
	VerbFetchIncReg    = Cap[FetchIncRegister]("fetch-inc-register", "a fetch-and-increment register per process (machines.FetchIncRegister)")
	VerbSwap           = Cap[Swap]("swap", "atomic swap of a remote word (machines.Swap)")
	VerbShared         = Cap[SharedSegments]("shared-segments", "memory segments shared by the processes of a node (machines.SharedSegments)")
	VerbSemaphores     = Cap[Semaphores]("semaphores", "System V semaphores (machines.Semaphores)")
	VerbBarrier        = Cap[Barrier]("barrier", "a hardware barrier network (machines.Barrier)")
	VerbCheckpoints    = Cap[Checkpoints]("checkpoints", "error checkpoints around remote writes (machines.Checkpoints)")
	VerbMemory         = Cap[Memory]("memory", "a bounded memory per process (machines.Memory)")
	VerbDelivered      = Cap[Delivered]("delivered", "a count of bytes delivered by remote writes, for the harness (machines.Delivered)")
	VerbSockets        = Cap[Sockets]("sockets", "TCP connections between processes: write, read, poll() that sleeps in the kernel (machines.Sockets)")
	VerbScheduler      = Cap[Scheduler]("scheduler", "a kernel that puts threads to sleep and wakes them, at a cost (machines.Scheduler)")
	VerbThreads        = Cap[Threads]("threads", "a process's threads time-sharing its one CPU, each switch between them at the machine's cost (machines.Threads)")
)

// Capabilities are the verbs package machines defines, in the order
// listings show them. (Other packages define verbs of their own, e.g.
// machines/lapi's active messages; the registry lists those with the
// stacks that need them.)
func Capabilities() []Capability {
	return []Capability{
		VerbLocal, VerbRemoteWrite, VerbOrderedWrites, VerbRemoteRead, VerbRemoteFetchInc, VerbFetchIncReg, VerbSwap,
		VerbShared, VerbSemaphores, VerbBarrier, VerbCheckpoints, VerbMemory, VerbDelivered, VerbSockets, VerbScheduler, VerbThreads,
	}
}

// Need returns m as verb C, or a *MissingCapability naming the verb (its
// listing name and what it is) for user.
func Need[C any](m Machine, user string, verb Capability) (C, error) {
	return Require[C](m, user, verb.Name+": "+verb.What)
}

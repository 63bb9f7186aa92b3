package machines

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The capabilities below are what stacks and the benchmark harness ask of
// a machine beyond Machine and OneSided. Each is a small interface a
// machine implements or not; Require turns a missing one into a
// *MissingCapability naming it.

// Memory is the capability of a machine that bounds each process's memory:
// MemoryBytes is what one process can allocate (an SX-4 node's main memory,
// shared by its processes; a T3D PE's local memory). Stacks check their
// fixed structures and thresholds against it before a run.
type Memory interface {
	Machine
	MemoryBytes() int
}

// Get is the capability of a one-sided machine whose PEs also read
// another PE's memory (shmem_get).
type Get interface {
	OneSided
	Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int)
}

// FetchInc is the capability of a machine with a fetch-and-increment
// register per PE, read (and thereby atomically incremented) from any PE,
// that its owner can read and reset (the T3D's, papers/aclmpl-t3d.txt
// 4.2). ACLMPL's asynchronous protocol and raw SHMEM need it.
type FetchInc interface {
	Machine
	FetchInc(p *sim.Proc, pe, target int) uint64
	ReadFetchInc(p *sim.Proc, pe int) uint64
	SetFetchInc(p *sim.Proc, pe int, v uint64)
}

// Swap is the capability of a machine with an atomic swap of a word in
// another PE's memory (ARMCI's and SHMEM's swap): the T3D's.
type Swap interface {
	Machine
	Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64
}

// Barrier is the capability of a machine with a hardware barrier network
// (the T3D's): Barrier blocks PE pe until every PE has entered it. The
// benchmark harness brackets its timed patterns with it.
type Barrier interface {
	Machine
	Barrier(p *sim.Proc, pe int)
}

// Delivered is the capability of a machine that counts the bytes one-sided
// puts have delivered into each PE's memory: a harness-side count with no
// simulated cost, with which a benchmark detects lost puts.
type Delivered interface {
	Machine
	Received(pe int) uint64
}

// Capability is a machine capability by name, for listings: Has reports
// whether a machine offers it.
type Capability struct {
	Name string // short name, e.g. "one-sided"
	What string // what it is, in words
	Has  func(Machine) bool
}

// Cap is the Capability of interface C.
func Cap[C any](name, what string) Capability {
	return Capability{Name: name, What: what, Has: func(m Machine) bool { _, ok := m.(C); return ok }}
}

// Capabilities are the capabilities package machines defines, in the order
// listings show them. (Stacks define their own as well, e.g.
// stacks/mpich.SharedMemory; the registry lists those with the stack.)
func Capabilities() []Capability {
	return []Capability{
		Cap[Memory]("memory", "a bounded memory per process (machines.Memory)"),
		Cap[OneSided]("one-sided", "per-PE memory, one-sided put and quiet (machines.OneSided)"),
		Cap[Get]("get", "one-sided get (machines.Get)"),
		Cap[FetchInc]("fetch-inc", "a fetch-and-increment register per PE (machines.FetchInc)"),
		Cap[Swap]("swap", "atomic swap of a remote word (machines.Swap)"),
		Cap[Barrier]("barrier", "a hardware barrier network (machines.Barrier)"),
		Cap[Delivered]("delivered", "a count of bytes delivered by puts, for the harness (machines.Delivered)"),
	}
}

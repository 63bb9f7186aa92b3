// Package stacks holds the interfaces workloads call on a messaging stack.
// Each stack (mpich, aclmpl, shmem, ...) lives in its own sub-package with
// its real protocol code; it implements these interfaces for one rank.
//
// A stack opened on a machine is a World: one Rank per process. Every rank
// offers the base interface Rank; what else it offers depends on the stack
// (and sometimes on the machine): Comm (message passing), OneSided (puts,
// gets, quiet, fetch-and-increment, symmetric memory), RemoteCopy (ARMCI:
// strided and vector put/get/accumulate, fences, read-modify-write), and optional
// collectives (SendRecver, Bcaster, Reducer, BinarySwapReducer). A
// workload asks for what it needs with As (or a type assertion for an
// optional interface); a stack that lacks it gives a
// *machines.MissingCapability naming the interface.
//
// Layer: imports machines (the verbs a stack requires), sim and sim/mem.
// Each stack sub-package imports stacks, machines (and a capability package
// such as machines/lapi), sim, sim/mem and internal/strictyaml: never a
// concrete machine, a workload or the registry.
package stacks

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Wildcards for Recv.
const (
	AnySource = -1
	AnyTag    = -1
)

// Status describes a received message.
type Status struct {
	Source, Tag, Len int
}

// Request is a pending nonblocking operation.
type Request interface {
	// Wait blocks p until the operation completes.
	Wait(p *sim.Proc) (Status, error)
	// Test reports completion without blocking (it may progress the stack).
	Test(p *sim.Proc) (bool, Status, error)
}

// Rank is what every stack's rank offers: its number among Size, the CPU
// its program runs on (workloads fill and check buffers through it, Poke
// and Peek, as the program sees them: a stale cache line shows up as a
// corrupted delivery), and user buffers in its memory.
type Rank interface {
	Rank() int
	Size() int
	CPU() *mem.CPU
	// Buffer allocates n bytes of the rank's private memory for user data.
	Buffer(n int) (mem.Region, error)
}

// Copier is a rank whose program copies local memory with its machine's
// library memcpy (machines.Memcpy: the SX-4's vector move, elsewhere the
// CPU's copy loop), as a derived datatype's pack does.
type Copier interface {
	Memcpy(p *sim.Proc, dst, src mem.Addr, n int)
}

// Comm is one rank's point-to-point message passing: the MPI-like calls the
// workloads use. Buffers are regions of the rank's own memory, obtained
// from Buffer; payloads are real bytes.
type Comm interface {
	Rank
	Send(p *sim.Proc, buf mem.Region, dest, tag int) error
	Recv(p *sim.Proc, buf mem.Region, src, tag int) (Status, error)
	Isend(p *sim.Proc, buf mem.Region, dest, tag int) (Request, error)
	Irecv(p *sim.Proc, buf mem.Region, src, tag int) (Request, error)
}

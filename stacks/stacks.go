// Package stacks holds the interfaces workloads call on a messaging stack.
// Each stack (mpich, aclmpl, ...) lives in its own sub-package with its real
// protocol code; it implements these interfaces for one rank.
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

// Comm is one rank's point-to-point message passing: the MPI-like calls the
// workloads use. Buffers are regions of the rank's own memory, obtained
// from Buffer; payloads are real bytes.
type Comm interface {
	Rank() int
	Size() int
	// Buffer allocates n bytes of the rank's private memory for user data.
	Buffer(n int) (mem.Region, error)
	Send(p *sim.Proc, buf mem.Region, dest, tag int) error
	Recv(p *sim.Proc, buf mem.Region, src, tag int) (Status, error)
	Isend(p *sim.Proc, buf mem.Region, dest, tag int) (Request, error)
	Irecv(p *sim.Proc, buf mem.Region, src, tag int) (Request, error)
}

package stacks

import "github.com/msgsim/msgsim/machines"

// World is a stack opened on a machine: one rank per process, ready to
// use. The registry builds it (machine from its params, then the stack on
// it); workloads receive it and never see a concrete machine or stack.
type World struct {
	// Stack is the stack's name (for messages).
	Stack string
	// Title is how results and notes name the stack, e.g. "raw SHMEM".
	Title string
	// Machine is the machine the stack runs on: the benchmark harness asks
	// it for its own capabilities (machines.Barrier, machines.Delivered).
	Machine machines.Machine
	// Ranks are the processes' ranks, in rank order.
	Ranks []Rank
}

// Size is the number of ranks.
func (w *World) Size() int { return len(w.Ranks) }

// Missing is the error of user (a workload) needing what, an interface
// the world's stack does not offer.
func (w *World) Missing(user, what string) error {
	return &machines.MissingCapability{Machine: w.Machine.Name(), Stack: w.Stack, User: user, Capability: what}
}

// As returns every rank of w as interface C, or a *machines.MissingCapability
// naming what (a description of C) for user when the stack does not offer it.
func As[C any](w *World, user, what string) ([]C, error) {
	out := make([]C, len(w.Ranks))
	for i, r := range w.Ranks {
		c, ok := r.(C)
		if !ok {
			return nil, w.Missing(user, what)
		}
		out[i] = c
	}
	return out, nil
}

// Offers reports whether every rank of w implements C.
func Offers[C any](w *World) bool {
	for _, r := range w.Ranks {
		if _, ok := r.(C); !ok {
			return false
		}
	}
	return len(w.Ranks) > 0
}

// Interface is a rank interface by name, for listings.
type Interface struct {
	Name string // short name, e.g. "comm"
	What string // what it is
	Has  func(*World) bool
}

// Interfaces are the rank interfaces of this package, in listing order.
func Interfaces() []Interface {
	return []Interface{
		{"comm", "message passing (stacks.Comm)", Offers[Comm]},
		{"one-sided", "put, get, quiet, fetch-and-increment, symmetric memory (stacks.OneSided)", Offers[OneSided]},
		{"swap", "remote atomic swap (stacks.Swapper)", Offers[Swapper]},
		{"remote-copy", "ARMCI: strided and vector put/get/accumulate, fences, read-modify-write (stacks.RemoteCopy)", Offers[RemoteCopy]},
		{"sendrecv", "send-and-receive (stacks.SendRecver)", Offers[SendRecver]},
		{"bcast", "broadcast (stacks.Bcaster)", Offers[Bcaster]},
		{"reduce", "reduce (stacks.Reducer)", Offers[Reducer]},
		{"binary-swap", "binary-swap reduce (stacks.BinarySwapReducer)", Offers[BinarySwapReducer]},
		{"threads", "MPI threads: MPI_Init_thread levels, more threads per rank, communicators and MPI_Comm_dup (stacks.Threaded)", Offers[Threaded]},
		{"schedule", "scheduling points for the schedule explorer, simrun explore (stacks.Schedulable)", Offers[Schedulable]},
	}
}

// Footprint is optionally offered by a stack's ranks: the bytes of a
// rank's memory the stack itself holds besides user buffers (structures
// allocated when it was opened or on first use), when called with
// nonblocking calls or not. A workload checks a configuration's memory
// with it (and machines.Memory) before running.
type Footprint interface {
	FootprintBytes(nonblocking bool) int
}

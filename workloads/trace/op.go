// Package trace is the workload that replays a program: a SimGrid
// time-independent trace (what smpirun -trace-ti writes: an index file
// naming one file per rank) or a short hand-written op list in YAML (one
// list for every rank, with loops, and peers and sizes as expressions in
// rank and size). Both compile to the same op stream (Program: ParseIndex,
// CompileProgram), which Run replays through the scenario's stack on the
// scenario's machine:
// point-to-point ops call the stack's Send, Recv, Isend and Irecv;
// collectives use the stack's own algorithm where its ranks offer one
// (stacks.Bcaster, stacks.Reducer, a Barrier, an Alltoall), else a shared
// layer built from point-to-point that names its algorithm; compute is
// charged to the rank's CPU at the flops_per_second param. Every payload
// is a seeded pattern checked on delivery. A trace that cannot complete is
// a deadlock (or a livelock of a spinning stack) naming each waiting rank
// and the op it waits in. docs/trace.md is the user's guide.
//
// Layer: a workload: imports workloads, stacks, machines, sim, sim/mem,
// report, workloads/payload, internal/strictyaml and the checked-in traces
// (bench/traces, data only); never a concrete machine or stack.
package trace

import (
	"fmt"
	"slices"
)

// Kind is an action of a trace.
type Kind uint8

// The actions of SimGrid 3.32's time-independent traces (its replay's
// names, src/smpi/internals/smpi_replay.cpp), in the order listed.
const (
	Init Kind = iota
	Finalize
	CommSize
	CommSplit
	CommDup
	Send
	Isend
	Recv
	Irecv
	SendRecv
	Test
	Wait
	WaitAll
	Barrier
	Bcast
	Reduce
	Allreduce
	Alltoall
	Alltoallv
	Gather
	Gatherv
	Scatter
	Scatterv
	Allgather
	Allgatherv
	ReduceScatter
	Scan
	Exscan
	Compute
	Sleep
	numKinds
)

// kindNames are the actions as a trace spells them.
var kindNames = [numKinds]string{
	"init", "finalize", "comm_size", "comm_split", "comm_dup",
	"send", "isend", "recv", "irecv", "sendRecv", "test", "wait", "waitall",
	"barrier", "bcast", "reduce", "allreduce", "alltoall", "alltoallv",
	"gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
	"reducescatter", "scan", "exscan", "compute", "sleep",
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kinds are every action, in listing order.
func Kinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// kindByName finds an action by its trace name ("sendrecv" is accepted
// beside SimGrid's "sendRecv").
func kindByName(s string) (Kind, bool) {
	if s == "sendrecv" {
		return SendRecv, true
	}
	i := slices.Index(kindNames[:], s)
	return Kind(i), i >= 0
}

// Collective reports whether every rank takes part in k (on the world
// communicator: a time-independent trace does not say which communicator
// a collective used, and SimGrid's replay runs them all on the world).
func (k Kind) Collective() bool { return k >= Barrier && k <= Exscan }

// Rooted reports whether k has a root.
func (k Kind) Rooted() bool {
	switch k {
	case Bcast, Reduce, Gather, Gatherv, Scatter, Scatterv:
		return true
	}
	return false
}

// Wildcards as SimGrid's traces write them (MPI_ANY_SOURCE and
// MPI_ANY_TAG after its tracing's translation).
const (
	AnySource = -333
	AnyTag    = -444
)

// Pos is where an op comes from: a trace file's line and column, or a
// program's YAML line and column.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Op is one action of one rank, with every size in bytes (a trace's
// counts times the size of the datatype it names).
type Op struct {
	Kind Kind
	// Peer is the destination of a send, the source of a receive
	// (AnySource), the root of a rooted collective, the destination of a
	// sendRecv; Src is a sendRecv's source. Wait and Test name their
	// request by Src, Peer (its destination) and Tag.
	Peer, Src int
	Tag       int
	// Bytes is what the rank sends (a point-to-point message, its
	// contribution to a collective, a reduction's array; per destination
	// for alltoall); RecvBytes what it receives (sendRecv; per source for
	// alltoall, gather, allgather; scatter's block).
	Bytes, RecvBytes int
	// Counts are the per-rank bytes of a v-variant: sent to each rank
	// (alltoallv, scatterv at the root) or RecvCounts received from each
	// (alltoallv, gatherv at the root, allgatherv, reducescatter).
	Counts, RecvCounts []int
	// Flops is a compute's amount, Seconds a sleep's.
	Flops, Seconds float64
	// Size is comm_size's argument (0: none).
	Size int
	At   Pos
}

// Same reports whether o and p are the same op, wherever they come from.
func (o Op) Same(p Op) bool {
	o.At, p.At = Pos{}, Pos{}
	return o.Kind == p.Kind && o.Peer == p.Peer && o.Src == p.Src && o.Tag == p.Tag &&
		o.Bytes == p.Bytes && o.RecvBytes == p.RecvBytes && slices.Equal(o.Counts, p.Counts) &&
		slices.Equal(o.RecvCounts, p.RecvCounts) && o.Flops == p.Flops && o.Seconds == p.Seconds && o.Size == p.Size
}

// String shows an op as a trace line (sizes in bytes).
func (o Op) String() string {
	switch o.Kind {
	case Send, Isend, Recv, Irecv:
		return fmt.Sprintf("%s %d %d %dB", o.Kind, o.Peer, o.Tag, o.Bytes)
	case Wait, Test:
		return fmt.Sprintf("%s %d %d %d", o.Kind, o.Src, o.Peer, o.Tag)
	case Compute:
		return fmt.Sprintf("compute %g", o.Flops)
	case Sleep:
		return fmt.Sprintf("sleep %g", o.Seconds)
	}
	s := o.Kind.String()
	if o.Kind.Rooted() {
		s += fmt.Sprintf(" root %d", o.Peer)
	}
	if o.Bytes > 0 || o.RecvBytes > 0 {
		s += fmt.Sprintf(" %dB/%dB", o.Bytes, o.RecvBytes)
	}
	return s
}

// Program is the op stream of every rank.
type Program struct {
	// Source names where it came from (an index file, a program).
	Source string
	Ranks  [][]Op
}

// Size is the number of ranks.
func (p *Program) Size() int { return len(p.Ranks) }

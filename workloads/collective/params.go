// Package collective holds the six benchmark cases of papers/aclmpl-t3d.txt
// section 5, run over a messaging system on a T3D partition:
//
//	onetoall   PE 0 sends a message to every other PE      throughput_MBps
//	alltoone   every other PE sends a message to PE 0      throughput_MBps
//	alltoall   every PE sends a message to every other PE  throughput_MBps (per PE)
//	bcast      broadcast from PE 0                         time_s
//	reduce     reduction of int64 sums into PE 0           time_s
//	latency    one-word ping-pong between PEs 0 and 1      latency_us (half round trip)
//	table      the first five at one size and partition (Table 2): metrics
//	           alltoall_MBps, alltoone_MBps, onetoall_MBps, bcast_s, reduce_s
//
// Throughput is the bytes a PE sends (alltoall, onetoall) or receives
// (alltoone) divided by the time between two hardware barriers around the
// pattern. Each series names its system through the stack:
//
//	stack aclmpl, workload mode sync    synchronous ACLMPL (send, receive, send-and-receive, tree bcast/reduce)
//	stack aclmpl, workload mode async   asynchronous ACLMPL (Isend/Irecv; bcast and reduce trees over them)
//	stack shmem                         raw SHMEM puts through the machine (the paper's shared-memory reference)
//	stack mpich, mode sync or async     MPI on the T3D (stacks/mpich, device ch_t3d), blocking or nonblocking calls
//
// PVM is not modelled. Every delivered payload is checked against a seeded
// pattern shared read-only by all senders (each source sends its own
// window of one random stream); receivers reuse one buffer and compare it
// after every delivery. A corrupted or missing message becomes a Failure
// naming the PE, the offset and the simulated time.
package collective

import (
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/workloads"
)

// Modes of using a stack.
const (
	ModeSync  = "sync"  // blocking calls
	ModeAsync = "async" // nonblocking calls and waits
)

// Reduction algorithms.
const (
	ReduceTree       = "tree"
	ReduceBinarySwap = "binary-swap"
)

// Params are the workload's params (workload.params).
type Params struct {
	// PEs are the partition sizes; with several, Bytes must hold one size
	// and the rows have x_name "pes".
	PEs []int `yaml:"pes"`
	// Bytes are the message sizes; rows have x_name "bytes".
	Bytes []int `yaml:"bytes"`
	// Mode is sync (blocking calls) or async (nonblocking calls).
	Mode string `yaml:"mode"`
	// Reduce is the reduction algorithm of the reduce case: tree or
	// binary-swap (binary-swap needs stack aclmpl, mode sync).
	Reduce string `yaml:"reduce"`
	// ShmemOrder is the destination order of raw SHMEM all-to-all and
	// all-to-one: "ascending" is the straightforward loop over PEs 0..P-1
	// that every PE runs at once; "shifted" starts at the PE after one's own.
	ShmemOrder string `yaml:"shmem_order"`
}

func defaultParams(kind string) Params {
	p := Params{PEs: []int{2}, Bytes: []int{8}, Mode: ModeSync, Reduce: ReduceTree, ShmemOrder: "ascending"}
	if kind == "table" {
		p.PEs, p.Bytes = []int{32}, []int{1024}
	}
	return p
}

func parseParams(s workloads.Spec, kind string) (Params, error) {
	p := defaultParams(kind)
	field := s.Workload.ParamsField("workload")
	if err := strictyaml.DecodeAt(s.File, field, s.Workload.Params, &p); err != nil {
		return Params{}, err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s: %s", s.File, field, fmt.Sprintf(format, a...))
	}
	switch {
	case len(p.PEs) == 0 || len(p.Bytes) == 0:
		return Params{}, bad("pes and bytes must not be empty")
	case len(p.PEs) > 1 && len(p.Bytes) > 1:
		return Params{}, bad("sweep either pes or bytes, not both (pes %v, bytes %v)", p.PEs, p.Bytes)
	case p.Mode != ModeSync && p.Mode != ModeAsync:
		return Params{}, bad("mode must be %q or %q, got %q", ModeSync, ModeAsync, p.Mode)
	case p.Reduce != ReduceTree && p.Reduce != ReduceBinarySwap:
		return Params{}, bad("reduce must be %q or %q, got %q", ReduceTree, ReduceBinarySwap, p.Reduce)
	case p.ShmemOrder != "ascending" && p.ShmemOrder != "shifted":
		return Params{}, bad("shmem_order must be \"ascending\" or \"shifted\", got %q", p.ShmemOrder)
	}
	for _, n := range p.PEs {
		if n < 2 || n > 2048 {
			return Params{}, bad("pes must be between 2 and 2048, got %d", n)
		}
	}
	for _, b := range p.Bytes {
		if b < 0 || b > 64<<20 {
			return Params{}, bad("bytes must be between 0 and 64 MiB, got %d", b)
		}
		if kind == "reduce" && b%8 != 0 {
			return Params{}, bad("reduce sizes must be whole int64 elements (multiples of 8), got %d", b)
		}
	}
	if kind == "latency" && slices.Min(p.PEs) < 2 {
		return Params{}, bad("latency needs at least 2 PEs")
	}
	return p, nil
}

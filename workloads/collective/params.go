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

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/stacks/aclmpl"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
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
		if b < 0 {
			return Params{}, bad("bytes must not be negative, got %d", b)
		}
		if kind == "reduce" && b%8 != 0 {
			return Params{}, bad("reduce sizes must be whole int64 elements (multiples of 8), got %d", b)
		}
	}
	if kind == "latency" && (len(p.Bytes) != 1 || p.Bytes[0] != 8) {
		return Params{}, bad("latency bounces one 8-byte word: bytes does not apply (got %v)", p.Bytes)
	}
	return p, nil
}

// config is a series' decoded and validated params: the workload's, the
// machine's and the stack's.
type config struct {
	kind    string
	params  Params
	machine t3d.Params
	acl     aclmpl.Params // stack aclmpl
	mpi     mpich.Params  // stack mpich
	flip    *byteFlip     // tests only: an injected corruption
}

// configure decodes and validates everything a series needs before any
// run: workload, machine and stack params, and the memory of every case.
func configure(s workloads.Spec, kind string) (config, error) {
	c := config{kind: kind}
	var err error
	if c.params, err = parseParams(s, kind); err != nil {
		return c, err
	}
	if s.Machine.Name != t3d.Name {
		return c, fmt.Errorf("%s: workload %s runs on machine %q, not %q", s.File, s.Workload.Name, t3d.Name, s.Machine.Name)
	}
	if c.machine, err = t3d.ParseParams(s.File, s.Machine.ParamsField("machine"), s.Machine.Params); err != nil {
		return c, err
	}
	stackField := s.Stack.ParamsField("stack")
	switch s.Stack.Name {
	case aclmpl.Name:
		if c.acl, err = aclmpl.ParseParams(s.File, stackField, s.Stack.Params); err != nil {
			return c, err
		}
	case StackShmem:
		if s.Stack.Params != nil && s.Stack.Params.Kind != 0 && len(s.Stack.Params.Content) > 0 {
			return c, strictyaml.Errorf(s.File, s.Stack.Params, stackField, "raw SHMEM takes no params")
		}
		if kind == "bcast" || kind == "reduce" {
			return c, fmt.Errorf("%s: workload %s: raw SHMEM has no %s here (the paper shows SHMEM for the point-to-point patterns only)", s.File, kind, kind)
		}
	case mpich.Name:
		if c.mpi, err = mpich.ParamsFromYAMLAt(s.File, stackField, s.Stack.Params); err != nil {
			return c, err
		}
		if c.mpi.Device != mpich.DeviceT3D {
			return c, strictyaml.Errorf(s.File, at(s.Stack.Params, "device"), stackField+".device", "on the T3D, mpich runs with device: %s, not %s", mpich.DeviceT3D, c.mpi.Device)
		}
	default:
		return c, fmt.Errorf("%s: stack %q: workload %s runs over %q, %q or %q", s.File, s.Stack.Name, s.Workload.Name, aclmpl.Name, StackShmem, mpich.Name)
	}
	if c.params.Reduce == ReduceBinarySwap && (s.Stack.Name != aclmpl.Name || c.params.Mode != ModeSync) {
		return c, fmt.Errorf("%s: %s: reduce binary-swap is an ACLMPL synchronous algorithm (stack aclmpl, mode sync)", s.File, s.Workload.ParamsField("workload"))
	}
	for _, pes := range c.params.PEs {
		for _, n := range c.params.Bytes {
			for _, k := range cases(kind, s.Stack.Name) {
				if need, have := c.memoryNeed(s.Stack.Name, k, pes, n), c.machine.MemoryMB<<20; need > have {
					field := s.Workload.ParamsField("workload")
					return c, strictyaml.Errorf(s.File, at(s.Workload.Params, "bytes"), field+".bytes",
						"%s on %d PEs with %d-byte messages needs at least %d bytes of each PE's memory, more than memory_mb %d holds",
						k, pes, n, need, c.machine.MemoryMB)
				}
			}
		}
	}
	return c, nil
}

// memoryNeed is a lower bound of the bytes one PE allocates for case k on
// pes PEs with n-byte messages: the benchmark's buffers and the stack's
// fixed structures (messages the stack holds in flight come on top).
func (c config) memoryNeed(stack, k string, pes, n int) int {
	line := func(b int) int { return (b + 63) &^ 63 }
	need := 0
	switch k {
	case "onetoall", "alltoone", "alltoall":
		if stack == StackShmem {
			// The symmetric receive space (one slot per sender when it
			// fits) of PE 0 (alltoone) or of every PE (alltoall), plus
			// a send buffer for alltoall; one buffer for onetoall.
			recv := n
			if k != "onetoall" && (pes-1)*n <= shmemSlotBytes {
				recv = (pes - 1) * n
			}
			need = line(recv)
			if k == "alltoall" {
				need += line(n)
			}
			break
		}
		// The receive buffers of the root (alltoone) or of every PE
		// (alltoall); a send buffer besides them for alltoall.
		need = recvDepth(c.params.Mode, n, pes-1) * line(n)
		if k == "alltoall" {
			need += line(n)
		}
	case "bcast":
		need = line(n)
	case "reduce":
		need = 2 * line(n) // the buffer and the receive space of the tree
	case "latency":
		need = line(8)
	}
	switch stack {
	case aclmpl.Name:
		need += line(pes*16) + line(pes*8) + 64
		if c.params.Mode == ModeAsync {
			stride := (32 + c.acl.SlotBytes + 63) &^ 63
			need += c.acl.PoolSlots * stride
		}
	case mpich.Name:
		need += line(pes*c.mpi.RingPackets*(mpich.HeaderBytes+c.mpi.ShortBytes)) + line(pes*16)
	}
	return need
}

// at is the node of key in params, or params itself when the key is not
// there (inherited from the scenario's top level), for error positions.
func at(params *yaml.Node, key string) *yaml.Node {
	if n := strictyaml.Find(params, key); n != nil {
		return n
	}
	return params
}

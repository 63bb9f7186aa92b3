// Package collective holds the six benchmark cases of papers/aclmpl-t3d.txt
// section 5, run over a messaging system on a partition of any machine:
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
// (alltoone) divided by the time between two barriers around the pattern:
// the machine's barrier network when it has one (machines.Barrier, the
// T3D's), else an ideal harness barrier that releases every PE when the
// last arrives, at no cost (idealBarrier: the SX-4 has no barrier network;
// the measured time is the pattern's alone). Each series names its system
// through the stack, and the benchmark uses what the stack's ranks offer:
//
//	stacks.Comm (message passing), mode sync   blocking calls; the stack's own send-and-receive,
//	                                           broadcast and reduce when it offers them
//	                                           (stacks.SendRecver, Bcaster, Reducer, BinarySwapReducer:
//	                                           synchronous ACLMPL), else the same trees over Send/Recv
//	stacks.Comm, mode async                    Isend/Irecv and waits; bcast and reduce trees over them
//	stacks.OneSided only (stack shmem)         raw puts (the paper's shared-memory reference); no
//	                                           bcast or reduce
//
// So ACLMPL runs on any machine with one-sided puts (and
// fetch-and-increment for mode async), MPICH on the T3D (ch_t3d) and on
// the SX-4 (ch_shmem, ch_lfshmem), raw SHMEM on any machine with puts,
// gets and fetch-and-increment. A stack without what a case needs is a
// *machines.MissingCapability naming it.
//
// PVM (stacks/pvm) is message passing like MPI: its Send and Recv are
// psend and precv, its broadcast and reduce the group library's, called in
// either mode (stacks.SoleCollectives). Every delivered payload is checked against a seeded
// pattern shared read-only by all senders (each source sends its own
// window of one random stream); receivers reuse one buffer and compare it
// after every delivery. A corrupted or missing message becomes a Failure
// naming the PE, the offset and the simulated time.
//
// Layer: a workload: imports workloads, stacks, machines, sim, sim/mem,
// report, workloads/payload and internal/strictyaml; never a concrete
// machine or stack.
package collective

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
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
	// binary-swap (binary-swap is a stack's own algorithm,
	// stacks.BinarySwapReducer: ACLMPL's, mode sync).
	Reduce string `yaml:"reduce"`
	// ShmemOrder is the destination order of raw one-sided (SHMEM)
	// all-to-all: "ascending" is the straightforward loop over PEs 0..P-1
	// that every PE runs at once; "shifted" starts at the PE after one's own.
	ShmemOrder string `yaml:"shmem_order"`
}

// maxPEs bounds a partition size: the machine says how many PEs it holds
// (a T3D 2048, a what-if T3D-like torus up to 4,194,304 with its max_pes
// raised); the bound keeps a typo from asking for more.
const maxPEs = 1 << 22

// DefaultParams are the params of the workload of kind (onetoall,
// alltoone, alltoall, bcast, reduce, latency or table) when a scenario
// sets none.
func DefaultParams(kind string) Params { return defaultParams(kind) }

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
		if n < 2 || n > maxPEs {
			return Params{}, bad("pes must be between 2 and %d, got %d", maxPEs, n)
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

// config is a series' decoded and validated workload params and what the
// stack offers.
type config struct {
	kind     string
	params   Params
	oneSided bool      // the stack offers raw one-sided communication only
	title    string    // how notes name the stack (stacks.World.Title)
	flip     *byteFlip // tests only: an injected corruption
	// first is the world configure opened for the first partition when
	// the series is about to run (configureRun): the first point runs on
	// it instead of opening another (newPointOn). A world of a million PEs
	// costs seconds and gigabytes to build.
	first *opened
}

// opened is a world opened as a point opens it: its engine (the spec's,
// with its limits and observer) and the system over it.
type opened struct {
	eng *sim.Engine
	sys *system
}

// configure decodes and validates everything a series needs before any
// run: the workload's params, the stack's interfaces on every partition
// (opened as a run opens them), and the memory of every case.
func configure(s workloads.Spec, kind string) (config, error) {
	return configureKeep(s, kind, false)
}

// configureRun is configure for a series about to run: the first
// partition's world is opened as the first point opens its own, and kept
// for it (config.first).
func configureRun(s workloads.Spec, kind string) (config, error) {
	return configureKeep(s, kind, true)
}

func configureKeep(s workloads.Spec, kind string, keep bool) (config, error) {
	c := config{kind: kind}
	var err error
	if c.params, err = parseParams(s, kind); err != nil {
		return c, err
	}
	for i, pes := range c.params.PEs {
		eng := sim.NewEngine(s.Seed)
		if keep && i == 0 {
			eng = s.NewEngine(s.Seed)
		}
		w, err := s.OpenWorld(eng, pes)
		var se *strictyaml.Error
		var mc *machines.MissingCapability
		switch {
		case err != nil && !errors.As(err, &se) && !errors.As(err, &mc):
			// The machine cannot be built with this many PEs: the
			// workload's pes are at fault, at their line.
			why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), s.File+": "), "machine.params: ")
			at := fmt.Sprintf("pes[%d]", i)
			return c, strictyaml.Errorf(s.File, strictyaml.Find(s.Workload.Params, at), s.Workload.ParamsField("workload")+"."+at, "%d PEs cannot run on this machine: %s", pes, why)
		case err != nil:
			return c, err
		}
		y, err := newSystem(w, user(s), c.params.Mode, c.params.Reduce)
		if err != nil {
			return c, fmt.Errorf("%s: %w", s.File, err)
		}
		if keep && i == 0 {
			c.first = &opened{eng: eng, sys: y}
		}
		if i == 0 {
			c.oneSided, c.title = y.oneSided(), w.Title
		}
		if err := c.checkSystem(s, y); err != nil {
			return c, err
		}
		if err := c.checkMemory(s, y, pes); err != nil {
			return c, err
		}
	}
	return c, nil
}

// checkSystem checks that the stack offers what the cases need.
func (c config) checkSystem(s workloads.Spec, y *system) error {
	if y.oneSided() && (c.kind == "bcast" || c.kind == "reduce") {
		return fmt.Errorf("%s: %w", s.File, y.w.Missing(user(s), "message passing (stacks.Comm): the benchmark's "+c.kind+" runs over sends and receives (raw puts have none here: the paper shows SHMEM for the point-to-point patterns only)"))
	}
	if c.params.Reduce == ReduceBinarySwap {
		if c.params.Mode != ModeSync {
			return fmt.Errorf("%s: %s: reduce binary-swap is a stack's own synchronous algorithm (mode sync)", s.File, s.Workload.ParamsField("workload"))
		}
		if !stacks.Offers[stacks.BinarySwapReducer](y.w) {
			return fmt.Errorf("%s: %w", s.File, y.w.Missing(user(s), "a binary-swap reduce (stacks.BinarySwapReducer) for reduce: binary-swap"))
		}
	}
	return nil
}

// checkMemory checks every case on pes PEs against the memory the machine
// gives a process (machines.Memory), when it bounds it.
func (c config) checkMemory(s workloads.Spec, y *system, pes int) error {
	mm, ok := y.w.Machine.(machines.Memory)
	if !ok {
		return nil
	}
	stack := 0
	if f, ok := y.rank(0).(stacks.Footprint); ok {
		stack = f.FootprintBytes(c.params.Mode == ModeAsync)
	}
	for _, n := range c.params.Bytes {
		for _, k := range cases(c.kind, c.oneSided) {
			if need, have := c.memoryNeed(k, pes, n)+stack, mm.MemoryBytes(); need > have {
				field := s.Workload.ParamsField("workload")
				return strictyaml.Errorf(s.File, at(s.Workload.Params, "bytes"), field+".bytes",
					"%s on %d PEs with %d-byte messages needs at least %d bytes of each PE's memory, more than the %d bytes machine %s gives a process",
					k, pes, n, need, have, y.w.Machine.Name())
			}
		}
	}
	return nil
}

// memoryNeed is a lower bound of the bytes one PE allocates for its
// buffers in case k on pes PEs with n-byte messages (the stack's own
// structures, and messages it holds in flight, come on top).
func (c config) memoryNeed(k string, pes, n int) int {
	line := func(b int) int { return (b + 63) &^ 63 }
	need := 0
	switch k {
	case "onetoall", "alltoone", "alltoall":
		if c.oneSided {
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

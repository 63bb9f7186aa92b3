// Package sx4 models one shared-memory node of the NEC SX-4 as MPICH saw it
// in May 1996 (papers/mpich-sx4.txt): Unix processes, one per CPU, that
// share System V shared-memory segments of limited size; scalar caches that
// are not coherent and can only be flushed whole; stores that may become
// visible out of order; vector moves (memcpy) that bypass the cache; the
// NEC synchronization routines behind PKT_READY_SET, PKT_READY_IS_SET and
// PKT_COPYIN; a test-and-set instruction that synchronizes with memory; and
// System V semaphores as expensive system calls.
//
// All memory (shared segments and each process's private buffers) lives in
// one mem.Memory; each process has its own mem.CPU view of it.
//
// Calibrated parameters (everything else comes from hardware.yaml, the
// paper's text, or is an assumption stated at its field), each fitted by
// simrun calibrate from its file:
//
//	semop_us        680  <- Figure 1 (750 us short-message latency): calibration/sx4-semop.yaml
//	cache_flush_us  40   <- Figure 5 (80 us short, 120 us with two locks): calibration/sx4-cache-flush.yaml
//
// Parameters are checked when the machine is built: a value that is not a
// finite number in its plausible range is an error naming its YAML field
// (with file and line when it comes from a scenario), never a silently
// wrong result. The node's memory is bounded (node_memory_mb, an assumed
// 2 GB): an allocation beyond it is an error wrapping ErrMemoryFull.
//
// The per-packet software overhead of MPICH is a param of stacks/mpich
// (packet_cycles), fitted to Figure 6 at 0 bytes by
// calibration/mpich-packet.yaml.
//
// Layer: a machine: imports machines, sim and sim/mem. Stacks reach it
// through the machines interfaces only; the registry is the one package
// that imports it by name.
package sx4

import (
	"errors"
	"fmt"
	"github.com/msgsim/msgsim/machines/sysv"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Name is the machine's name in scenarios.
const Name = "sx4"

// MaxCPUs is the CPUs of one node: "1 to 32 CPUs" (hardware.yaml
// sx4.cpus_per_node).
const MaxCPUs = 32

// Machine is one SX-4 node running procs Unix processes.
type Machine struct {
	eng    *sim.Engine
	params Params
	mem    *mem.Memory
	cpus   []*mem.CPU
	shmMax int
	nshm   int
	sems   *sysv.Set // its System V semaphores
}

// New builds a node with procs processes (one per CPU).
func New(eng *sim.Engine, procs int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if procs < 1 || procs > MaxCPUs {
		return nil, fmt.Errorf("sx4: %d processes requested; a node has 1 to 32 CPUs (hardware.yaml sx4.cpus_per_node)", procs)
	}
	// Validate bounds every value, so these conversions cannot fail; they
	// are checked anyway, so a future wider range cannot overflow silently.
	semop, err := sim.FromFloat(params.SemopUs, sim.Microsecond)
	if err != nil {
		return nil, paramErrorf("semop_us", "%v", err)
	}
	shmMax := params.ShmMaxSegmentMB * (1 << 20)
	if shmMax > float64(params.NodeMemoryMB<<20) {
		return nil, paramErrorf("shm_max_segment_mb", "%g MB exceeds the node's memory (node_memory_mb %d)", params.ShmMaxSegmentMB, params.NodeMemoryMB)
	}
	m := &Machine{
		eng: eng, params: params, mem: mem.NewMemory("sx4", params.NodeMemoryMB<<20),
		shmMax: int(shmMax), sems: sysv.NewSet(Name, semop),
	}
	cfg := params.memConfig()
	for i := 0; i < procs; i++ {
		c, err := mem.NewCPU(eng, fmt.Sprintf("cpu%d", i), m.mem, cfg)
		if err != nil {
			return nil, fmt.Errorf("sx4: %w", err)
		}
		m.cpus = append(m.cpus, c)
	}
	return m, nil
}

// Name is "sx4".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of processes (CPUs).
func (m *Machine) Procs() int { return len(m.cpus) }

// Params is the model the machine was built with.
func (m *Machine) Params() Params { return m.params }

// Memory is the node's memory.
func (m *Machine) Memory() *mem.Memory { return m.mem }

// CPU is the processor running process rank.
func (m *Machine) CPU(rank int) *mem.CPU { return m.cpus[rank] }

// ErrMemoryFull is wrapped by the error of an allocation that does not fit
// in the node's memory (node_memory_mb).
var ErrMemoryFull = errors.New("node memory full")

// ShmGet creates a System V shared-memory segment of size bytes, visible to
// every process. It fails, like shmget, when size exceeds the system's
// segment limit (shm_max_segment_mb), and when the node's memory is full
// (node_memory_mb).
func (m *Machine) ShmGet(name string, size int) (mem.Segment, error) {
	if size < 0 {
		return mem.Segment{}, fmt.Errorf("sx4: shmget %q: negative size %d", name, size)
	}
	if size > m.shmMax {
		return mem.Segment{}, fmt.Errorf("sx4: shmget %q: %d bytes exceed the System V segment limit of %d bytes (shm_max_segment_mb %g)", name, size, m.shmMax, m.params.ShmMaxSegmentMB)
	}
	m.nshm++
	seg, err := m.alloc(fmt.Sprintf("shm%d:%s", m.nshm, name), size, 4096)
	if err != nil {
		return mem.Segment{}, fmt.Errorf("sx4: shmget %q: %w", name, err)
	}
	return seg, nil
}

// Private allocates size bytes of process rank's own address space. It
// fails when the node's memory is full (node_memory_mb).
func (m *Machine) Private(rank int, name string, size int) (mem.Region, error) {
	if size < 0 {
		return mem.Region{}, fmt.Errorf("sx4: rank %d: buffer %q: negative size %d", rank, name, size)
	}
	seg, err := m.alloc(fmt.Sprintf("rank%d:%s", rank, name), size, 128)
	if err != nil {
		return mem.Region{}, fmt.Errorf("sx4: rank %d: buffer %q: %w", rank, name, err)
	}
	return mem.Region{Mem: m.mem, Addr: seg.Base, Len: size}, nil
}

// alloc allocates a segment of the node's memory, checking the capacity
// before anything is allocated (so a huge request neither overflows nor
// exhausts the host's memory).
func (m *Machine) alloc(name string, size, align int) (mem.Segment, error) {
	capacity := m.params.NodeMemoryMB << 20
	used := m.mem.Used()
	if base := (used + align - 1) &^ (align - 1); size > capacity-base {
		return mem.Segment{}, fmt.Errorf("%w: %d bytes do not fit, %d of %d bytes in use (node_memory_mb %d)",
			ErrMemoryFull, size, used, capacity, m.params.NodeMemoryMB)
	}
	return m.mem.Alloc(name, size, align)
}

// Package challenge models the SGI Power Challenge on which the ARMCI
// paper ran its Figure 6 ("four processors of the SGI Power Challenge",
// papers/armci-sp.txt 3.2): a bus-based symmetric multiprocessor. Unix
// processes, one per CPU, share System V shared-memory segments of the one
// main memory; each MIPS R10000 has a write-back secondary cache kept
// coherent by snooping on the POWERpath-2 bus with the Illinois protocol
// (MESI: every line modified, exclusive, shared or invalid in each cache),
// so a load never sees a stale copy: a store to a line others hold
// invalidates their copies (an upgrade, or a read-exclusive on a miss), and
// their next load misses and reads it over the bus. Every miss, upgrade
// and write-back is a transaction on the one bus (sim/mem.Bus), which the
// processors' copies and their coherence traffic share. Locks are
// load-linked/store-conditional on a word of shared memory (the CPU's
// atomics take the line exclusive); IRIX also has System V semaphores, as
// system calls.
//
// Memory ordering: the R10000 as the Challenge used it is sequentially
// consistent ("the R10000 ... implements sequential consistency", its
// loads and stores appearing to others in program order, speculative
// execution notwithstanding: Yeager, "The MIPS R10000 superscalar
// microprocessor", IEEE Micro 16(2), 1996; Gharachorloo, Gupta and
// Hennessy's speculative techniques for SC, which the R10000 uses). The
// model has no store buffer others could see past: a litmus test on it
// (simrun litmus --machine challenge) is the sc model's.
//
// Nothing is calibrated: every default is a published figure of the
// machine or an assumption stated at its field (params.go). The stacks'
// software costs are their own, in cycles of this CPU.
//
// Layer: a machine: imports machines, sim and sim/mem. Stacks reach it
// through the machines verbs only; the registry is the one package that
// imports it by name.
package challenge

import (
	"errors"
	"fmt"
	"github.com/msgsim/msgsim/machines/sysv"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Name is the machine's name in scenarios.
const Name = "challenge"

// MaxCPUs is the most processors of a POWER CHALLENGE: 36 R10000s (SGI
// POWER CHALLENGE product literature; 18 with the R8000).
const MaxCPUs = 36

// Machine is one Power Challenge running procs Unix processes.
type Machine struct {
	eng    *sim.Engine
	params Params
	mem    *mem.Memory
	bus    *mem.Bus
	cpus   []*mem.CPU
	nshm   int
	sems   *sysv.Set // its System V semaphores
}

// New builds a Power Challenge with procs processes, one per CPU, their
// caches on one bus.
func New(eng *sim.Engine, procs int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if procs < 1 || procs > MaxCPUs {
		return nil, fmt.Errorf("%s: %d processes requested; a POWER CHALLENGE has 1 to %d processors", Name, procs, MaxCPUs)
	}
	semop, err := sim.FromFloat(params.SemopUs, sim.Microsecond)
	if err != nil {
		return nil, paramErrorf("semop_us", "%v", err)
	}
	bus, err := mem.NewBus(params.busConfig())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	m := &Machine{eng: eng, params: params, mem: mem.NewMemory(Name, params.NodeMemoryMB<<20), bus: bus, sems: sysv.NewSet(Name, semop)}
	cfg := params.memConfig()
	for i := 0; i < procs; i++ {
		c, err := mem.NewCPU(eng, fmt.Sprintf("cpu%d", i), m.mem, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		if err := bus.Attach(c); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		m.cpus = append(m.cpus, c)
	}
	return m, nil
}

// Name is "challenge".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of processes (CPUs).
func (m *Machine) Procs() int { return len(m.cpus) }

// Params is the model the machine was built with.
func (m *Machine) Params() Params { return m.params }

// Memory is the machine's main memory.
func (m *Machine) Memory() *mem.Memory { return m.mem }

// Bus is the POWERpath-2 bus (its transaction counts).
func (m *Machine) Bus() *mem.Bus { return m.bus }

// CPU is the processor running process rank.
func (m *Machine) CPU(rank int) *mem.CPU { return m.cpus[rank] }

// ErrMemoryFull is wrapped by the error of an allocation that does not fit
// in main memory (node_memory_mb).
var ErrMemoryFull = errors.New("main memory full")

// alloc allocates a segment of main memory, checking the capacity before
// anything is allocated.
func (m *Machine) alloc(name string, size, align int) (mem.Region, error) {
	if size < 0 {
		return mem.Region{}, fmt.Errorf("%s: %q: negative size %d", Name, name, size)
	}
	capacity := m.params.NodeMemoryMB << 20
	used := m.mem.Used()
	if base := (used + align - 1) &^ (align - 1); size > capacity-base {
		return mem.Region{}, fmt.Errorf("%s: %q: %w: %d bytes do not fit, %d of %d bytes in use (node_memory_mb %d)",
			Name, name, ErrMemoryFull, size, used, capacity, m.params.NodeMemoryMB)
	}
	seg, err := m.mem.Alloc(name, size, align)
	if err != nil {
		return mem.Region{}, fmt.Errorf("%s: %w", Name, err)
	}
	return mem.Region{Mem: m.mem, Addr: seg.Base, Len: size}, nil
}

package sci

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// LitmusTraits are the SCI cluster's choices for litmus tests (package
// litmus; papers/scampi-sci.txt 1.3 and 1.5.1): thread i is process i, on
// node i/procs_per_node (one thread per node by default), and each location
// lives in the memory of one node (its home: SCI shared memory is at the
// receiver, so by default the node of the first thread that loads it). A
// thread reaches a location of its own node with its Pentium II's loads and
// stores (coherent with the adapter's DMA), and a location of another node
// through the PCI-SCI adapter: a store is a posted remote write (it returns
// once its bytes are in the adapter; the packet crosses the ringlets, which
// reorder packets by up to reorder_ns, and lands later), a load a remote
// read round trip. A full or write barrier (smp_mb, MFENCE, smp_wmb,
// SFENCE) is SCI's MemBarrier: wait until every write the thread posted is
// globally performed (echoed); smp_rmb has nothing to do (loads perform in
// order: a remote read stalls the CPU, and the cache is coherent). That is
// the generic mapping on the cluster's verbs; the cluster sets when threads
// start, the instruction jitter (the fabric's reordering span) and why
// atomics are refused (the adapter's only atomic is
// fetch-and-increment-by-one, not a memory word's swap or add).
//
// So MP with both locations on the reader's node is observable (the flag's
// packet may overtake the data's: the flag-before-data pitfall of 1.5.1),
// and MP with a MemBarrier between the writer's stores is not.
func (m *Machine) LitmusTraits() machines.LitmusTraits {
	p := m.params
	return machines.LitmusTraits{
		Summary: "thread i on node i of a Scali SCI cluster, each location in one node's memory (--home): remote stores are posted writes the fabric reorders (--reorder-ns), remote loads round trips; smp_mb is MemBarrier; shows MP, SB, 2+2W across nodes, not their MemBarrier versions",
		Flags: []machines.LitmusFlag{
			{Name: "reorder-ns", Param: "reorder_ns", Usage: "with --machine sci: the largest extra delay of an SCI packet in the fabric (reorder_ns; the teaching scenarios use 3000)"},
		},
		Head:       fmt.Sprintf("SCI, reorder_ns %g", p.ReorderNs),
		Unit:       "node",
		ThreadUnit: "process",
		MaxUnits:   p.TorusW * p.TorusH,
		NoAtomics:  "swaps and adds on memory words are not SCI operations (the adapter's only atomic is fetch-and-increment-by-one)",
		Start: func(locs int, _ mem.Config) sim.Time {
			return sim.Time(float64(locs) * p.LoadNs * float64(sim.Nanosecond)) // after the warm-up loads (each a miss at most)
		},
		OpJitterCycles: func(_ float64, cpu mem.Config) float64 { return LitmusOpJitterCycles(p, cpu.ClockMHz) },
	}
}

// LitmusOpJitterCycles is the default instruction jitter span of litmus
// tests on an SCI cluster of params p: reorder_ns in CPU cycles of
// clockMHz, the span by which the fabric reorders packets, so that a
// reader's consecutive loads are often close enough to fall between two
// packets that landed out of order (a span of a whole write's latency
// makes that window, and MP's outcome, very rare).
func LitmusOpJitterCycles(p Params, clockMHz float64) float64 {
	return p.ReorderNs * clockMHz / 1000
}

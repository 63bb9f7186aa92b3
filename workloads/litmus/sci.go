package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// SCI is the Scali SCI cluster as a litmus machine (machines/sci,
// papers/scampi-sci.txt 1.3 and 1.5.1), built by build with params of
// which cfg holds what the runner reads: thread i is process i, on node
// i/procs_per_node (one thread per node by default), and each location
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
// the generic mapping of Machine on the cluster's verbs; SCI sets when
// threads start, the instruction jitter (the fabric's reordering span) and
// why atomics are refused (the adapter's only atomic is
// fetch-and-increment-by-one, not a memory word's swap or add).
//
// So MP with both locations on the reader's node is observable (the flag's
// packet may overtake the data's: the flag-before-data pitfall of 1.5.1),
// and MP with a MemBarrier between the writer's stores is not.
func SCI(build Builder, cfg SCIConfig) Machine {
	return Machine{
		Name:       "sci",
		Build:      build,
		Head:       fmt.Sprintf("SCI, reorder_ns %g", cfg.ReorderNs),
		Unit:       "node",
		ThreadUnit: "process",
		NoAtomics:  "swaps and adds on memory words are not SCI operations (the adapter's only atomic is fetch-and-increment-by-one)",
		Start: func(t Test, _ mem.Config) sim.Time {
			return sim.Time(float64(len(t.Locs)) * cfg.LoadNs * float64(sim.Nanosecond)) // after the warm-up loads (each a miss at most)
		},
		OpJitterCycles: func(_ float64, cpu mem.Config) float64 { return SCIOpJitterCycles(cfg, cpu.ClockMHz) },
	}
}

// SCIConfig is what the SCI runner reads of the machine's params.
type SCIConfig struct {
	LoadNs    float64 // a local load that misses (sci load_ns)
	ReorderNs float64 // the fabric's largest extra packet delay (sci reorder_ns)
}

// SCIOpJitterCycles is the default instruction jitter span on the SCI
// cluster: reorder_ns in CPU cycles of clockMHz, the span by which the
// fabric reorders packets, so that a reader's consecutive loads are often
// close enough to fall between two packets that landed out of order (a
// span of a whole write's latency makes that window, and MP's outcome,
// very rare).
func SCIOpJitterCycles(cfg SCIConfig, clockMHz float64) float64 {
	return cfg.ReorderNs * clockMHz / 1000
}

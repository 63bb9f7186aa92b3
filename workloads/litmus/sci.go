package litmus

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The Scali SCI cluster as a litmus machine (machines/sci,
// papers/scampi-sci.txt 1.3 and 1.5.1): thread i is process i, on node
// i/procs_per_node (one thread per node by default), and each location
// lives in the memory of one node (its home: SCI shared memory is at the
// receiver, so by default the node of the first thread that loads it, as
// DefaultT3DHomes chooses). A thread reaches a location of its own node
// with its Pentium II's loads and stores (coherent with the adapter's
// DMA), and a location of another node through the PCI-SCI adapter: a
// store is a posted remote write (it returns once its bytes are in the
// adapter; the packet crosses the ringlets, which reorder packets by up to
// reorder_ns, and lands later), a load a remote read round trip. A full
// or write barrier (smp_mb, MFENCE, smp_wmb, SFENCE) is SCI's MemBarrier:
// wait until every write the thread posted is globally performed (echoed);
// smp_rmb has nothing to do (loads perform in order: a remote read stalls
// the CPU). Atomics are not mapped (the adapter's only atomic is
// fetch-and-increment-by-one, not a memory word's swap or add).
//
// So MP with both locations on the reader's node is observable (the flag's
// packet may overtake the data's: the flag-before-data pitfall of 1.5.1),
// and MP with a MemBarrier between the writer's stores is not.

// SCIMachine is what RunSCI and SCIJitterCycles need of a machine: each
// process's CPU and node, each node's memory, SCI shared memory on a node,
// posted remote writes, remote reads and MemBarrier (machines/sci).
type SCIMachine interface {
	machines.Machine
	CPU(pe int) *mem.CPU
	NodeOf(pe int) int
	NodeMemory(n int) *mem.Memory
	AllocSCI(p *sim.Proc, nd int, name string, n int) (mem.Region, error)
	WriteWord(p *sim.Proc, pe, nd int, dst mem.Addr, v uint64)
	MemBarrier(p *sim.Proc, pe int)
	Read(p *sim.Proc, pe, nd int, src mem.Addr, n int) []byte
}

// SCIConfig is what the SCI runners read of the machine's params.
type SCIConfig struct {
	ClockMHz     float64 // the CPUs' clock (sci clock_MHz)
	LoadNs       float64 // a local load that misses (sci load_ns)
	ReorderNs    float64 // the fabric's largest extra packet delay (sci reorder_ns)
	ProcsPerNode int     // processes per node (sci procs_per_node)
}

// sciCapability names what SCIMachine needs, for MissingCapability.
const sciCapability = "SCI shared memory, posted remote writes, remote reads and MemBarrier, per-node memory (litmus.SCIMachine)"

// buildSCI builds a machine with build and asserts it is an SCIMachine.
func buildSCI(build Builder, eng *sim.Engine, procs int, user string) (SCIMachine, error) {
	m, err := build(eng, procs)
	if err != nil {
		return nil, err
	}
	return machines.Require[SCIMachine](m, user, sciCapability)
}

// SCIJitterCycles is the default start and instruction jitter span on
// the SCI cluster: twice the time, measured on the machine, for a remote
// write of one word to another node to be globally performed (WriteWord
// then MemBarrier), in CPU cycles, so that a reader may come before, while
// or after a write lands. build must put each process on a node of its
// own (procs_per_node 1).
func SCIJitterCycles(build Builder, cfg SCIConfig) (float64, error) {
	eng := sim.NewEngine(1)
	m, err := buildSCI(build, eng, 2, "litmus SCIJitterCycles")
	if err != nil {
		return 0, err
	}
	if m.NodeOf(0) == m.NodeOf(1) {
		return 0, fmt.Errorf("litmus SCIJitterCycles: the machine puts processes 0 and 1 on node %d; it needs them on two nodes (procs_per_node 1)", m.NodeOf(0))
	}
	r, err := m.AllocSCI(nil, 1, "word", 8)
	if err != nil {
		return 0, err
	}
	eng.Spawn("p0", func(p *sim.Proc) {
		m.WriteWord(p, 0, 1, r.Addr, 1)
		m.MemBarrier(p, 0)
	})
	if err := eng.Run(); err != nil {
		return 0, err
	}
	return 2 * eng.Now().Seconds() * cfg.ClockMHz * 1e6, nil
}

// SCIOpJitterCycles is the default instruction jitter span on the SCI
// cluster: reorder_ns in CPU cycles, the span by which the fabric
// reorders packets, so that a reader's consecutive loads are often close
// enough to fall between two packets that landed out of order (a span of
// a whole write's latency makes that window, and MP's outcome, very rare).
func SCIOpJitterCycles(cfg SCIConfig) float64 {
	return cfg.ReorderNs * cfg.ClockMHz / 1000
}

// DefaultSCIHomes puts each location on the node of the thread
// DefaultT3DHomes chooses (the first that loads it), placed as place says
// (nil: thread i as process i): SCI shared memory is at the receiver.
func DefaultSCIHomes(t Test, cfg SCIConfig, place []int) []int {
	homes := DefaultHomes(t, place)
	for l := range homes {
		homes[l] /= max(cfg.ProcsPerNode, 1)
	}
	return homes
}

// RunSCI runs test t opts.Runs times on an SCI cluster built by build,
// thread i as process opts.Place[i] (default i; on node
// process/procs_per_node, so with procs_per_node 1 a placement is of
// nodes), location l in the memory of node homes[l]. The jitters of opts are in the CPUs' clock
// cycles (SCIJitterCycles is a good default).
func RunSCI(t Test, build Builder, cfg SCIConfig, homes []int, opts Options) (*Outcome, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("litmus: runs must be positive, got %d", opts.Runs)
	}
	user := fmt.Sprintf("litmus %s", t.Name)
	procs, err := CheckPlace(t, opts.Place, "sci", "process", 0)
	if err != nil {
		return nil, err
	}
	probe, err := buildSCI(build, sim.NewEngine(1), procs, user)
	if err != nil {
		return nil, fmt.Errorf("litmus %s on sci: %w", t.Name, err)
	}
	nodes := probe.NodeOf(procs-1) + 1
	if err := checkHomes(t, "sci", "node", homes, nodes); err != nil {
		return nil, err
	}
	if err := checkNoAtomics(t, "sci", "swaps and adds on memory words are not SCI operations (the adapter's only atomic is fetch-and-increment-by-one)"); err != nil {
		return nil, err
	}
	if t.Cond.Prop == nil {
		return nil, fmt.Errorf("litmus %s: no final condition", t.Name)
	}
	return runRemote(t, opts, remoteMachine{
		name:     "sci",
		clockMHz: cfg.ClockMHz,
		homes:    homes,
		start:    sim.Time(float64(len(t.Locs)) * cfg.LoadNs * float64(sim.Nanosecond)), // after the warm-up loads (each a miss at most)
		build: func(eng *sim.Engine) (remoteRun, error) {
			m, err := buildSCI(build, eng, procs, user)
			if err != nil {
				return remoteRun{}, err
			}
			return remoteRun{
				alloc: func(h int, name string, n int) (mem.Region, error) {
					return m.AllocSCI(nil, h, name, n)
				},
				memory: m.NodeMemory,
				thread: func(th, pe int) (func(p *sim.Proc) remoteThread, error) {
					cpu, own := m.CPU(pe), m.NodeOf(pe)
					return func(p *sim.Proc) remoteThread {
						return remoteThread{
							own: own,
							cpu: cpu,
							get: func(h int, a mem.Addr) uint64 {
								return binary.LittleEndian.Uint64(m.Read(p, pe, h, a, 8))
							},
							put: func(h int, a mem.Addr, v uint64) { m.WriteWord(p, pe, h, a, v) },
							fence: func(k Kind) {
								if k != FenceR { // loads perform in order: a read barrier has nothing to wait for
									m.MemBarrier(p, pe)
								}
							},
						}
					}, nil
				},
			}, nil
		},
	})
}

package challenge

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The generic verbs (package machines) on the Power Challenge: one node
// whose processes share its memory through System V segments, with System
// V semaphores, and the atomics the R10000 builds from load-linked and
// store-conditional on any word of that memory (swap, fetch-and-increment).
// The library memcpy is the CPU's copy (no Copier): its misses are the
// bus's. There is no remote write, no remote read and no barrier network.
var (
	_ machines.Local          = (*Machine)(nil)
	_ machines.SharedSegments = (*Machine)(nil)
	_ machines.Semaphores     = (*Machine)(nil)
	_ machines.Swap           = (*Machine)(nil)
	_ machines.RemoteFetchInc = (*Machine)(nil)
	_ machines.Memory         = (*Machine)(nil)
)

// Alloc allocates n bytes of process pe's own address space (in the one
// main memory, cached like any other).
func (m *Machine) Alloc(pe int, name string, n int) (mem.Region, error) {
	return m.alloc(fmt.Sprintf("rank%d:%s", pe, name), n, m.params.CacheLineBytes)
}

// NodeOf is 0: every process runs on the one machine.
func (m *Machine) NodeOf(int) int { return 0 }

// SharedSegment is shmget of a System V segment of size bytes (page
// aligned). IRIX sets no segment limit below main memory here.
func (m *Machine) SharedSegment(node int, name string, size int) (mem.Region, error) {
	if node != 0 {
		return mem.Region{}, fmt.Errorf("%s: shmget %q on node %d: the machine is one node", Name, name, node)
	}
	m.nshm++
	return m.alloc(fmt.Sprintf("shm%d:%s", m.nshm, name), size, 4096)
}

// MemoryBytes is main memory (node_memory_mb), which the processes share.
func (m *Machine) MemoryBytes() int { return m.params.NodeMemoryMB << 20 }

// Swap is an atomic swap of the word at a (in shared memory) by process
// pe's CPU: load-linked, store-conditional, the line taken exclusive on
// the bus. target is the process whose memory holds a; all memory is one.
func (m *Machine) Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64 {
	return m.cpus[pe].Swap(p, a, v)
}

// FetchIncAt is an atomic fetch-and-increment of the word at a by process
// pe's CPU, by load-linked/store-conditional as Swap.
func (m *Machine) FetchIncAt(p *sim.Proc, pe, target int, a mem.Addr) uint64 {
	return m.cpus[pe].FetchAdd(p, a, 1)
}

// Semget creates a System V semaphore with an initial value and returns
// its id.
func (m *Machine) Semget(name string, initial int) int { return m.sems.Semget(name, initial) }

// Semop is the semop system call on semaphore id by process pe (see
// sysv.Set.Semop); each call costs semop_us.
func (m *Machine) Semop(p *sim.Proc, pe, id, delta int) error { return m.sems.Semop(p, pe, id, delta) }

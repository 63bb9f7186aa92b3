package sx4

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Remote writes on one SX-4 node, as SHMEM on a shared-memory machine
// gives them (SGI's SMP SHMEM does the same on its multiprocessors): every
// process has a symmetric heap in System V shared segments, which every
// other process has attached, so a put is a copy into another process's
// heap and a get a copy out of it.
//
//   - Map allocates the memory other processes write remotely in the owner's
//     heap. Processes that make the same allocations in the same order get
//     the same offsets, so an address in the caller's own heap names the
//     same offset of the target's heap (machines.SymmetricHeap): the
//     remote verbs translate it, as the T3D's hardware addresses the same
//     address on another PE.
//   - Put and Get are the library memcpy, the vector move that bypasses the
//     cache: "we bypass the cache altogether with the vector move
//     instructions ... This ensures that the data will be visible to all
//     processors when the instruction completes on one processor"
//     (mpich-sx4.txt section 5).
//   - PutWord is a scalar store, which may become visible out of order with
//     the process's other writes ("the order of writes to separate
//     locations might be altered", section 5); Quiet is the NEC
//     synchronization routine the paper names for that problem ("We solve
//     the sequential consistency problem by using the NEC routines",
//     section 5): the CPU's fence, which drains the store buffer.
//   - FetchIncAt is built from the test-and-set instruction (section 6):
//     a lock word in a shared segment around an uncached load and a store
//     of the incremented word, fenced before the lock is released.
//
// The node's remote writes are not ordered (no machines.OrderedWrites): a
// PutWord may land after a later Put.
var (
	_ machines.RemoteWrite    = (*Machine)(nil)
	_ machines.RemoteRead     = (*Machine)(nil)
	_ machines.RemoteFetchInc = (*Machine)(nil)
	_ machines.Mapper         = (*Machine)(nil)
	_ machines.SymmetricHeap  = (*Machine)(nil)
)

// heap is one process's symmetric heap: shared segments, each filled from
// its start.
type heap struct {
	chunks []mem.Region
	used   int // bytes used in the last chunk
}

// heapChunk is the size of a heap segment: the System V segment limit
// (shm_max_segment_mb), or less on a node whose memory cannot hold one per
// process.
func (m *Machine) heapChunk() int {
	return min(m.shmMax, max(1<<20, (m.params.NodeMemoryMB<<20)/(4*len(m.cpus))))
}

// Map allocates n bytes of process owner's symmetric heap (machines.Mapper):
// the heap's segments are created and attached by every process at start,
// so a map costs no time.
func (m *Machine) Map(_ *sim.Proc, _, owner int, name string, n int) (mem.Region, error) {
	if owner < 0 || owner >= len(m.cpus) {
		return mem.Region{}, fmt.Errorf("sx4: map %q: process %d out of range [0, %d)", name, owner, len(m.cpus))
	}
	if m.heaps == nil {
		// The lock of FetchIncAt, in a segment of its own, created with
		// the heaps.
		seg, err := m.ShmGet("fetch-and-increment lock", 128)
		if err != nil {
			return mem.Region{}, fmt.Errorf("sx4: fetch-and-increment lock: %w", err)
		}
		m.incLock = seg.Base
		m.heaps = make([]heap, len(m.cpus))
	}
	h := &m.heaps[owner]
	need := (n + 127) &^ 127
	if len(h.chunks) == 0 || h.used+need > h.chunks[len(h.chunks)-1].Len {
		size := max(m.heapChunk(), need)
		seg, err := m.ShmGet(fmt.Sprintf("heap%d.%d", owner, len(h.chunks)), size)
		if err != nil {
			return mem.Region{}, fmt.Errorf("sx4: process %d: symmetric heap for %q (%d bytes): %w", owner, name, n, err)
		}
		h.chunks = append(h.chunks, mem.Region{Mem: m.mem, Addr: seg.Base, Len: size})
		h.used = 0
	}
	c := h.chunks[len(h.chunks)-1]
	r := mem.Region{Mem: m.mem, Addr: c.Addr + mem.Addr(h.used), Len: n}
	h.used += need
	return r, nil
}

// SymmetricHeap marks the node's remote verbs as translating addresses in
// the caller's own heap to the target's.
func (m *Machine) SymmetricHeap() {}

// at is address a, named by process pe for process to: an address in pe's
// own heap names the same offset of to's heap; any other address is taken
// as it is (memory of to's heap that to allocated and gave out).
func (m *Machine) at(pe, to int, a mem.Addr, n int) mem.Addr {
	if pe == to || m.heaps == nil {
		return a
	}
	for k, c := range m.heaps[pe].chunks {
		if a >= c.Addr && a < c.Addr+mem.Addr(c.Len) {
			t := m.heaps[to].chunks
			if k >= len(t) || int(a-c.Addr)+n > t[k].Len {
				panic(fmt.Sprintf("sx4: process %d addresses %#x (its heap segment %d) at process %d, whose heap has no such segment (allocations not symmetric: a bug in the calling stack)", pe, a, k, to))
			}
			return t[k].Addr + (a - c.Addr)
		}
	}
	return a
}

func (m *Machine) checkPE(op string, pes ...int) {
	for _, x := range pes {
		if x < 0 || x >= len(m.cpus) {
			panic(fmt.Sprintf("sx4: %s: process %d out of range [0, %d)", op, x, len(m.cpus)))
		}
	}
}

// Put copies n bytes at src (pe's memory) into process to's heap with the
// vector move: visible to every processor when it returns. The vector move
// reads memory, not the store buffer: when pe has stores still buffered
// the put first synchronizes (the NEC routine, as Quiet), so that it
// carries what the program wrote.
func (m *Machine) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	m.checkPE("put", pe, to)
	if n <= 0 {
		return
	}
	c := m.cpus[pe]
	if c.Buffered() > 0 {
		c.Fence(p)
	}
	c.VectorCopy(p, m.at(pe, to, dst, n), src, n)
}

// PutWord stores v at dst in process to's heap: a scalar store, visible
// once pe's store buffer drains (Quiet).
func (m *Machine) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64) {
	m.checkPE("put", pe, to)
	m.cpus[pe].Store(p, m.at(pe, to, dst, 8), 8, v)
}

// Quiet is the NEC synchronization routine: pe's fence, which drains its
// store buffer, so every word it put is in memory.
func (m *Machine) Quiet(p *sim.Proc, pe int) { m.cpus[pe].Fence(p) }

// Get copies n bytes at src in process from's heap to dst with the vector
// move, which reads memory, never a stale cached line.
func (m *Machine) Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int) {
	m.checkPE("get", pe, from)
	if n <= 0 {
		return
	}
	m.cpus[pe].VectorCopy(p, dst, m.at(pe, from, src, n), n)
}

// FetchIncAt increments the word at a in process target's heap and returns
// its old value, under a lock built from the test-and-set instruction: the
// test-and-set "automatically synchronizes the processor with its memory"
// (section 6); the word is loaded uncached, stored incremented and fenced
// before the lock is released.
func (m *Machine) FetchIncAt(p *sim.Proc, pe, target int, a mem.Addr) uint64 {
	m.checkPE("fetch-and-increment", pe, target)
	c := m.cpus[pe]
	if m.heaps == nil {
		panic(fmt.Sprintf("sx4: fetch-and-increment by process %d of %#x at process %d: no heap memory was mapped (a bug in the calling stack: remotely written words come from Map)", pe, a, target))
	}
	lock := m.incLock
	for c.TestAndSet(p, lock) != 0 {
		c.SpinUntil(p, sim.Reason("sx4 fetch-and-increment: waiting for its lock"), func() bool { return c.LoadUncached(p, lock, 8) == 0 }, lock)
	}
	w := m.at(pe, target, a, 8)
	v := c.LoadUncached(p, w, 8)
	c.Store(p, w, 8, v+1)
	c.Fence(p)
	c.Store(p, lock, 8, 0)
	c.Fence(p)
	return v
}

package sx4

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The NEC-supplied C-callable synchronization routines (section 5): "we
// solve the cache coherency problem by using vector move instructions ...
// which bypass the cache. We solve the sequential consistency problem by
// using the NEC routines for the critical operations of setting and testing
// the bit indicating whether a packet slot is full".

// ReadySet is PKT_READY_SET: it stores v into the ready word at a so that
// every earlier store of this process is visible first and the ready word
// itself is visible on return (sync, store, sync).
func (m *Machine) ReadySet(p *sim.Proc, rank int, a mem.Addr, v uint64) {
	c := m.cpus[rank]
	c.Fence(p)
	c.Store(p, a, 8, v)
	c.Fence(p)
}

// ReadyIsSet is PKT_READY_IS_SET: it reads the ready word at a from memory,
// not from a (stale) copy in the cache.
func (m *Machine) ReadyIsSet(p *sim.Proc, rank int, a mem.Addr) bool {
	return m.cpus[rank].LoadUncached(p, a, 8) != 0
}

// CopyIn is PKT_COPYIN: it makes this process's earlier stores visible
// (the packet was built with scalar stores) and copies n bytes from src to
// dst with a vector move, which bypasses the cache: the data is visible to
// every processor when it returns.
func (m *Machine) CopyIn(p *sim.Proc, rank int, dst, src mem.Addr, n int) {
	c := m.cpus[rank]
	c.Fence(p)
	c.VectorCopy(p, dst, src, n)
}

// Memcpy is the library memcpy, a vector move at memcpy_mbps that bypasses
// the cache and the store buffer.
func (m *Machine) Memcpy(p *sim.Proc, rank int, dst, src mem.Addr, n int) {
	m.cpus[rank].VectorCopy(p, dst, src, n)
}

// TestAndSet is the test-and-set instruction on the word at a; it
// synchronizes the processor with its memory (drains its stores).
func (m *Machine) TestAndSet(p *sim.Proc, rank int, a mem.Addr) uint64 {
	return m.cpus[rank].TestAndSet(p, a)
}

// FlushCache invalidates process rank's whole scalar cache (the SX-4 has
// no single-line flush).
func (m *Machine) FlushCache(p *sim.Proc, rank int) { m.cpus[rank].FlushCache(p) }

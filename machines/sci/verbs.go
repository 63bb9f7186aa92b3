package sci

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The generic verbs (package machines) on the SCI cluster. A process
// reaches another's memory through its node: a remote write is the posted
// write of the bytes (the CPU's stores into the mapped segment), its
// completion MemBarrier; a remote read is the PCI read through both
// adapters; the remote atomic is the adapter's fetch-and-increment-by-one.
// Processes on one node share its memory with their own loads and stores.
var (
	_ machines.RemoteWrite    = (*Machine)(nil)
	_ machines.RemoteRead     = (*Machine)(nil)
	_ machines.RemoteFetchInc = (*Machine)(nil)
	_ machines.SharedSegments = (*Machine)(nil)
	_ machines.Checkpoints    = (*Machine)(nil)
	_ machines.Mapper         = (*Machine)(nil)
)

// Put posts a remote write of the n bytes at src in pe's node memory to
// dst in process to's node memory (Write of those bytes). Bytes the memory
// shares there (mem.Memory.SharedView: a payload stream's window, or a
// copy of one) go as WriteShared's, carried and landed without copies;
// the timing is the same.
func (m *Machine) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	mem.VerbPoint(p, m.NodeMemory(m.procs[to].node), "puts to", dst, n)
	x := m.procs[pe]
	nm := m.nodes[x.node].mem
	if sh, ok := nm.SharedView(src, n); ok {
		m.write(p, pe, m.procs[to].node, dst, sh, true)
		return
	}
	buf := m.scratch(n)
	nm.Read(src, buf)
	m.write(p, pe, m.procs[to].node, dst, buf, false)
	m.putBufs = append(m.putBufs, buf)
}

// PutWord posts a remote write of an 8-byte word to dst in process to's
// node memory.
func (m *Machine) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64) {
	mem.VerbPoint(p, m.NodeMemory(m.procs[to].node), "puts a word to", dst, 8)
	m.WriteWord(p, pe, m.procs[to].node, dst, v)
}

// Quiet is MemBarrier.
func (m *Machine) Quiet(p *sim.Proc, pe int) { m.MemBarrier(p, pe) }

// Get reads n bytes at src in process from's node memory into dst in pe's
// node memory: the remote read's round trips, then the CPU's stores of the
// bytes (through its cache).
func (m *Machine) Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int) {
	mem.VerbPoint(p, m.NodeMemory(m.procs[from].node), "gets from", src, n)
	b := m.Read(p, pe, m.procs[from].node, src, n)
	m.procs[pe].cpu.Poke(dst, b)
}

// FetchIncAt is the adapter's fetch-and-increment-by-one of the word at a
// in process target's node memory.
func (m *Machine) FetchIncAt(p *sim.Proc, pe, target int, a mem.Addr) uint64 {
	mem.VerbPoint(p, m.NodeMemory(m.procs[target].node), "fetch-and-increments remotely", a, 8)
	return m.FetchInc(p, pe, m.procs[target].node, a)
}

// SharedSegment allocates size bytes of node's memory, which its
// processes share.
func (m *Machine) SharedSegment(node int, name string, size int) (mem.Region, error) {
	return m.alloc(node, "shm."+name, size)
}

// Map creates and maps an SCI segment of n bytes in owner's node memory
// (AllocSCI: p pays the driver's cost).
func (m *Machine) Map(p *sim.Proc, pe, owner int, name string, n int) (mem.Region, error) {
	return m.AllocSCI(p, m.procs[owner].node, name, n)
}

// scratch is a buffer of at least n bytes for a Put's source bytes
// (write copies them into its packets), taken from the free ones: a Put
// sleeps while its bytes cross the PCI bus, and other processes' Puts run
// meanwhile.
func (m *Machine) scratch(n int) []byte {
	if k := len(m.putBufs); k > 0 {
		b := m.putBufs[k-1]
		m.putBufs = m.putBufs[:k-1]
		if cap(b) >= n {
			return b[:n]
		}
	}
	return make([]byte, n)
}

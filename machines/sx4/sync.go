package sx4

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The NEC-supplied synchronization routines of section 5 (PKT_READY_SET,
// PKT_READY_IS_SET, PKT_COPYIN) are fences, uncached loads and vector moves
// of the CPU (sim/mem.CPU): the stacks that use them compose them there.

// Memcpy is the library memcpy, a vector move at memcpy_mbps that bypasses
// the cache and the store buffer.
func (m *Machine) Memcpy(p *sim.Proc, rank int, dst, src mem.Addr, n int) {
	m.cpus[rank].VectorCopy(p, dst, src, n)
}

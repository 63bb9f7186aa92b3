package sx4

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
)

// The generic verbs (package machines) on the SX-4: one node whose
// processes share its memory through System V segments, with System V
// semaphores and the library memcpy's vector move; its remote writes and
// reads are in remote.go.
var (
	_ machines.Local          = (*Machine)(nil)
	_ machines.SharedSegments = (*Machine)(nil)
	_ machines.Semaphores     = (*Machine)(nil)
	_ machines.Copier         = (*Machine)(nil)
	_ machines.Memory         = (*Machine)(nil)
)

// Alloc allocates n bytes of process pe's own address space (Private).
func (m *Machine) Alloc(pe int, name string, n int) (mem.Region, error) {
	return m.Private(pe, name, n)
}

// NodeOf is 0: every process runs on the one node.
func (m *Machine) NodeOf(int) int { return 0 }

// SharedSegment is shmget of a System V segment of size bytes on the
// node (ShmGet).
func (m *Machine) SharedSegment(node int, name string, size int) (mem.Region, error) {
	seg, err := m.ShmGet(name, size)
	if err != nil {
		return mem.Region{}, err
	}
	return mem.Region{Mem: m.mem, Addr: seg.Base, Len: size}, nil
}

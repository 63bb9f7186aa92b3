package t3d

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
)

// WritesInOrder: a PE's puts to another PE take one fixed route (dimension
// order) through links that keep order, so they land in the order issued.
func (m *Machine) WritesInOrder() {}

// NewThreadCore is PE pe's one Alpha 21064 as the threads of its process
// time-share it (machines.Threads): each change of the thread working
// costs thread_switch_cycles.
func (m *Machine) NewThreadCore(pe int, name string) *sim.Core {
	c := m.eng.NewCore(name, false)
	c.SetSwitch(m.CPU(pe).Clock().Cycles(m.params.ThreadSwitchCycles))
	return c
}

// The generic verbs (package machines) the T3D offers: SHMEM's put with
// quiet and get, the fetch-and-increment register, the atomic swap and the
// barrier network. Its PEs share no memory.
var (
	_ machines.RemoteWrite      = (*Machine)(nil)
	_ machines.OrderedWrites    = (*Machine)(nil)
	_ machines.RemoteRead       = (*Machine)(nil)
	_ machines.FetchIncRegister = (*Machine)(nil)
	_ machines.Swap             = (*Machine)(nil)
	_ machines.Barrier          = (*Machine)(nil)
	_ machines.Memory           = (*Machine)(nil)
	_ machines.Delivered        = (*Machine)(nil)
	_ machines.Threads          = (*Machine)(nil)
)

package t3d

import "github.com/msgsim/msgsim/machines"

// WritesInOrder: a PE's puts to another PE take one fixed route (dimension
// order) through links that keep order, so they land in the order issued.
func (m *Machine) WritesInOrder() {}

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
)

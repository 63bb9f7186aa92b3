package t3d

import "github.com/msgsim/msgsim/machines"

// The T3D offers every capability the stacks and the harness use; these
// fail to compile if a method's signature drifts.
var (
	_ machines.Memory    = (*Machine)(nil)
	_ machines.OneSided  = (*Machine)(nil)
	_ machines.Get       = (*Machine)(nil)
	_ machines.FetchInc  = (*Machine)(nil)
	_ machines.Barrier   = (*Machine)(nil)
	_ machines.Delivered = (*Machine)(nil)
)

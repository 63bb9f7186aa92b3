package aclmpl

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory ACLMPL's ranks take: each rank's
// protocol state (its request and completion blocks' addresses, the
// asynchronous protocol's bookkeeping), stated with a margin over what
// TestSetupMemoryStated in registry measures. Nothing of it grows with the
// pairs of ranks: the request and completion arrays indexed by peer are
// simulated memory, built a line at a time when written, and the
// asynchronous protocol's per-peer lists are built when it is first used
// (on the T3D, a rank and its PE took 1,489 bytes at 256 PEs and 1,353 at
// 1,024).
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 300, What: "aclmpl: each rank's protocol state"}
}

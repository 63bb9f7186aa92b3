package aclmpl

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory ACLMPL's ranks take: each rank's
// protocol state (request and completion words, the asynchronous
// protocol's buffer bookkeeping); measured about 200 bytes a rank and
// under 2 bytes a pair (TestSetupMemoryStated in registry), stated with a
// margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 300, PerPair: 3, What: "aclmpl: each rank's protocol state"}
}

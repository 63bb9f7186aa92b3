package sp

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the SP model takes per node: its
// CPU, memory, LAPI endpoint (counters, handlers) and switch adapter;
// measured 4.2 to 5.2 KB a node from 8 to 256 nodes
// (TestSetupMemoryStated in registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 6.5e3, What: "sp: each node's CPU, memory, LAPI endpoint and adapter"}
}

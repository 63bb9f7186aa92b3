package sx4

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the SX-4 model takes per CPU: its
// mem.CPU (cache tags, store buffer) and its share of the node; measured
// about 1.5 KB a CPU (TestSetupMemoryStated in registry), stated with a
// margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 2e3, MaxProcs: MaxCPUs, What: "sx4: each CPU's model (cache, store buffer)"}
}

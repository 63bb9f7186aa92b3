package challenge

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the Power Challenge model takes per
// CPU: its mem.CPU and cache on the snooping bus; measured about 0.7 KB
// a CPU (TestSetupMemoryStated in registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 1e3, MaxProcs: MaxCPUs, What: "challenge: each CPU's model and cache"}
}

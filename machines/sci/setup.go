package sci

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the SCI model takes per process:
// its node's CPUs, memory, PCI bus and adapter, and its ringlet links;
// measured about 3.8 KB a process (TestSetupMemoryStated in registry),
// stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 5e3, What: "sci: each node's CPUs, memory, PCI bus, adapter and links"}
}

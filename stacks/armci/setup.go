package armci

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory ARMCI's ranks take: each rank's
// port state and, on LAPI, its per-peer counters and address tables;
// measured up to 450 bytes a rank and 160 bytes a pair (the LAPI port;
// the others about 2) (TestSetupMemoryStated in registry), stated with a
// margin for the largest port.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 600, PerPair: 200, What: "armci: each rank's port state and per-peer counters and address tables"}
}

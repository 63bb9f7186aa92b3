package shmem

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory raw SHMEM's ranks take (each
// rank's symmetric heap bookkeeping); measured under 100 bytes a rank
// (TestSetupMemoryStated in registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 150, PerPair: 4, What: "shmem: each rank's symmetric heap"}
}

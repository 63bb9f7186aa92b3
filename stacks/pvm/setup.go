package pvm

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory PVM's tasks take: each task's
// receive queue and group state and, per peer, its ring's bookkeeping
// (the rings themselves live in simulated memory, allocated when
// touched); measured at about 25 bytes a pair beside the T3D's own per-PE
// state (TestSetupMemoryStated in registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 1e3, PerPair: 48, What: "pvm: each task's receive queue and per-peer ring bookkeeping"}
}

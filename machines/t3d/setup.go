package t3d

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the T3D model takes per PE: its
// mem.CPU, memory, fetch-and-increment register and torus router;
// measured about 1.2 KB a PE from 8 to 256 PEs (TestSetupMemoryStated
// in registry), stated with a margin. memory_mb costs nothing here: a
// PE's memory is allocated when touched.
func (p Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 1.6e3, MaxProcs: p.MaxPEs, What: "t3d: each PE's CPU, memory and router"}
}

package tcpcluster

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory the cluster model takes per
// process: its CPU, kernel (socket tables, scheduler) and share of a node
// and NIC; measured about 1.9 KB a process (TestSetupMemoryStated in
// registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 2.5e3, MaxProcs: MaxProcs, What: "tcpcluster: each process's CPU, kernel state and NIC share"}
}

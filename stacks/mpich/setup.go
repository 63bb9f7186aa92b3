package mpich

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory MPICH's device takes: each
// process's device and, per peer, its counters (ch_t3d: credits, eager
// buffers and sequence numbers seen; ch_lfshmem: slot bookkeeping;
// ch3:sock: a connection's state). Measured (TestSetupMemoryStated in
// registry) up to 2.5 KB a process and 30 (ch_shmem), 106 (ch_lfshmem),
// 92 (ch_t3d) and 151 (ch3:sock) bytes a pair; stated with a margin.
func (p Params) SetupMemory() machines.Setup {
	s := machines.Setup{PerProc: 3e3, What: "mpich " + p.Device + ": each process's device and its per-peer counters"}
	switch p.Device {
	case DeviceShmem:
		s.PerPair = 40
	case DeviceLFShmem:
		s.PerPair = 130
	case DeviceT3D:
		s.PerPair = 120
	default: // ch3:sock
		s.PerPair = 190
	}
	return s
}

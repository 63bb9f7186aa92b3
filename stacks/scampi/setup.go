package scampi

import "github.com/msgsim/msgsim/machines"

// SetupMemory is the simulator memory ScaMPI's ranks take: each rank's
// channel table and, per peer, its channel's sequence numbers and
// acknowledgement words (the buffers themselves are allocated on first
// use, in simulated memory); measured up to 780 bytes a rank and 13
// bytes a pair (TestSetupMemoryStated in registry), stated with a margin.
func (Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 1e3, PerPair: 16, What: "scampi: each rank's channel table and per-peer sequence numbers"}
}

// RetryBytes: ScaMPI writes a transfer again while its checkpoint fails
// (Figure 1.2's loop), a data buffer (buffer_bytes) at most, so a
// machine's faults multiply its work.
func (p Params) RetryBytes() int { return p.BufferBytes }

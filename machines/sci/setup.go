package sci

import (
	"math"

	"github.com/msgsim/msgsim/machines"
)

// SetupMemory is the simulator memory the SCI model takes per process:
// its node's CPUs, memory, PCI bus and adapter, and its ringlet links;
// measured about 3.8 KB a process (TestSetupMemoryStated in registry),
// stated with a margin.
func (p Params) SetupMemory() machines.Setup {
	return machines.Setup{PerProc: 5e3, MaxProcs: p.TorusW * p.TorusH * p.ProcsPerNode, What: "sci: each node's CPUs, memory, PCI bus, adapter and links"}
}

// ExpectedAttempts is the expected number of attempts until a write of n
// bytes lands with none of its 64-byte packets hit by a CRC error
// (crc_error_rate per packet): 1/(1-rate)^packets. A stack that retries
// a whole transfer after a failed checkpoint (ScaMPI, Figure 1.2) pays
// it; at rate 0.5 a 16 KB chunk (256 packets) takes about 1e77 attempts.
func (p Params) ExpectedAttempts(n int) float64 {
	if p.CRCErrorRate <= 0 {
		return 1
	}
	packets := max(1, (n+63)/64)
	return math.Pow(1-p.CRCErrorRate, -float64(packets))
}

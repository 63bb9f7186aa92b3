package scampi

import (
	"github.com/msgsim/msgsim/machines"
)

// Params are the stack's params (stack.params): the monitor's options
// (scampi-sci.txt 1.5.2: "customizing set-up of SCI memory allocation,
// buffer sizes, barrier fanin/fanout") and the safeguards a teaching
// scenario may turn off.
type Params struct {
	// Slots is the number of 64-byte envelopes in each channel's ring at
	// the receiver. Not stated; assumed 64 (4 KB per sender).
	Slots int `yaml:"slots"`
	// Buffers and BufferBytes are each channel's pool of data buffers at
	// the receiver, for messages longer than the envelope's 32 bytes. Not
	// stated; assumed 4 x 16 KB.
	Buffers     int `yaml:"buffers"`
	BufferBytes int `yaml:"buffer_bytes"`
	// InitAllChannels allocates every channel when the stack opens instead
	// of on first use ("ScaMPI can be set to initialize all the
	// communication channels at startup time", 1.5.2). Default: first use.
	InitAllChannels bool `yaml:"init_all_channels"`
	// SendCycles and RecvCycles are ScaMPI's software per message on the
	// sending and the receiving side (MPI call, matching, envelope and its
	// CRC, status). Calibrated by calibration/sci-scampi.yaml to the 4.5
	// us intra-node ping-pong latency (scampi-sci.txt 1.6; calibration.yaml
	// sci_scampi.intranode_latency_us), split evenly.
	SendCycles float64 `yaml:"send_cycles"`
	RecvCycles float64 `yaml:"recv_cycles"`
	// BarrierFanIn is the fan-in (and fan-out) of the barrier's tree
	// ("barrier fanin/fanout", 1.5.2). Assumed 4.
	BarrierFanIn int `yaml:"barrier_fanin"`
	// AlltoallSwitchNodes is the node count from which MPI_Alltoall uses
	// its algorithm for large configurations ("The shift in performance
	// between 8 and 16 nodes is caused by a change of the algorithm",
	// 1.6.2): 16.
	AlltoallSwitchNodes int `yaml:"alltoall_switch_nodes"`

	// Safeguards (teaching scenarios turn one off).

	// MemBarrier: call MemBarrier before EndCheckPoint (Figure 1.2).
	MemBarrier bool `yaml:"mem_barrier"`
	// EnvelopeCRC: check the envelope's CRC before consuming it (1.5.1).
	EnvelopeCRC bool `yaml:"envelope_crc"`
	// Invalidate: drop the cached copies of a channel's envelopes and data
	// buffers, which the sender writes, before reading them through the
	// cache. Nothing to do on a coherent cache (SCI's Pentium II); on one
	// that remote writes do not update (the T3D's) a receiver without it
	// reads stale lines: a stale envelope is a reported corruption, stale
	// data a corrupted delivery.
	Invalidate bool `yaml:"invalidate"`
	// WriteIndex replaces the envelope's sequence number as the ready
	// test by a two-byte write index per channel that the receiver polls
	// (section 1.5.1's ring-buffer example): "" (the default: sequence
	// numbers), "whole" (the index written as one two-byte entity) or
	// "bytewise" (one byte at a time: the paper's catastrophic wrap).
	WriteIndex string `yaml:"write_index"`
}

// DefaultParams are ScaMPI's defaults.
func DefaultParams() Params {
	return Params{
		Slots: 64, Buffers: 4, BufferBytes: 16384,
		SendCycles: 677, RecvCycles: 677,
		BarrierFanIn: 4, AlltoallSwitchNodes: 16,
		MemBarrier: true, EnvelopeCRC: true, Invalidate: true,
	}
}

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("send_cycles", p.SendCycles, 0, 1e7, "cycles"),
			machines.Float("recv_cycles", p.RecvCycles, 0, 1e7, "cycles"),
		}, []machines.IntRange{
			machines.Int("slots", p.Slots, 2, 1<<16, "envelopes"),
			machines.Int("buffers", p.Buffers, 1, 1024, "buffers"),
			machines.Int("buffer_bytes", p.BufferBytes, 64, 1<<24, "bytes"),
			machines.Int("barrier_fanin", p.BarrierFanIn, 1, 1024, ""),
			machines.Int("alltoall_switch_nodes", p.AlltoallSwitchNodes, 2, 1<<16, "nodes"),
		}
}

// Validate checks the params and names the first bad one.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	if err := machines.CheckRanges(Name, floats, ints); err != nil {
		return err
	}
	if p.BufferBytes%64 != 0 {
		return machines.ParamErrorf(Name, "buffer_bytes", "%d is not a multiple of 64", p.BufferBytes)
	}
	switch p.WriteIndex {
	case "", "whole", "bytewise":
	default:
		return machines.ParamErrorf(Name, "write_index", "%q: want \"\" (sequence numbers), \"whole\" or \"bytewise\"", p.WriteIndex)
	}
	if p.WriteIndex != "" && p.Slots > 256 {
		return machines.ParamErrorf(Name, "slots", "%d slots with a two-byte write index: at most 256", p.Slots)
	}
	return nil
}

package mpich

import "github.com/msgsim/msgsim/sim/mem"

// MPICH's code as the processor's instruction cache sees it. The software
// a packet pays (packet_cycles on each side, and once per collective call)
// runs through the layers of a portable library: the MPI binding with its
// argument checks, the communicator and datatype handling that serves
// MPI's goal of "supporting heterogeneous data types and computers"
// (papers/aclmpl-t3d.txt section 3), the abstract device interface with
// its requests (MPI_Send is MPI_Isend and MPI_Wait here: synchronous
// layered on asynchronous, which section 4 says "introduces additional
// overhead (extra function calls, buffering, etc.)"), and the device.
// Each path is laid out as code, one Alpha instruction (4 bytes) per
// cycle of its software (assumed: a layered path runs straight through
// its layers, with few loops; the paper gives no instruction counts), the
// send path, the receive path and the collective path one after the other
// in the library's text. mem.CPU.Execute runs them through the CPU's
// instruction cache where the machine has one: on the T3D an 8 KB
// direct-mapped cache (machines/t3d icache_kb), which the send and receive
// paths (6.8 KB each) do not fit together, so a process that alternates
// between sending and receiving refetches the lines the other path
// evicted ("the T3D is extremely instruction cache sensitive", section 5,
// Table 1). Where the machine models no instruction cache (the SX-4,
// where calibration/mpich-packet.yaml fits packet_cycles) Execute is the same Compute as
// before.
const instrBytes = 4 // an Alpha instruction

// codeBytes is the footprint of one path of packet_cycles instructions.
func (p Params) codeBytes() int { return int(p.PacketCycles) * instrBytes }

// sendCode, recvCode and collCode are the send path (MPI_Send down to the
// device, one packet), the receive path (the device up to a completed
// receive) and a collective call's entry.
func (p Params) sendCode() mem.Code { return mem.Code{Addr: 0, Bytes: p.codeBytes()} }
func (p Params) recvCode() mem.Code {
	return mem.Code{Addr: mem.Addr(p.codeBytes()), Bytes: p.codeBytes()}
}
func (p Params) collCode() mem.Code {
	return mem.Code{Addr: mem.Addr(2 * p.codeBytes()), Bytes: p.codeBytes()}
}

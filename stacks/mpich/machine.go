package mpich

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Machine is what the protocol layer (Rank: the short, eager and
// rendezvous protocols, matching, requests) needs from a machine, whatever
// the device: the number of processes, each process's CPU (the software
// cost of the protocol code, the scalar stores that build a packet), its
// private memory, and the library memcpy. Everything else a protocol does
// goes through the Device. machines/sx4.Machine provides Machine as it
// is; ch_t3d adapts machines/t3d (t3dHost).
type Machine interface {
	Procs() int
	CPU(rank int) *mem.CPU
	Private(rank int, name string, size int) (mem.Region, error)
	Memcpy(p *sim.Proc, rank int, dst, src mem.Addr, n int)
}

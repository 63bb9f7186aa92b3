package mpich

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The protocol layer (Rank: the short, eager and rendezvous protocols,
// matching, requests) needs from a machine, whatever the device, only the
// verb machines.Local: the number of processes, each process's CPU (the
// software cost of the protocol code, the scalar stores that build a
// packet) and its own memory; and the library memcpy (machines.Memcpy:
// the SX-4's vector move, elsewhere the CPU's copy). Everything else a
// protocol does goes through the Device.

// memcpy is process rank's library memcpy.
func (w *World) memcpy(p *sim.Proc, rank int, dst, src mem.Addr, n int) {
	machines.Memcpy(w.host, p, rank, dst, src, n)
}

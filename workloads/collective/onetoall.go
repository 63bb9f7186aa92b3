package collective

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// oneToAll: PE 0 sends a message to PEs 1..P-1 in turn; nonblocking, it
// posts all its sends, then waits for them all.
func (pt *point) oneToAll(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.oneSided() {
		return pt.oneToAllShmem(p, pe)
	}
	// Each PE allocates only what its role needs: the root a send buffer,
	// the others a receive buffer.
	var buf mem.Region
	var err error
	if pe == 0 {
		buf, err = pt.sendBuffer(pe)
	} else {
		buf, err = y.buffer(pe, pt.n)
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	switch {
	case pe == 0 && y.mode == ModeAsync:
		reqs := make([]stacks.Request, 0, pt.pes-1)
		for d := 1; d < pt.pes; d++ {
			r, err := y.comms[0].Isend(p, buf, d, 0)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		if err := waitAll(p, reqs); err != nil {
			return err
		}
	case pe == 0:
		for d := 1; d < pt.pes; d++ {
			if err := y.send(p, 0, buf, d); err != nil {
				return err
			}
		}
	default:
		st, err := y.recv(p, pe, buf, 0)
		if err != nil {
			return err
		}
		pt.checkStatus(p, pe, st, 0)
		pt.verify(p, pe, buf, 0, "message")
	}
	pt.barrier(p, pe, false)
	return nil
}

// oneToAllShmem: PE 0 puts its message into every other PE's symmetric
// receive buffer, then waits for the puts to complete.
func (pt *point) oneToAllShmem(p *sim.Proc, pe int) error {
	var send, recv mem.Region
	var err error
	if pe == 0 {
		send, err = pt.sendBuffer(pe)
	} else {
		recv, err = pt.symmetricRecv(pe, pt.n)
	}
	if err != nil {
		return err
	}
	y := pt.sys
	pt.barrier(p, pe, true)
	if pe == 0 {
		for d := 1; d < pt.pes; d++ {
			y.ones[0].Put(p, d, pt.sym, send.Addr, pt.n)
		}
		y.ones[0].Quiet(p)
	}
	pt.barrier(p, pe, false)
	if pe != 0 {
		pt.verify(p, pe, recv, 0, "put")
	}
	return nil
}

package collective

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// allToAll: every PE sends a message to every other PE. Blocking message
// passing goes in P-1 pairwise phases (send to PE+i, receive from PE-i);
// nonblocking, a PE posts all its receives, then all its sends, then waits
// for them all (in rounds when the receive buffers do not all fit:
// postDepth); raw SHMEM puts to every PE in the order of shmem_order with
// no synchronization.
func (pt *point) allToAll(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.oneSided() {
		return pt.allToAllShmem(p, pe)
	}
	send, err := pt.sendBuffer(pe)
	if err != nil {
		return err
	}
	bufs, err := pt.buffers(pe, recvDepth(y.mode, pt.n, pt.pes-1))
	if err != nil {
		return err
	}
	P := pt.pes
	pt.barrier(p, pe, true)
	if y.mode == ModeAsync {
		err = pt.allToAllAsync(p, pe, send, bufs)
	} else {
		for i := 1; i < P && err == nil; i++ {
			dst, src := (pe+i)%P, (pe-i+P)%P
			var st stacks.Status
			if st, err = y.exchange(p, pe, send, dst, bufs[0], src); err == nil {
				pt.checkStatus(p, pe, st, src)
				pt.verify(p, pe, bufs[0], src, "message")
			}
		}
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	return nil
}

// allToAllAsync is PE pe's nonblocking all-to-all: in rounds of
// len(bufs) peers, it posts the receives from PEs pe-i, then the sends to
// PEs pe+i, then waits for the receives (verifying each delivery as it
// completes) and the sends.
func (pt *point) allToAllAsync(p *sim.Proc, pe int, send mem.Region, bufs []mem.Region) error {
	c := pt.sys.comms[pe]
	P := pt.pes
	recvs := make([]stacks.Request, 0, len(bufs))
	sends := make([]stacks.Request, 0, len(bufs))
	for base := 1; base < P; base += len(bufs) {
		end := min(P, base+len(bufs))
		recvs, sends = recvs[:0], sends[:0]
		for i := base; i < end; i++ {
			r, err := c.Irecv(p, bufs[i-base], (pe-i+P)%P, 0)
			if err != nil {
				return err
			}
			recvs = append(recvs, r)
		}
		for i := base; i < end; i++ {
			r, err := c.Isend(p, send, (pe+i)%P, 0)
			if err != nil {
				return err
			}
			sends = append(sends, r)
		}
		for k, r := range recvs {
			src := (pe - base - k + P) % P
			st, err := r.Wait(p)
			if err != nil {
				return err
			}
			pt.checkStatus(p, pe, st, src)
			pt.verify(p, pe, bufs[k], src, "message")
		}
		if err := waitAll(p, sends); err != nil {
			return err
		}
	}
	return nil
}

// allToAllShmem: every PE puts its message to every other PE, in the
// order of shmem_order, with no synchronization.
func (pt *point) allToAllShmem(p *sim.Proc, pe int) error {
	y := pt.sys
	recv, err := pt.symmetricRecv(pe, pt.shmemRecvBytes(pt.pes-1))
	if err != nil {
		return err
	}
	send, err := pt.sendBuffer(pe)
	if err != nil {
		return err
	}
	P := pt.pes
	pt.barrier(p, pe, true)
	for i := 0; i < P; i++ {
		d := i
		if pt.params.ShmemOrder == "shifted" {
			d = (pe + 1 + i) % P
		}
		if d != pe {
			slot := pt.shmemSlot(recv, pe, d) // symmetric: d's is at the same address
			y.ones[pe].Put(p, d, slot.Addr, send.Addr, pt.n)
		}
	}
	y.ones[pe].Quiet(p)
	pt.barrier(p, pe, false)
	pt.verifyPuts(p, pe, recv, pt.others(pe))
	return nil
}

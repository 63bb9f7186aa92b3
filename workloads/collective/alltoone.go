package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// allToOne: PEs 1..P-1 each send a message to PE 0. Blocking, PE 0
// receives them in PE order (synchronous ACLMPL must name the sender);
// nonblocking, it posts receives from any PE into the buffers it has
// (postDepth), takes the messages as they complete, verifying each, and
// reposts each buffer until all P-1 have come.
func (pt *point) allToOne(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.oneSided() {
		return pt.allToOneShmem(p, pe)
	}
	if pe != 0 {
		send, err := pt.sendBuffer(pe)
		if err != nil {
			return err
		}
		pt.barrier(p, pe, true)
		if err := y.send(p, pe, send, 0); err != nil {
			return err
		}
		pt.barrier(p, pe, false)
		return nil
	}
	bufs, err := pt.buffers(0, recvDepth(y.mode, pt.n, pt.pes-1))
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	if y.mode == ModeAsync {
		err = pt.allToOneAsyncRoot(p, bufs)
	} else {
		for s := 1; s < pt.pes && err == nil; s++ {
			var st stacks.Status
			if st, err = y.recv(p, 0, bufs[0], s); err == nil {
				pt.checkStatus(p, 0, st, s)
				pt.verify(p, 0, bufs[0], s, "message")
			}
		}
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	return nil
}

// allToOneAsyncRoot is PE 0's nonblocking all-to-one: one receive from any
// PE posted per buffer, waited for in the order posted (MPI matches
// wildcard receives in that order), each delivery verified as soon as it
// completes and its buffer posted again while senders remain.
func (pt *point) allToOneAsyncRoot(p *sim.Proc, bufs []mem.Region) error {
	c := pt.sys.comms[0]
	total := pt.pes - 1
	reqs := make([]stacks.Request, len(bufs))
	posted := 0
	post := func(j int) error {
		r, err := c.Irecv(p, bufs[j], stacks.AnySource, 0)
		reqs[j] = r
		posted++
		return err
	}
	for j := range bufs {
		if err := post(j); err != nil {
			return err
		}
	}
	seen := make([]bool, pt.pes)
	for k := 0; k < total; k++ {
		j := k % len(bufs)
		st, err := reqs[j].Wait(p)
		if err != nil {
			return err
		}
		pt.checkStatus(p, 0, st, stacks.AnySource)
		switch src := st.Source; {
		case src <= 0 || src >= pt.pes:
			pt.fail(workloads.Corruption, fmt.Sprintf("PE 0: message reported as from PE %d, not a sender, at %v", src, p.Now()))
		case seen[src]:
			pt.fail(workloads.Corruption, fmt.Sprintf("PE 0: a second message reported as from PE %d at %v", src, p.Now()))
		default:
			seen[src] = true
			pt.verify(p, 0, bufs[j], src, "message")
		}
		if posted < total {
			if err := post(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// allToOneShmem: PEs 1..P-1 each put their message into PE 0's symmetric
// receive space (their own slot when it fits, else one shared region).
func (pt *point) allToOneShmem(p *sim.Proc, pe int) error {
	y := pt.sys
	var send, recv mem.Region
	var err error
	if pe == 0 {
		recv, err = pt.symmetricRecv(pe, pt.shmemRecvBytes(pt.pes-1))
	} else {
		send, err = pt.sendBuffer(pe)
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	if pe != 0 {
		slot := pt.shmemSlot(pt.symRegion(pt.shmemRecvBytes(pt.pes-1)), pe, 0)
		y.ones[pe].Put(p, 0, slot.Addr, send.Addr, pt.n)
		y.ones[pe].Quiet(p)
	}
	pt.barrier(p, pe, false)
	if pe == 0 {
		pt.verifyPuts(p, 0, recv, pt.others(0))
	}
	return nil
}

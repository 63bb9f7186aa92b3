package mpich

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// queue is one process's incoming packet queue in shared memory (section
// 3): a ring of packet slots with a tail that writers advance under the
// queue's lock and a head that only the owner advances.
type queue struct {
	tail, head mem.Addr // words on their own cache lines
	ring       mem.Addr
	lk         lock
}

// shmemShared is the shared state of ch_shmem.
type shmemShared struct {
	queues    []queue
	slotBytes int
	depth     int
	procs     int
	pool      *pool
}

// shmem is ch_shmem for one process.
type shmem struct {
	poolData
	sh   *shmemShared
	head uint64 // my queue's head (I am its only reader)
}

func (d *shmem) Name() string { return DeviceShmem }

// SendControl appends pkt to dest's queue under the queue's lock: "Sending
// a control packet involves allocating shared memory for the packet,
// filling in the information, and appending it to the end of the
// destination process's queue" (section 3).
func (d *shmem) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	q := &d.sh.queues[dest]
	if err := q.lk.acquire(p, d.shm); err != nil {
		return false, err
	}
	tail := d.syncLoad(p, q.tail)
	head := d.syncLoad(p, q.head)
	ok := tail-head < uint64(d.sh.depth)
	if ok {
		d.copyIn(p, q.ring+mem.Addr(int(tail%uint64(d.sh.depth))*d.sh.slotBytes), pkt.Addr, size)
		d.cpu.Store(p, q.tail, 8, tail+1)
	}
	if err := q.lk.release(p, d.shm); err != nil {
		return false, err
	}
	return ok, nil
}

// ReadControl takes the packet at the head of my queue, if any. The single
// reader needs no lock: it reads the tail from memory and advances the head.
func (d *shmem) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	q := &d.sh.queues[d.rank]
	if d.load(p, q.tail) == d.head {
		return 0, false, nil
	}
	k := int(d.head % uint64(d.sh.depth))
	slot := q.ring + mem.Addr(k*d.sh.slotBytes)
	from, err := copyOut(p, d.shm, d.rank, pkt, slot, -1, d.sh.procs, d.sh.slotBytes)
	if err != nil {
		var ce *CorruptionError
		if errors.As(err, &ce) && ce.From < 0 {
			ce.Where = fmt.Sprintf("queue of rank %d, slot %d", d.rank, k)
		}
		return -1, false, err
	}
	d.head++
	d.readySet(p, q.head, d.head)
	return from, true, nil
}

// WaitControl spins on my queue's tail.
func (d *shmem) WaitControl(p *sim.Proc) {
	q := &d.sh.queues[d.rank]
	d.cpu.SpinUntil(p, sim.Reason(d.waitPacket), func() bool {
		return d.load(p, q.tail) != d.head
	}, q.tail)
}

package mpich

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ch_t3d with receive_queue shared: one incoming packet queue per PE,
// which every sender appends to under a lock taken with the T3D's atomic
// swap, instead of a ring per ordered pair (receive_queue per-sender).
//
// It is MPICH's queue design of ch_shmem (papers/mpich-sx4.txt section 3:
// "appending it to the end of the destination process's queue", under the
// queue's lock) on a machine without shared memory: the queue, its lock
// and its tail live in the receiver's memory, so a sender reaches them
// remotely. To append it
//
//   - takes the lock: shmem_swap of its number into the lock word until
//     the word was 0 (hardware.yaml t3d.atomic_swap), backing off between
//     tries as MPICH's senders do (1 us doubling to 32 us);
//   - reads the queue's tail and head with one shmem_get (the receiver
//     advances the head in its own memory);
//   - if the queue is full, releases the lock and reports no room (the
//     progress engine backs off and retries: flow control);
//   - puts the packet (its inline data, quiet, then the header whose ready
//     word is the packet's number in the queue), the new tail, and the
//     release of the lock, in that order (the network delivers a pair's
//     puts in order, so the next holder reads the new tail).
//
// ACLMPL avoids exactly this: "Each PE has an array of request blocks,
// indexed by receiving PE. This avoids the need for locks on the request
// blocks since each block has only one writer" (papers/aclmpl-t3d.txt
// 4.1). The paper's MPI (EPCC's, footnote 5) is not described; that it
// queued packets this way is our assumption, the design of MPICH's
// devices of the period. The receiver reads one queue in order: one
// uncached load of the next slot's ready word per poll, no scan of p-1
// rings, no credit put back per packet. Message data uses the per-sender
// eager buffers and direct rendezvous puts of ch_t3d (t3dDevice).

// T3DQueue is what receive_queue shared needs besides T3D: the atomic swap
// of a remote word and shmem_get (machines/t3d provides both).
type T3DQueue interface {
	T3D
	Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64
	Get(p *sim.Proc, pe, from int, dst, src mem.Addr, n int)
}

// mergedOps is what the shared queue's send needs of the machine to
// sleep its next step with the wait of a put, get or swap
// (machines/t3d.Machine's merged operations: the same simulated times and
// order of events, one coroutine switch fewer); without it each step
// sleeps on its own.
type mergedOps interface {
	Startup() sim.Time
	PutMerged(p *sim.Proc, pe, to int, dst, src mem.Addr, n int, lead sim.Time, tail sim.Steps)
	PutWordMerged(p *sim.Proc, pe, to int, dst mem.Addr, v uint64, lead sim.Time, tail sim.Steps)
	GetMerged(p *sim.Proc, pe, from int, dst, src mem.Addr, n int, lead sim.Time, tail sim.Steps)
	SwapMerged(p *sim.Proc, pe, target int, a mem.Addr, v uint64, lead sim.Time, tailFree, tailBusy sim.Steps) uint64
}

const t3dQueueCapability = "atomic swap of a remote word and shmem_get (stacks/mpich.T3DQueue), for " + DeviceT3D + " with receive_queue shared"

// Receive queue kinds (Params.ReceiveQueue).
const (
	QueueShared    = "shared"     // one queue per receiver, locked with atomic swap (t3dqueue.go)
	QueuePerSender = "per-sender" // a ring per ordered pair, no lock (t3d.go)
)

// Queue words at the start of each PE's queue area, each on its own
// 32-byte line: the lock, the tail (packets appended, written by senders
// under the lock) and the head (packets consumed, written by the owner).
const (
	qLock    = 0
	qTail    = 32
	qHead    = 40 // beside the tail: one get reads both
	qSlots   = 64
	qGetSize = 16
)

// t3dQueues is the queue area of every PE.
type t3dQueues struct {
	m         T3DQueue
	depth     int
	slotBytes int
	base      []mem.Addr
}

func (q *t3dQueues) slot(pe int, k uint64) mem.Addr {
	return q.base[pe] + qSlots + mem.Addr(int(k%uint64(q.depth))*q.slotBytes)
}

// t3dQueueDevice is ch_t3d with a shared receive queue for one PE: its own
// packet path; message data through d, the per-sender device.
type t3dQueueDevice struct {
	d     *t3dDevice
	q     *t3dQueues
	head  uint64     // packets consumed from my queue
	state mem.Region // where the get of a queue's tail and head lands
	mo    mergedOps  // the machine's merged operations, if it has them
	// The spin-wait reason, formatted once.
	waitPacket string
}

// newT3DQueueDevices wraps ch_t3d's devices with shared receive queues of
// params.QueuePackets packets.
func newT3DQueueDevices(mach machines.Machine, params Params, devs []Device) ([]Device, error) {
	m, err := machines.Require[T3DQueue](mach, "mpich "+params.Device, t3dQueueCapability)
	if err != nil {
		return nil, err
	}
	n := m.Procs()
	q := &t3dQueues{m: m, depth: params.QueuePackets, slotBytes: params.slotBytes()}
	out := make([]Device, n)
	for i := 0; i < n; i++ {
		r, err := m.Alloc(i, "mpich.queue", qSlots+q.depth*q.slotBytes)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: receive queue (queue_packets %d): %w", DeviceT3D, i, q.depth, err)
		}
		st, err := m.Alloc(i, "mpich.queue.state", qGetSize)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: receive queue state: %w", DeviceT3D, i, err)
		}
		q.base = append(q.base, r.Addr)
		x := &t3dQueueDevice{d: devs[i].(*t3dDevice), q: q, state: st,
			waitPacket: fmt.Sprintf("rank %d: waiting for a packet (%s shared queue)", i, DeviceT3D)}
		x.mo, _ = m.(mergedOps)
		out[i] = x
	}
	return out, nil
}

func (x *t3dQueueDevice) Name() string { return DeviceT3D }

// lock takes dest's queue lock with atomic swaps, backing off between
// tries.
func (x *t3dQueueDevice) lock(p *sim.Proc, dest int) {
	me := x.d.rank
	for backoff := backoffMin; x.q.m.Swap(p, me, dest, x.q.base[dest]+qLock, uint64(me+1)) != 0; backoff = min(2*backoff, backoffMax) {
		p.Sleep(backoff)
	}
}

// unlock puts 0 into dest's lock word, after every earlier put to dest.
func (x *t3dQueueDevice) unlock(p *sim.Proc, dest int) {
	x.q.m.PutWord(p, x.d.rank, dest, x.q.base[dest]+qLock, 0)
}

// SendControl appends the packet to dest's queue under its lock, or
// reports no room when the queue is full.
func (x *t3dQueueDevice) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	if x.merges(p) {
		return x.sendMerged(p, pkt, size, dest)
	}
	me := x.d.rank
	x.lock(p, dest)
	x.q.m.Get(p, me, dest, x.state.Addr, x.q.base[dest]+qTail, qGetSize)
	tail, head := x.loadState(p)
	slot, ok := x.claim(p, pkt, size, dest, tail, head)
	if !ok {
		return false, nil
	}
	x.d.cpu.Store(p, pkt.Addr+8*wReady, 8, tail+1)
	x.q.m.Put(p, me, dest, slot, pkt.Addr, HeaderBytes)
	x.q.m.PutWord(p, me, dest, x.q.base[dest]+qTail, tail+1)
	x.unlock(p, dest)
	return true, nil
}

// claim takes the queue's slot tail for the packet, under the lock, when
// the queue has room (tail and head as the get brought them): it puts the
// inline data there and waits for its delivery (the caller then stores the
// packet's number, tail+1, into its ready word). Else it releases the lock
// and reports false.
func (x *t3dQueueDevice) claim(p *sim.Proc, pkt mem.Region, size, dest int, tail, head uint64) (mem.Addr, bool) {
	if tail-head >= uint64(x.q.depth) {
		x.unlock(p, dest)
		return 0, false
	}
	slot := x.q.slot(dest, tail)
	if size > HeaderBytes {
		x.q.m.Put(p, x.d.rank, dest, slot+HeaderBytes, pkt.Addr+HeaderBytes, size-HeaderBytes)
		x.d.quiet(p)
	}
	return slot, true
}

// merges reports whether the send may sleep a step with the wait before
// it: the machine has merged operations, p has its processor to itself,
// no explorer needs each step, and no test asked for step by step.
func (x *t3dQueueDevice) merges(p *sim.Proc) bool {
	return x.mo != nil && !x.d.perLoad && !p.Bound() && !p.Engine().Exploring()
}

// sendMerged is SendControl with each step that follows a swap, get or
// put and only this process sees slept with that operation's wait: a
// failed swap's back-off, the start-up of the get after the swap that
// took the lock, the two loads of what the get brought (loadState: only
// this PE's gets write those words), and the start-ups of the tail's and
// the unlock's puts after the header's and the tail's; and the ready
// word's store into its own packet buffer, done at once, with the header
// put's start-up (one run of steps). The same steps at
// the same times, their wake-ups in the same order among same-time events
// (sim.Proc.WakeSteps), with fewer coroutine switches.
func (x *t3dQueueDevice) sendMerged(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	me, d, mo := x.d.rank, x.d, x.mo
	st, lockWord := mo.Startup(), x.q.base[dest]+qLock
	start := sim.Steps{N: 1, D: st} // the next operation's start-up
	for backoff := backoffMin; mo.SwapMerged(p, me, dest, lockWord, uint64(me+1), st, start, sim.Steps{N: 1, D: backoff}) != 0; backoff = min(2*backoff, backoffMax) {
	}
	mo.GetMerged(p, me, dest, x.state.Addr, x.q.base[dest]+qTail, qGetSize, 0, sim.Steps{N: 2, D: d.tLoad})
	tail, head := d.cpu.PeekUncached(x.state.Addr, 8), d.cpu.PeekUncached(x.state.Addr+8, 8)
	d.cpu.CountUncached(2)
	slot, ok := x.claim(p, pkt, size, dest, tail, head)
	if !ok {
		return false, nil
	}
	lead := st
	if d.cpu.StoreNow(pkt.Addr+8*wReady, 8, tail+1) { // this rank's own packet buffer
		p.SleepSteps(sim.Steps{N: 1, D: d.tStore}, start)
		lead = 0
	} else {
		d.cpu.Store(p, pkt.Addr+8*wReady, 8, tail+1)
	}
	mo.PutMerged(p, me, dest, slot, pkt.Addr, HeaderBytes, lead, start)
	mo.PutWordMerged(p, me, dest, x.q.base[dest]+qTail, tail+1, 0, start)
	mo.PutWordMerged(p, me, dest, lockWord, 0, 0, sim.Steps{})
	return true, nil
}

// loadState loads the tail and head the get brought, with two uncached
// loads. Only this PE's gets write those words, and the get has returned:
// both are read at the first load's time and the loads' times slept as one
// run of steps, the same events as two loads (load by load with perLoad, for a
// process that shares its processor, or while a schedule explorer runs).
func (x *t3dQueueDevice) loadState(p *sim.Proc) (tail, head uint64) {
	d, a := x.d, x.state.Addr
	if d.perLoad || p.Bound() || p.Engine().Exploring() {
		return d.cpu.LoadUncached(p, a, 8), d.cpu.LoadUncached(p, a+8, 8)
	}
	tail, head = d.cpu.PeekUncached(a, 8), d.cpu.PeekUncached(a+8, 8)
	d.cpu.CountUncached(2)
	p.SleepSteps(sim.Steps{N: 2, D: d.tLoad})
	return tail, head
}

// ReadControl takes the packet at the head of my queue, if its ready word
// says it is there.
func (x *t3dQueueDevice) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	d := x.d
	slot := x.q.slot(d.rank, x.head)
	ready := d.pollWord(p, slot) == x.head+1
	if !ready {
		return 0, false, nil
	}
	if err := copyOut(p, putCopy{t3dHost{d.m}, d}, d.rank, pkt, slot, -1, d.l.procs, x.q.slotBytes); err != nil {
		var ce *CorruptionError
		if errors.As(err, &ce) && ce.From < 0 {
			ce.Where = fmt.Sprintf("shared queue of rank %d, slot %d", d.rank, x.head%uint64(x.q.depth))
		}
		return -1, false, err
	}
	x.head++
	d.cpu.Store(p, x.q.base[d.rank]+qHead, 8, x.head)
	return int(pkt.Mem.Load64(pkt.Addr + 8*wSrc)), true, nil
}

// WaitControl spins on the ready word of my queue's next slot.
func (x *t3dQueueDevice) WaitControl(p *sim.Proc) {
	slot := x.q.slot(x.d.rank, x.head)
	x.d.cpu.SpinUntil(p, x.waitPacket, func() bool { return x.d.peek(p, slot) == x.head+1 }, slot)
}

// The data half is ch_t3d's per-sender eager buffers and direct puts. The
// device is no RoomWaiter: a sender that finds a queue full cannot watch
// the remote queue, so the progress engine backs off and retries.

func (x *t3dQueueDevice) AllocData(p *sim.Proc, dest, min, n int) (mem.Region, bool, error) {
	return x.d.AllocData(p, dest, min, n)
}
func (x *t3dQueueDevice) DataCapacity() int                   { return x.d.DataCapacity() }
func (x *t3dQueueDevice) DataAt(a mem.Addr, n int) mem.Region { return x.d.DataAt(a, n) }
func (x *t3dQueueDevice) PutData(p *sim.Proc, dest int, data, src mem.Region) {
	x.d.PutData(p, dest, data, src)
}
func (x *t3dQueueDevice) GetData(p *sim.Proc, dst, data mem.Region) { x.d.GetData(p, dst, data) }
func (x *t3dQueueDevice) FreeData(p *sim.Proc, data mem.Region) error {
	return x.d.FreeData(p, data)
}
func (x *t3dQueueDevice) ReceivedDirect(p *sim.Proc, buf mem.Region) { x.d.ReceivedDirect(p, buf) }
func (x *t3dQueueDevice) PutDirect(p *sim.Proc, dest int, dst mem.Addr, src mem.Region) error {
	return x.d.PutDirect(p, dest, dst, src)
}
func (x *t3dQueueDevice) DataPerSender() bool { return true }

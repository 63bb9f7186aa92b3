package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ch_t3d with receive_queue shared (an option; the default is fetch-inc):
// one incoming packet queue per PE, which every sender appends to under a
// lock taken with the T3D's atomic swap, instead of a ring per ordered pair
// (receive_queue per-sender). Neither paper describes such a queue on the
// T3D; it is kept to show what MPICH's shared-memory queue design costs on
// remote memory (a 256-PE all-to-all retries the remote lock tens of times
// per message).
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
//     release of the lock, in that order (the T3D's network delivers a
//     pair's puts in order, so the next holder reads the new tail; on a
//     machine without machines.OrderedWrites a quiet orders them).
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

// Receive queue kinds (Params.ReceiveQueue).
const (
	QueueFetchInc  = "fetch-inc"  // one pool per receiver, slots claimed with its fetch-and-increment register (t3dfiqueue.go)
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

// t3dQueues is the queue area of every PE, and the verbs a sender uses to
// reach it: remote write (the packet, the tail, the unlock), remote read
// (tail and head) and swap (the lock).
type t3dQueues struct {
	m         machines.RemoteWrite
	rr        machines.RemoteRead
	sw        machines.Swap
	depth     int
	slotBytes int
	base      []mem.Addr
}

func (q *t3dQueues) slot(pe int, k uint64) mem.Addr {
	return q.base[pe] + qSlots + mem.Addr(int(k%uint64(q.depth))*q.slotBytes)
}

// t3dQueueDevice is ch_t3d with a shared receive queue for one PE: its own
// packet path; message data through ch_t3d's per-sender device (putData).
type t3dQueueDevice struct {
	putData
	q     *t3dQueues
	head  uint64     // packets consumed from my queue
	state mem.Region // where the get of a queue's tail and head lands
	// The spin-wait reason, formatted once.
	waitPacket fmt.Stringer
}

// newT3DQueueDevices gives ch_t3d's devices (their data half) shared
// receive queues of params.QueuePackets packets: they need remote read
// and swap besides remote write.
func newT3DQueueDevices(m machines.RemoteWrite, params Params, devs []*t3dDevice) ([]Device, error) {
	user := "mpich " + params.Device + " with receive_queue " + QueueShared
	rr, err := machines.Need[machines.RemoteRead](m, user, machines.VerbRemoteRead)
	if err != nil {
		return nil, err
	}
	sw, err := machines.Need[machines.Swap](m, user, machines.VerbSwap)
	if err != nil {
		return nil, err
	}
	n := m.Procs()
	q := &t3dQueues{m: m, rr: rr, sw: sw, depth: params.QueuePackets, slotBytes: params.slotBytes()}
	out := make([]Device, n)
	for i := 0; i < n; i++ {
		r, err := machines.MapRemote(m, nil, i, i, "mpich.queue", qSlots+q.depth*q.slotBytes)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: receive queue (queue_packets %d): %w", DeviceT3D, i, q.depth, err)
		}
		st, err := m.Alloc(i, "mpich.queue.state", qGetSize)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: receive queue state: %w", DeviceT3D, i, err)
		}
		q.base = append(q.base, r.Addr)
		out[i] = &t3dQueueDevice{putData: putData{devs[i]}, q: q, state: st,
			waitPacket: sim.Reason(fmt.Sprintf("rank %d: waiting for a packet (%s shared queue)", i, DeviceT3D))}
	}
	return out, nil
}

func (x *t3dQueueDevice) Name() string { return DeviceT3D }

// lock takes dest's queue lock with atomic swaps, backing off between
// tries.
func (x *t3dQueueDevice) lock(p *sim.Proc, dest int) {
	me := x.d.rank
	for backoff := backoffMin; x.q.sw.Swap(p, me, dest, x.q.base[dest]+qLock, uint64(me+1)) != 0; backoff = min(2*backoff, backoffMax) {
		x.d.cpu.Delay(p, backoff)
	}
}

// unlock puts 0 into dest's lock word, after every earlier put to dest.
func (x *t3dQueueDevice) unlock(p *sim.Proc, dest int) {
	x.q.m.PutWord(p, x.d.rank, dest, x.q.base[dest]+qLock, 0)
}

// SendControl appends the packet to dest's queue under its lock, or
// reports no room when the queue is full: it reads the queue's tail and
// head, puts the packet into the slot at the tail (putPacket: its ready
// word, the packet's number in the queue, landing last), then the new
// tail, and releases the lock.
func (x *t3dQueueDevice) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	me, cpu := x.d.rank, x.d.cpu
	x.lock(p, dest)
	x.q.rr.Get(p, me, dest, x.state.Addr, x.q.base[dest]+qTail, qGetSize)
	tail, head := cpu.LoadUncached(p, x.state.Addr, 8), cpu.LoadUncached(p, x.state.Addr+8, 8)
	if tail-head >= uint64(x.q.depth) {
		x.unlock(p, dest)
		return false, nil
	}
	x.d.putPacket(p, dest, x.q.slot(dest, tail), pkt, size, tail+1)
	x.q.m.PutWord(p, me, dest, x.q.base[dest]+qTail, tail+1)
	if x.d.quietOrder {
		x.d.quiet(p) // the new tail lands before the lock is free
	}
	x.unlock(p, dest)
	return true, nil
}

// ReadControl takes the packet at the head of my queue, if its ready word
// says it is there.
func (x *t3dQueueDevice) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	d := x.d
	slot := x.q.slot(d.rank, x.head)
	ready := d.load(p, slot) == x.head+1
	d.charge(p, 1)
	if !ready {
		return 0, false, nil
	}
	from, err := d.copySlot(p, pkt, slot, x.q.slotBytes, "shared queue", x.head%uint64(x.q.depth))
	if err != nil {
		return -1, false, err
	}
	x.head++
	d.cpu.Store(p, x.q.base[d.rank]+qHead, 8, x.head)
	return from, true, nil
}

// WaitControl spins on the ready word of my queue's next slot: read
// without time (ReadControl's load, which follows, is the poll that finds
// the packet), or through the cache with ready_bit_cached.
func (x *t3dQueueDevice) WaitControl(p *sim.Proc) {
	x.d.waitWord(p, x.waitPacket, x.q.slot(x.d.rank, x.head)+8*wReady, x.head+1)
}

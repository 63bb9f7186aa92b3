package mpich

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ch_t3d with receive_queue fetch-inc (the default): one pool of
// queue_packets packet slots per PE, in its memory, whose slots senders
// claim with the PE's fetch-and-increment register, the buffer management
// of Illinois Fast Messages that ACLMPL's asynchronous protocol takes over
// (papers/aclmpl-t3d.txt 4.2: "we use the fetch-and-increment registers on
// the T3D to allocate remote buffers from a fixed sized pool of buffers";
// section 7: "on the T3D efficient buffer management can be performed using
// the fetch-and-increment facilities"). The paper's MPI (EPCC's, footnote 5)
// is not described; that it queued its packets this way is our assumption,
// the T3D's own mechanism for a many-writer queue at the time.
//
// A sender
//
//   - reads the receiver's register, which increments it (one remote round
//     trip: machines.FetchIncRegister, the T3D's; where a machine has none,
//     machines.RemoteFetchInc on a word in the receiver's memory);
//   - if the value is in bounds (below queue_packets), it is the index of a
//     slot the sender alone writes: the packet goes there (putPacket: the
//     inline data, quiet, then the header whose ready word, the slot's
//     index plus one, lands last);
//   - if it is out of bounds the pool is exhausted: the sender reports no
//     room and the progress engine backs off and reads the register again
//     later (section 4.2: "the sender must block until the receiver removes
//     messages from the buffer pool and resets the fetch-and-increment
//     register"), meanwhile reading its own incoming packets.
//
// The receiver reads its pool in order, the slot after the last it took:
// one uncached load of that slot's ready word per poll, no scan of p-1
// rings, no credit put back per packet. Slots are claimed in register
// order, so a sender's packets are taken in the order it sent them. It
// copies the packet out (MPICH keeps unexpected messages above the device,
// so no packet stays in a slot) and clears the slot's ready word with a
// store. Overflow, adapted to a queue read in order: once it has taken the
// last slot of the pool, every slot handed out has been written and taken
// (the claims below the bound all completed: their ready words were seen),
// so it fences (its clearing stores reach memory before any sender can
// claim a slot again) and resets its register to zero, and reads from slot
// 0 again. Section 4.2's copy of unreceived messages into a "linked list of
// sent-but-not-yet-received messages" is not needed: every packet was
// already copied out as it was read. Senders that read out-of-bounds values
// meanwhile get slots again on their next try. Message data uses the
// per-sender eager buffers and direct rendezvous puts of ch_t3d
// (t3dDevice), as with the other receive queues.

// fiRegister is a PE's fetch-and-increment register as ch_t3d's pool uses
// it: a sender's read-and-increment of the receiver's, and the owner's
// reset to zero.
type fiRegister interface {
	fetchInc(p *sim.Proc, pe, target int) uint64
	reset(p *sim.Proc, pe int)
}

// hwFetchInc is the machine's register (the T3D's).
type hwFetchInc struct{ m machines.FetchIncRegister }

func (r hwFetchInc) fetchInc(p *sim.Proc, pe, target int) uint64 { return r.m.FetchInc(p, pe, target) }
func (r hwFetchInc) reset(p *sim.Proc, pe int)                   { r.m.SetFetchInc(p, pe, 0) }

// wordFetchInc is a register built from a word in each PE's memory, on a
// machine whose remote atomic is a fetch-and-increment of a word (the
// PCI-SCI adapter's, LAPI_Rmw's): the owner resets it with a store (the
// pool's fence before it orders the slots' clearing stores).
type wordFetchInc struct {
	m    machines.RemoteFetchInc
	word []mem.Addr
}

func (r wordFetchInc) fetchInc(p *sim.Proc, pe, target int) uint64 {
	return r.m.FetchIncAt(p, pe, target, r.word[target])
}
func (r wordFetchInc) reset(p *sim.Proc, pe int) {
	machines.ProcessorOf(r.m, pe).Store(p, r.word[pe], 8, 0)
}

// t3dPools is the slot pool of every PE and the register that hands its
// slots out.
type t3dPools struct {
	reg       fiRegister
	depth     int
	slotBytes int
	base      []mem.Addr
}

func (q *t3dPools) slot(pe int, k uint64) mem.Addr {
	return q.base[pe] + mem.Addr(int(k)*q.slotBytes)
}

// FIStats counts what ch_t3d's fetch-and-increment queue did at one PE.
type FIStats struct {
	FetchIncs uint64 // registers read as a sender (remote round trips)
	Full      uint64 // of those, out of bounds: the receiver's pool was exhausted
	Polls     uint64 // ready-word loads of the pool's next slot as a receiver
	Taken     uint64 // packets taken from the pool
	Resets    uint64 // times the pool was drained and the register reset
}

// t3dFIDevice is ch_t3d with a fetch-and-increment queue for one PE: its
// own packet path; message data through ch_t3d's per-sender device
// (putData).
type t3dFIDevice struct {
	putData
	q     *t3dPools
	head  uint64 // the slot to read next
	stats FIStats
	// The spin-wait reason, formatted once.
	waitPacket fmt.Stringer
	look       readyLook // ReadControl's poll
}

// readyLook is ReadControl's look at the next slot: a load of its ready
// word and the loop's overhead. It only reads, so uncached it is one poll
// (machines.Processor.Poll). The device keeps one, its check bound once.
type readyLook struct {
	x  *t3dFIDevice
	p  *sim.Proc
	a  mem.Addr
	fn func() bool // run
}

func (l *readyLook) run() bool {
	d := l.x.d
	ready := d.load(l.p, l.a) == l.x.head+1
	d.charge(l.p, 1)
	return ready
}

// ready reports whether the slot's ready word says its packet is there,
// charging the load and the loop's overhead: one poll, or with
// ready_bit_cached a cached load.
func (x *t3dFIDevice) ready(p *sim.Proc, slot mem.Addr) bool {
	l := &x.look
	if l.fn == nil {
		l.fn = l.run
	}
	l.x, l.p, l.a = x, p, slot+8*wReady
	var ready bool
	if x.d.cached {
		ready = l.run() // a cached load: no poll
	} else {
		ready = x.d.cpu.Poll(p, l.fn)
	}
	l.p = nil
	return ready
}

// newT3DFIDevices gives ch_t3d's devices (their data half) a pool of
// params.QueuePackets slots per PE handed out by a fetch-and-increment
// register: the machine's, or one built from a word with its remote
// fetch-and-increment.
func newT3DFIDevices(m machines.RemoteWrite, params Params, devs []*t3dDevice) ([]Device, error) {
	n := m.Procs()
	q := &t3dPools{depth: params.QueuePackets, slotBytes: params.slotBytes()}
	var words []mem.Addr
	switch r := m.(type) {
	case machines.FetchIncRegister:
		q.reg = hwFetchInc{r}
	case machines.RemoteFetchInc:
		for i := 0; i < n; i++ {
			w, err := machines.MapRemote(m, nil, i, i, "mpich.fetchinc", 8)
			if err != nil {
				return nil, fmt.Errorf("mpich %s: PE %d: fetch-and-increment word: %w", DeviceT3D, i, err)
			}
			words = append(words, w.Addr)
		}
		q.reg = wordFetchInc{m: r, word: words}
	default:
		return nil, &machines.MissingCapability{Machine: m.Name(), User: "mpich " + DeviceT3D + " with receive_queue " + QueueFetchInc,
			Capability: machines.VerbFetchIncReg.Name + " or " + machines.VerbRemoteFetchInc.Name + ": " +
				machines.VerbFetchIncReg.What + ", or " + machines.VerbRemoteFetchInc.What + " to build one from a word"}
	}
	out := make([]Device, n)
	for i := 0; i < n; i++ {
		r, err := machines.MapRemote(m, nil, i, i, "mpich.pool", q.depth*q.slotBytes)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: packet pool (queue_packets %d): %w", DeviceT3D, i, q.depth, err)
		}
		q.base = append(q.base, r.Addr)
		out[i] = &t3dFIDevice{putData: putData{devs[i]}, q: q,
			waitPacket: sim.Reason(fmt.Sprintf("rank %d: waiting for a packet (%s fetch-and-increment pool)", i, DeviceT3D))}
	}
	return out, nil
}

func (x *t3dFIDevice) Name() string { return DeviceT3D }

// SendControl reads dest's register for a slot of its pool and puts the
// packet there, or reports no room when the value read is out of bounds.
func (x *t3dFIDevice) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	k := x.q.reg.fetchInc(p, x.d.rank, dest)
	x.stats.FetchIncs++
	if k >= uint64(x.q.depth) {
		x.stats.Full++
		return false, nil
	}
	x.d.putPacket(p, dest, x.q.slot(dest, k), pkt, size, k+1)
	return true, nil
}

// ReadControl takes the packet in my pool's next slot, if its ready word
// says it is there, and clears the word; after the pool's last slot it
// resets my register (see above).
func (x *t3dFIDevice) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	d := x.d
	slot := x.q.slot(d.rank, x.head)
	x.stats.Polls++
	if !x.ready(p, slot) {
		return 0, false, nil
	}
	from, err := d.copySlot(p, pkt, slot, x.q.slotBytes, "fetch-and-increment pool", x.head)
	if err != nil {
		return -1, false, err
	}
	d.cpu.Store(p, slot+8*wReady, 8, 0)
	x.stats.Taken++
	if x.head++; x.head == uint64(x.q.depth) {
		d.cpu.Fence(p)
		x.q.reg.reset(p, d.rank)
		x.head = 0
		x.stats.Resets++
	}
	return from, true, nil
}

// WaitControl spins on the ready word of my pool's next slot: read
// without time (ReadControl's load, which follows, is the poll that finds
// the packet), or through the cache with ready_bit_cached.
func (x *t3dFIDevice) WaitControl(p *sim.Proc) {
	x.d.waitWord(p, x.waitPacket, x.q.slot(x.d.rank, x.head)+8*wReady, x.head+1)
}

// copySlot copies the packet in a receive-queue slot (number k of the
// receiver's queue named what) out into pkt, checking it, and returns its
// sender: a corrupted packet is reported with where it lay.
func (d *t3dDevice) copySlot(p *sim.Proc, pkt mem.Region, slot mem.Addr, slotBytes int, what string, k uint64) (int, error) {
	from, err := copyOut(p, putCopy{d}, d.rank, pkt, slot, -1, d.l.procs, slotBytes)
	var ce *CorruptionError
	if errors.As(err, &ce) && ce.From < 0 {
		ce.Where = fmt.Sprintf("%s of rank %d, slot %d", what, d.rank, k)
	}
	return from, err
}

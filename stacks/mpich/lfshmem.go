package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// lfShared is where ch_lfshmem's packet slots lie, one per ordered pair of
// processes (section 5): base[to] is receiver to's, one slot per sender.
// On a shared segment they are the rows of the slot_procs x slot_procs
// array; across nodes each receiver's row lies in its own memory.
type lfShared struct {
	base      []mem.Addr
	slotBytes int
	procs     int
}

// slot is slots[to][from]: the packet slot through which from sends to to.
// (The paper's abbreviated Figures 2 and 3 index it as slots[i][myid] and
// slots[dest][myid]; we use one convention for both sides.)
func (s *lfShared) slot(to, from int) mem.Addr {
	return s.base[to] + mem.Addr(from*s.slotBytes)
}

// slotWriter is the part of Figures 2 and 3 that depends on how a sender
// reaches a slot at its receiver: with stores into memory both share (the
// SX-4: PKT_COPYIN and PKT_READY_SET, sharedSlots), or with remote writes
// into the receiver's memory (remoteSlots). The rest of the device (the
// receiver's scan of its slots, the copy out, the clearing of the ready
// bit, the sender's back-off while its slot is full) is the same code.
type slotWriter interface {
	// full is Figure 3's MPID_PKT_READY_IS_SET(slots[dest][myid].ready):
	// this process's slot at dest still holds a packet.
	full(p *sim.Proc, dest int) bool
	// fill copies the packet (size bytes of pkt, its ready word 0) into
	// the slot and sets the slot's ready bit, the data first.
	fill(p *sim.Proc, dest int, slot mem.Addr, pkt mem.Region, size int)
	// ready is Figure 2's PKT_READY_IS_SET(slots[i][myid].ready): sender
	// from's slot here holds a packet.
	ready(p *sim.Proc, from int, slot mem.Addr) bool
	// emptied is the receiver's side once it has copied the packet out of
	// sender from's slot and cleared the ready bit: the sender learns that
	// the slot is free.
	emptied(p *sim.Proc, from int)
	// memcpy is the receiver's copy of a packet out of its slot: the
	// library memcpy, after dropping cached lines the writes into the slot
	// left stale where they bypass this process's cache.
	copier
}

// lfshmem is ch_lfshmem's packet path for one process: lock-free
// single-writer slots with ready bits (Figures 2 and 3).
type lfshmem struct {
	*shm
	sh    *lfShared
	w     slotWriter
	watch []mem.Addr // ready words of my incoming slots
}

func newLFShmem(s *shm, sh *lfShared, w slotWriter) *lfshmem {
	d := &lfshmem{shm: s, sh: sh, w: w}
	for j := 0; j < sh.procs; j++ {
		if j != s.rank {
			d.watch = append(d.watch, sh.slot(s.rank, j))
		}
	}
	return d
}

func (d *lfshmem) Name() string { return DeviceLFShmem }

// SendControl is Figure 3: if the slot to dest is still full, give up for
// now (the caller backs off); else copy the packet in and set its ready bit.
func (d *lfshmem) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	if d.w.full(p, dest) { // MPID_PKT_READY_IS_SET(slots[dest][myid].ready)
		return false, nil
	}
	d.w.fill(p, dest, d.sh.slot(dest, d.rank), pkt, size) // PKT_COPYIN(&slots[dest][myid], pkt, size); PKT_READY_SET(slots[dest][myid].ready)
	return true, nil
}

// ReadControl is Figure 2 with is_blocking false: scan my p-1 slots for a
// set ready bit; copy that packet out and clear the bit.
func (d *lfshmem) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	for i := 0; i < d.sh.procs; i++ {
		if i == d.rank {
			continue
		}
		slot := d.sh.slot(d.rank, i)
		if !d.w.ready(p, i, slot) { // PKT_READY_IS_SET(slots[i][myid].ready)
			continue
		}
		if _, err := copyOut(p, d.w, d.rank, pkt, slot, i, d.sh.procs, d.sh.slotBytes); err != nil {
			return i, false, err
		}
		d.readySet(p, slot, 0) // the slot is empty again
		d.w.emptied(p, i)
		return i, true, nil
	}
	return 0, false, nil
}

// WaitControl spins on the ready bits of my slots; each poll is a
// PKT_READY_IS_SET of every slot.
func (d *lfshmem) WaitControl(p *sim.Proc) {
	d.cpu.SpinUntil(p, sim.Reason(d.waitPacket), func() bool {
		for i := 0; i < d.sh.procs; i++ {
			if i != d.rank && d.w.ready(p, i, d.sh.slot(d.rank, i)) {
				return true
			}
		}
		return false
	}, d.watch...)
}

// sharedSlots writes slots in memory every process shares (section 5):
// PKT_COPYIN, a fence then a vector move that bypasses the cache, and
// PKT_READY_SET, fence, store, fence. Sender and receiver test the slot's
// own ready bit (PKT_READY_IS_SET).
type sharedSlots struct {
	s  *shm
	sh *lfShared
}

func (w sharedSlots) full(p *sim.Proc, dest int) bool {
	return w.s.readyIsSet(p, w.sh.slot(dest, w.s.rank))
}

func (w sharedSlots) ready(p *sim.Proc, _ int, slot mem.Addr) bool { return w.s.readyIsSet(p, slot) }

func (w sharedSlots) fill(p *sim.Proc, _ int, slot mem.Addr, pkt mem.Region, size int) {
	w.s.copyIn(p, slot, pkt.Addr, size)
	w.s.readySet(p, slot, 1)
}

func (w sharedSlots) emptied(*sim.Proc, int) {}

// memcpy: on the SX-4 a vector move, which bypasses the cache (section 5).
func (w sharedSlots) memcpy(p *sim.Proc, dst, src mem.Addr, n int) { w.s.memcpy(p, dst, src, n) }

func (w sharedSlots) processor() machines.Processor { return w.s.cpu }

// remoteSlots writes slots that lie in the receiver's memory with remote
// writes (machines.RemoteWrite): the sender writes the packet into its
// slot, waits until it has landed (Quiet: SHMEM's quiet, SCI's MemBarrier,
// LAPI_Fence; the fence of PKT_COPYIN), then writes the ready bit
// (PKT_READY_SET). Every process polls only its own memory: a sender does
// not load the ready bit at the receiver (a remote read) but a count the
// receiver writes into the sender's memory when it empties the slot. The
// ready bit is the packet's number from that sender, and the count the
// packets emptied: where the fabric lands a write twice (the SCI
// cluster's, when a CRC error hits its response), the second landing of
// an old ready bit or count, after newer ones, is recognized as old
// instead of marking a consumed packet ready again or a full slot empty.
type remoteSlots struct {
	s        *shm
	m        machines.RemoteWrite
	sh       *lfShared
	counts   []mem.Addr // each process's words the receivers write, one per receiver
	sent     []uint64   // packets sent to each receiver
	emptiedN []uint64   // packets each receiver has emptied, as last seen
	got      []uint64   // packets taken from each sender
}

func newRemoteSlots(s *shm, m machines.RemoteWrite, sh *lfShared, counts []mem.Addr) *remoteSlots {
	n := sh.procs
	return &remoteSlots{s: s, m: m, sh: sh, counts: counts, sent: make([]uint64, n), emptiedN: make([]uint64, n), got: make([]uint64, n)}
}

// full loads the count dest writes here (as PKT_READY_IS_SET loads a
// ready bit), keeping the largest seen.
func (w *remoteSlots) full(p *sim.Proc, dest int) bool {
	w.emptiedN[dest] = max(w.emptiedN[dest], w.s.load(p, w.counts[w.s.rank]+mem.Addr(8*dest)))
	return w.emptiedN[dest] != w.sent[dest]
}

func (w *remoteSlots) fill(p *sim.Proc, dest int, slot mem.Addr, pkt mem.Region, size int) {
	w.sent[dest]++
	w.m.Put(p, w.s.rank, dest, slot, pkt.Addr, size)
	if w.s.fences {
		w.m.Quiet(p, w.s.rank)
	}
	w.m.PutWord(p, w.s.rank, dest, slot+8*wReady, w.sent[dest])
}

func (w *remoteSlots) ready(p *sim.Proc, from int, slot mem.Addr) bool {
	return w.s.load(p, slot) == w.got[from]+1
}

func (w *remoteSlots) emptied(p *sim.Proc, from int) {
	w.got[from]++
	w.m.PutWord(p, w.s.rank, from, w.counts[from]+mem.Addr(8*w.s.rank), w.got[from])
}

// memcpy invalidates the receiver's cached lines of the slot first: a
// remote write does not update a non-coherent cache (the T3D's; a no-op
// where caches are coherent), and the memcpy reads through the cache, so a
// line cached by the copy of the slot's previous packet would be stale.
func (w *remoteSlots) memcpy(p *sim.Proc, dst, src mem.Addr, n int) {
	w.s.cpu.InvalidateRange(p, src, n)
	w.s.memcpy(p, dst, src, n)
}

func (w *remoteSlots) processor() machines.Processor { return w.s.cpu }

// newRemoteSlotDevices sets up ch_lfshmem on a machine whose processes
// share no segment: each receiver's slots and each sender's counts of
// emptied slots in their own memory, mapped for the remote writes that
// reach them (machines.MapRemote). Message data goes as ch_t3d's does (putData):
// eager data by remote write into a buffer the receiver keeps for each
// sender, rendezvous data straight into the receive buffer; there is no
// shared pool, so no lock.
func newRemoteSlotDevices(m machines.RemoteWrite, params Params) ([]Device, error) {
	procs := m.Procs()
	data, err := newT3DDevices(m, params, false)
	if err != nil {
		return nil, err
	}
	sh := &lfShared{slotBytes: params.slotBytes(), procs: procs}
	var counts []mem.Addr
	for i := 0; i < procs; i++ {
		r, err := machines.MapRemote(m, nil, i, i, "mpich.slots", procs*sh.slotBytes)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: process %d: packet slots: %w", DeviceLFShmem, i, err)
		}
		c, err := machines.MapRemote(m, nil, i, i, "mpich.slots.emptied", 8*procs)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: process %d: emptied-slot counts: %w", DeviceLFShmem, i, err)
		}
		sh.base, counts = append(sh.base, r.Addr), append(counts, c.Addr)
	}
	devs := make([]Device, procs)
	for i := range devs {
		s := newShm(m, i, params)
		s.waitPacket = fmt.Sprintf("rank %d: waiting for a packet (%s ready bits)", i, DeviceLFShmem)
		devs[i] = &lfPut{lfshmem: newLFShmem(s, sh, newRemoteSlots(s, m, sh, counts)), putData: putData{data[i]}}
	}
	return devs, nil
}

// lfPool is ch_lfshmem on a shared segment: the slots, and data through
// the shared pool.
type lfPool struct {
	*lfshmem
	poolData
}

// lfPut is ch_lfshmem with remote slots: data by remote writes into the
// receiver's memory.
type lfPut struct {
	*lfshmem
	putData
}

// copier is the library memcpy of the process that copies a packet out,
// and its processor (which reads the header).
type copier interface {
	memcpy(p *sim.Proc, dst, src mem.Addr, n int)
	processor() machines.Processor
}

// headerKeeper is a copier that keeps a headerReader for copyOut's
// headers (a device that copies a packet out per message).
type headerKeeper interface {
	headers() *headerReader
}

// copyOut copies the packet in a slot (header, then its inline data) into
// the private buffer pkt with the library memcpy (on the SX-4, vector
// moves, which bypass the cache). It returns the sender the header names
// (from, where the caller knows it).
func copyOut(p *sim.Proc, c copier, rank int, pkt mem.Region, slot mem.Addr, from, procs, slotBytes int) (int, error) {
	c.memcpy(p, pkt.Addr, slot, HeaderBytes)
	var h header
	var err error
	if k, ok := c.(headerKeeper); ok {
		h, err = k.headers().read(c.processor(), p, pkt, rank, from, procs)
	} else {
		h, err = readHeader(c.processor(), p, pkt, rank, from, procs)
	}
	if err != nil {
		return from, err
	}
	if h.kind == pktShort {
		if h.len < 0 || HeaderBytes+h.len > slotBytes {
			return h.src, &CorruptionError{Rank: rank, From: h.src, Offset: 8 * wLen, At: p.Now(),
				What: fmt.Sprintf("gives a short-message length of %d bytes (stale contents)", h.len)}
		}
		c.memcpy(p, pkt.Addr+HeaderBytes, slot+HeaderBytes, h.len)
	}
	return h.src, nil
}

// poolData is the data half of the Device of both shared-memory devices:
// message data through the shared pool, guarded by its lock, copied with
// memcpy (a vector move that bypasses the cache).
type poolData struct {
	*shm
	pool *pool
	mem  *mem.Memory // the shared segment's
}

func (d poolData) AllocData(p *sim.Proc, dest, min, n int) (mem.Region, bool, error) {
	return d.pool.alloc(p, d.shm, min, n)
}

func (d poolData) DataCapacity() int { return d.pool.capacity() }

func (d poolData) DataAt(a mem.Addr, n int) mem.Region {
	return mem.Region{Mem: d.mem, Addr: a, Len: n}
}

func (d poolData) PutData(p *sim.Proc, dest int, data, src mem.Region) {
	d.memcpy(p, data.Addr, src.Addr, src.Len)
}

func (d poolData) GetData(p *sim.Proc, dst, data mem.Region) {
	d.memcpy(p, dst.Addr, data.Addr, data.Len)
}

func (d poolData) FreeData(p *sim.Proc, data mem.Region) error {
	return d.pool.free(p, d.shm, data)
}

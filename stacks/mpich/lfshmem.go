package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// lfShared is the shared state of ch_lfshmem: the array of packet slots,
// one per ordered pair of processes (section 5), and the data pool.
type lfShared struct {
	slots     mem.Addr
	slotBytes int
	dim       int // slot_procs
	procs     int
	pool      *pool
}

// slot is slots[to][from]: the packet slot through which from sends to to.
// (The paper's abbreviated Figures 2 and 3 index it as slots[i][myid] and
// slots[dest][myid]; we use one convention for both sides.)
func (s *lfShared) slot(to, from int) mem.Addr {
	return s.slots + mem.Addr((to*s.dim+from)*s.slotBytes)
}

// lfshmem is ch_lfshmem for one process: lock-free single-writer slots for
// control packets; the shared pool, with its lock, for data.
type lfshmem struct {
	poolData
	sh    *lfShared
	watch []mem.Addr // ready words of my incoming slots
}

func (d *lfshmem) Name() string { return DeviceLFShmem }

// SendControl is Figure 3: if the slot to dest is still full, give up for
// now (the caller backs off); else copy the packet in and set its ready bit.
func (d *lfshmem) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	slot := d.sh.slot(dest, d.rank)
	if d.readyIsSet(p, slot) { // MPID_PKT_READY_IS_SET(slots[dest][myid].ready)
		return false, nil
	}
	d.copyIn(p, slot, pkt.Addr, size) // PKT_COPYIN(&slots[dest][myid], pkt, size)
	d.readySet(p, slot, 1)            // PKT_READY_SET(slots[dest][myid].ready)
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
		if !d.readyIsSet(p, slot) { // PKT_READY_IS_SET(slots[i][myid].ready)
			continue
		}
		if err := copyOut(p, d.m, d.rank, pkt, slot, i, d.sh.procs, d.sh.slotBytes); err != nil {
			return i, false, err
		}
		d.readySet(p, slot, 0) // the slot is empty again
		return i, true, nil
	}
	return 0, false, nil
}

// WaitControl spins on the ready bits of my slots; each poll is a
// PKT_READY_IS_SET of every slot.
func (d *lfshmem) WaitControl(p *sim.Proc) {
	d.cpu.SpinUntil(p, d.waitPacket, func() bool {
		for i := 0; i < d.sh.procs; i++ {
			if i != d.rank && d.readyIsSet(p, d.sh.slot(d.rank, i)) {
				return true
			}
		}
		return false
	}, d.watch...)
}

// copyOut copies the packet in a slot (header, then its inline data) into
// the private buffer pkt with the machine's memcpy (on the SX-4, vector
// moves, which bypass the cache).
func copyOut(p *sim.Proc, m Machine, rank int, pkt mem.Region, slot mem.Addr, from, procs, slotBytes int) error {
	m.Memcpy(p, rank, pkt.Addr, slot, HeaderBytes)
	h, err := decode(pkt, rank, from, procs, p.Now())
	if err != nil {
		return err
	}
	if h.kind == pktShort {
		if h.len < 0 || HeaderBytes+h.len > slotBytes {
			return &CorruptionError{Rank: rank, From: h.src, Offset: 8 * wLen, At: p.Now(),
				What: fmt.Sprintf("gives a short-message length of %d bytes (stale contents)", h.len)}
		}
		m.Memcpy(p, rank, pkt.Addr+HeaderBytes, slot+HeaderBytes, h.len)
	}
	return nil
}

// poolData is the data half of the Device of both shared-memory devices:
// message data through the shared pool, guarded by its lock, copied with
// memcpy (a vector move that bypasses the cache).
type poolData struct {
	*shm
	pool *pool
}

func (d poolData) AllocData(p *sim.Proc, dest, min, n int) (mem.Region, bool, error) {
	return d.pool.alloc(p, d.shm, min, n)
}

func (d poolData) DataCapacity() int { return d.pool.capacity() }

func (d poolData) DataAt(a mem.Addr, n int) mem.Region {
	return mem.Region{Mem: d.m.Memory(), Addr: a, Len: n}
}

func (d poolData) PutData(p *sim.Proc, dest int, data, src mem.Region) {
	d.m.Memcpy(p, d.rank, data.Addr, src.Addr, src.Len)
}

func (d poolData) GetData(p *sim.Proc, dst, data mem.Region) {
	d.m.Memcpy(p, d.rank, dst.Addr, data.Addr, data.Len)
}

func (d poolData) FreeData(p *sim.Proc, data mem.Region) error {
	return d.pool.free(p, d.shm, data)
}

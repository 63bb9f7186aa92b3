package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// SharedMemory is what the shared-memory devices need from a machine:
// System V shared segments, per-process CPUs, the NEC synchronization
// routines of section 5, test-and-set, System V semaphores and memcpy.
// machines/sx4.Machine provides it.
type SharedMemory interface {
	machines.Machine
	Memory() *mem.Memory
	CPU(rank int) *mem.CPU
	ShmGet(name string, size int) (mem.Segment, error)
	Private(rank int, name string, size int) (mem.Region, error)
	ReadySet(p *sim.Proc, rank int, a mem.Addr, v uint64)
	ReadyIsSet(p *sim.Proc, rank int, a mem.Addr) bool
	CopyIn(p *sim.Proc, rank int, dst, src mem.Addr, n int)
	Memcpy(p *sim.Proc, rank int, dst, src mem.Addr, n int)
	TestAndSet(p *sim.Proc, rank int, a mem.Addr) uint64
	FlushCache(p *sim.Proc, rank int)
	Semget(name string, initial int) int
	Semop(p *sim.Proc, rank, id, delta int) error
}

const sharedMemoryCapability = "System V shared memory with the NEC synchronization routines, test-and-set and semaphores (stacks/mpich.SharedMemory)"

// newSharedMemoryDevices sets up ch_shmem or ch_lfshmem on m: it creates
// the System V segment, lays out the device's queues or slots and the data
// pool in it, and the locks; it returns each process's device.
func newSharedMemoryDevices(mach machines.Machine, params Params) (Machine, []Device, error) {
	m, err := machines.Require[SharedMemory](mach, "mpich "+params.Device, sharedMemoryCapability)
	if err != nil {
		return nil, nil, err
	}
	procs := m.Procs()
	if err := params.Validate(procs); err != nil {
		return nil, nil, err
	}
	seg, err := m.ShmGet("mpich", params.SharedMemoryBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("mpich: shared_memory_bytes %d: %w", params.SharedMemoryBytes, err)
	}
	slotBytes := roundUp(HeaderBytes + params.ShortBytes)
	const line = 128
	var lf *lfShared
	var sq *shmemShared
	next := seg.Base
	switch params.Device {
	case DeviceLFShmem:
		lf = &lfShared{slots: next, slotBytes: slotBytes, dim: params.SlotProcs, procs: procs}
		next += mem.Addr(params.SlotProcs * params.SlotProcs * slotBytes)
	case DeviceShmem:
		sq = &shmemShared{slotBytes: slotBytes, depth: params.QueuePackets, procs: procs}
		for i := 0; i < procs; i++ {
			q := queue{tail: next, head: next + line, ring: next + 3*line}
			q.lk = newLock(m, params.Lock, fmt.Sprintf("queue%d", i), next+2*line)
			sq.queues = append(sq.queues, q)
			next = q.ring + mem.Addr(params.QueuePackets*slotBytes)
		}
	}
	poolLock := newLock(m, params.Lock, "pool", next)
	next += line
	poolSize := int(seg.End()) - int(next)
	if poolSize < 4*blockHdr {
		return nil, nil, fmt.Errorf("mpich: shared_memory_bytes %d leaves no room for the data pool after the %s packet %s (%d bytes)",
			params.SharedMemoryBytes, params.Device, map[bool]string{true: "slots", false: "queues"}[lf != nil], int(next-seg.Base))
	}
	pool, err := newPool(m.Memory(), next, poolSize, poolLock)
	if err != nil {
		return nil, nil, err
	}
	devs := make([]Device, procs)
	for i := range devs {
		s := &shm{m: m, rank: i, cpu: m.CPU(i), fences: params.Fences, cached: params.ReadyBitCached}
		if lf != nil {
			lf.pool = pool
			s.waitPacket = fmt.Sprintf("rank %d: waiting for a packet (%s ready bits)", i, DeviceLFShmem)
			d := &lfshmem{poolData: poolData{shm: s, pool: pool}, sh: lf}
			for j := 0; j < procs; j++ {
				if j != i {
					d.watch = append(d.watch, lf.slot(i, j))
				}
			}
			devs[i] = d
		} else {
			sq.pool = pool
			s.waitPacket = fmt.Sprintf("rank %d: waiting for a packet (%s queue tail)", i, DeviceShmem)
			devs[i] = &shmem{poolData: poolData{shm: s, pool: pool}, sh: sq}
		}
	}
	return m, devs, nil
}

// shm is the per-process view of the shared-memory machine that the
// devices use: the routines with this process's rank bound, and the
// teaching switches applied.
type shm struct {
	m      SharedMemory
	rank   int
	cpu    *mem.CPU
	fences bool
	cached bool
	// waitPacket is the spin-wait's reason, formatted once: a wait is
	// frequent, a report naming it rare.
	waitPacket string
}

// readySet is PKT_READY_SET (without fences: a plain store).
func (s *shm) readySet(p *sim.Proc, a mem.Addr, v uint64) {
	if s.fences {
		s.m.ReadySet(p, s.rank, a, v)
		return
	}
	s.cpu.Store(p, a, 8, v)
}

// readyIsSet is the machine's PKT_READY_IS_SET (or, for teaching, a
// cached load).
func (s *shm) readyIsSet(p *sim.Proc, a mem.Addr) bool {
	if s.cached {
		return s.cpu.Load(p, a, 8) != 0
	}
	return s.m.ReadyIsSet(p, s.rank, a)
}

// load reads a shared word written by other processes: from memory, or
// through the cache when the teaching switch is on.
func (s *shm) load(p *sim.Proc, a mem.Addr) uint64 {
	if s.cached {
		return s.cpu.Load(p, a, 8)
	}
	return s.cpu.LoadUncached(p, a, 8)
}

// copyIn is PKT_COPYIN (without fences: the vector move alone, which does
// not see stores still in the store buffer).
func (s *shm) copyIn(p *sim.Proc, dst, src mem.Addr, n int) {
	if s.fences {
		s.m.CopyIn(p, s.rank, dst, src, n)
		return
	}
	s.cpu.VectorCopy(p, dst, src, n)
}

// fence is the synchronization instruction, when fences are on.
func (s *shm) fence(p *sim.Proc) {
	if s.fences {
		s.cpu.Fence(p)
	}
}

package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ch_shmem and ch_lfshmem on memory every process loads and stores: a
// segment of one node's memory (machines.SharedSegments; the SX-4's System
// V segment) with every process on that node. It holds the devices'
// queues or slots and the data pool; the locks are test-and-set on a
// word of it (the CPU's atomic) or System V semaphores
// (machines.Semaphores). Across nodes ch_lfshmem reaches its slots with
// remote writes instead (lfshmem.go, newRemoteSlotDevices).

// newSharedDevices sets up ch_shmem or ch_lfshmem on mach: on one node's
// shared segment when every process is on that node, else (ch_lfshmem)
// with remote writes into each receiver's memory; it returns each
// process's device.
func newSharedDevices(mach machines.Machine, params Params) (machines.Local, []Device, error) {
	user := "mpich " + params.Device
	m, err := machines.Need[machines.Local](mach, user, machines.VerbLocal)
	if err != nil {
		return nil, nil, err
	}
	ss, ok := mach.(machines.SharedSegments)
	onNode := ok && oneNode(ss) < 0
	if !onNode && params.Device == DeviceLFShmem {
		if rw, ok := mach.(machines.RemoteWrite); ok {
			devs, err := newRemoteSlotDevices(rw, params)
			return m, devs, err
		}
	}
	if !onNode {
		what := machines.VerbShared.Name + ": " + machines.VerbShared.What + ", with every process on one node"
		if ok {
			q := oneNode(ss)
			what += fmt.Sprintf(" (processes 0 and %d are on nodes %d and %d)", q, ss.NodeOf(0), ss.NodeOf(q))
		}
		if params.Device == DeviceLFShmem {
			what += "; or " + machines.VerbRemoteWrite.Name + ": " + machines.VerbRemoteWrite.What
		}
		return nil, nil, &machines.MissingCapability{Machine: mach.Name(), User: user, Capability: what}
	}
	devs, err := newSegmentDevices(ss, params)
	return m, devs, err
}

// oneNode is -1 when every process of m is on process 0's node, else the
// first process that is not.
func oneNode(m machines.SharedSegments) int {
	for q := 1; q < m.Procs(); q++ {
		if m.NodeOf(q) != m.NodeOf(0) {
			return q
		}
	}
	return -1
}

// newSegmentDevices creates the shared segment, lays out the device's
// queues or slots and the data pool in it, and the locks.
func newSegmentDevices(m machines.SharedSegments, params Params) ([]Device, error) {
	var sem machines.Semaphores
	if params.Lock == LockSysV {
		var err error
		if sem, err = machines.Need[machines.Semaphores](m, "mpich "+params.Device+" with lock "+LockSysV, machines.VerbSemaphores); err != nil {
			return nil, err
		}
	}
	procs := m.Procs()
	seg, err := m.SharedSegment(m.NodeOf(0), "mpich", params.SharedMemoryBytes)
	if err != nil {
		return nil, fmt.Errorf("mpich: shared_memory_bytes %d: %w", params.SharedMemoryBytes, err)
	}
	slotBytes := roundUp(HeaderBytes + params.ShortBytes)
	const line = 128
	var lf *lfShared
	var sq *shmemShared
	next := seg.Addr
	switch params.Device {
	case DeviceLFShmem:
		// The slot_procs x slot_procs array of section 5, by receiver.
		lf = &lfShared{slotBytes: slotBytes, procs: procs}
		for to := 0; to < procs; to++ {
			lf.base = append(lf.base, next+mem.Addr(to*params.SlotProcs*slotBytes))
		}
		next += mem.Addr(params.SlotProcs * params.SlotProcs * slotBytes)
	case DeviceShmem:
		sq = &shmemShared{slotBytes: slotBytes, depth: params.QueuePackets, procs: procs}
		for i := 0; i < procs; i++ {
			q := queue{tail: next, head: next + line, ring: next + 3*line}
			q.lk = newLock(sem, params.Lock, fmt.Sprintf("queue%d", i), next+2*line)
			sq.queues = append(sq.queues, q)
			next = q.ring + mem.Addr(params.QueuePackets*slotBytes)
		}
	}
	poolLock := newLock(sem, params.Lock, "pool", next)
	next += line
	poolSize := int(seg.Addr) + seg.Len - int(next)
	if poolSize < 4*blockHdr {
		return nil, fmt.Errorf("mpich: shared_memory_bytes %d leaves no room for the data pool after the %s packet %s (%d bytes)",
			params.SharedMemoryBytes, params.Device, map[bool]string{true: "slots", false: "queues"}[lf != nil], int(next-seg.Addr))
	}
	pool, err := newPool(machines.ProcessorOf(m, 0), seg, next, poolSize, poolLock)
	if err != nil {
		return nil, err
	}
	devs := make([]Device, procs)
	for i := range devs {
		s := newShm(m, i, params)
		s.coherent = s.cpu.Coherent()
		data := poolData{shm: s, pool: pool, mem: seg.Mem}
		if lf != nil {
			s.waitPacket = fmt.Sprintf("rank %d: waiting for a packet (%s ready bits)", i, DeviceLFShmem)
			devs[i] = &lfPool{lfshmem: newLFShmem(s, lf, sharedSlots{s: s, sh: lf}), poolData: data}
		} else {
			s.waitPacket = fmt.Sprintf("rank %d: waiting for a packet (%s queue tail)", i, DeviceShmem)
			devs[i] = &shmem{poolData: data, sh: sq}
		}
	}
	return devs, nil
}

// shm is one process's view of the memory the devices share: its CPU, the
// synchronization routines of section 5 built from the CPU's operations,
// and the teaching switches applied.
type shm struct {
	m      machines.Local
	rank   int
	cpu    machines.Processor
	fences bool
	cached bool
	// coherent: the segment's words are read through caches the hardware
	// keeps coherent (mem.CPU.Coherent; a bus-snooping SMP), so a plain
	// load sees the last store and no lock needs to flush the cache:
	// NEC's routines for non-coherent caches are not needed there.
	coherent bool
	// waitPacket is the spin-wait's reason, formatted once: a wait is
	// frequent, a report naming it rare.
	waitPacket string
}

func newShm(m machines.Local, rank int, params Params) *shm {
	return &shm{m: m, rank: rank, cpu: machines.ProcessorOf(m, rank), fences: params.Fences, cached: params.ReadyBitCached}
}

// The synchronization routines NEC supplied (section 5): "we solve the
// cache coherency problem by using vector move instructions ... which
// bypass the cache. We solve the sequential consistency problem by using
// the NEC routines for the critical operations of setting and testing the
// bit indicating whether a packet slot is full". Each is the CPU's
// operations in that order.

// readySet is PKT_READY_SET: a fence (every earlier store of this process
// visible first), the store of v, a fence (the ready word visible on
// return). Without fences, the store alone.
func (s *shm) readySet(p *sim.Proc, a mem.Addr, v uint64) {
	if s.fences {
		s.cpu.Fence(p)
	}
	s.cpu.Store(p, a, 8, v)
	if s.fences {
		s.cpu.Fence(p)
	}
}

// readyIsSet is PKT_READY_IS_SET: the ready word loaded from memory, not
// from a (stale) copy in the cache; for teaching (ready_bit_cached), or
// where caches are coherent, a cached load.
func (s *shm) readyIsSet(p *sim.Proc, a mem.Addr) bool {
	return s.load(p, a) != 0
}

// load reads a shared word written by other processes: from memory, or
// through the cache when the teaching switch is on or the cache is
// coherent.
func (s *shm) load(p *sim.Proc, a mem.Addr) uint64 {
	if s.cached || s.coherent {
		return s.cpu.Load(p, a, 8)
	}
	return s.cpu.LoadUncached(p, a, 8)
}

// copyIn is PKT_COPYIN: a fence (the packet was built with scalar stores,
// which must be in memory), then the library memcpy: on the SX-4 a vector
// move, which bypasses the cache, so the data is visible to every
// processor when it returns (machines.Copier); where caches are coherent,
// the CPU's copy, its lines kept coherent by the hardware. Without fences,
// the vector move alone, which does not see stores still in the store
// buffer.
func (s *shm) copyIn(p *sim.Proc, dst, src mem.Addr, n int) {
	if s.fences {
		s.cpu.Fence(p)
	}
	s.memcpy(p, dst, src, n)
}

// flush invalidates the whole scalar cache, as every lock acquisition
// does: the SX-4 has no single-line flush (section 5). Coherent caches
// need none.
func (s *shm) flush(p *sim.Proc) {
	if !s.coherent {
		s.cpu.FlushCache(p)
	}
}

// syncLoad reads a lock or queue word other processes write: from memory
// (uncached), or a plain load where caches are coherent.
func (s *shm) syncLoad(p *sim.Proc, a mem.Addr) uint64 {
	if s.coherent {
		return s.cpu.Load(p, a, 8)
	}
	return s.cpu.LoadUncached(p, a, 8)
}

// fence is the synchronization instruction, when fences are on.
func (s *shm) fence(p *sim.Proc) {
	if s.fences {
		s.cpu.Fence(p)
	}
}

// processor is the process's processor (copier).
func (s *shm) processor() machines.Processor { return s.cpu }

// memcpy is the library memcpy (on the SX-4 a vector move, which bypasses
// the cache).
func (s *shm) memcpy(p *sim.Proc, dst, src mem.Addr, n int) {
	machines.Memcpy(s.m, p, s.rank, dst, src, n)
}

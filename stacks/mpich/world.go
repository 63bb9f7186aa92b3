package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Name is the stack's name in scenarios.
const Name = "mpich"

// World is MPI_COMM_WORLD: one Rank per process of the machine, sharing
// the device's System V shared memory.
type World struct {
	m      SharedMemory
	params Params
	seg    mem.Segment
	ranks  []*Rank
	pool   *pool
}

// NewWorld initializes MPICH on every process of m (MPI_Init): it creates
// the shared segment, lays out the device's queues or slots and the data
// pool in it, and the locks.
func NewWorld(mach machines.Machine, params Params) (*World, error) {
	m, err := machines.Require[SharedMemory](mach, "mpich "+params.Device, sharedMemoryCapability)
	if err != nil {
		return nil, err
	}
	procs := m.Procs()
	if err := params.Validate(procs); err != nil {
		return nil, err
	}
	seg, err := m.ShmGet("mpich", params.SharedMemoryBytes)
	if err != nil {
		return nil, fmt.Errorf("mpich: shared_memory_bytes %d: %w", params.SharedMemoryBytes, err)
	}
	w := &World{m: m, params: params, seg: seg}
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
		return nil, fmt.Errorf("mpich: shared_memory_bytes %d leaves no room for the data pool after the %s packet %s (%d bytes)",
			params.SharedMemoryBytes, params.Device, map[bool]string{true: "slots", false: "queues"}[lf != nil], int(next-seg.Base))
	}
	w.pool, err = newPool(m.Memory(), next, poolSize, poolLock)
	if err != nil {
		return nil, err
	}
	for i := 0; i < procs; i++ {
		s := &shm{m: m, rank: i, cpu: m.CPU(i), fences: params.Fences, cached: params.ReadyBitCached}
		var dev Device
		if lf != nil {
			lf.pool = w.pool
			d := &lfshmem{shm: s, sh: lf}
			for j := 0; j < procs; j++ {
				if j != i {
					d.watch = append(d.watch, lf.slot(i, j))
				}
			}
			dev = d
		} else {
			sq.pool = w.pool
			dev = &shmem{shm: s, sh: sq}
		}
		r, err := newRank(w, i, dev, s)
		if err != nil {
			return nil, err
		}
		w.ranks = append(w.ranks, r)
	}
	return w, nil
}

// PoolBytes is the largest block of message data the shared pool can hold:
// longer messages move in several segments.
func (w *World) PoolBytes() int { return w.pool.capacity() }

// Rank is process i's communicator.
func (w *World) Rank(i int) *Rank { return w.ranks[i] }

// Size is the number of processes.
func (w *World) Size() int { return len(w.ranks) }

// Comms returns every rank as a stacks.Comm.
func (w *World) Comms() []stacks.Comm {
	c := make([]stacks.Comm, len(w.ranks))
	for i, r := range w.ranks {
		c[i] = r
	}
	return c
}

// Open builds the machine named machineName (with its scenario params) for
// procs processes and MPICH on it (stack.params): what a workload calls.
func Open(eng *sim.Engine, file, machineName string, machineParams, stackParams *yaml.Node, procs int) (*World, error) {
	params, err := ParamsFromYAML(file, stackParams)
	if err != nil {
		return nil, err
	}
	var m machines.Machine
	switch machineName {
	case sx4.Name:
		m, err = sx4.FromYAML(eng, file, machineParams, procs)
	default:
		return nil, fmt.Errorf("%s: mpich's shared-memory devices run on machine %q only, not %q", file, sx4.Name, machineName)
	}
	if err != nil {
		return nil, err
	}
	w, err := NewWorld(m, params)
	if err != nil {
		return nil, fmt.Errorf("%s: stack.params: %w", file, err)
	}
	return w, nil
}

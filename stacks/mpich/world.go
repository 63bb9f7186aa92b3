package mpich

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/stacks"
)

// Name is the stack's name in scenarios.
const Name = "mpich"

// World is MPI_COMM_WORLD: one Rank per process of the machine, each over
// its own instance of the device.
type World struct {
	host   Machine
	params Params
	ranks  []*Rank
}

// NewWorld initializes MPICH on every process of mach (MPI_Init) with the
// device params.Device: ch_shmem and ch_lfshmem need the SharedMemory
// capability (machines/sx4 offers it), ch_t3d the T3D capability
// (machines.RemoteWrite: machines/t3d offers it); a machine without it gives a
// *machines.MissingCapability error.
func NewWorld(mach machines.Machine, params Params) (*World, error) {
	var (
		host Machine
		devs []Device
		err  error
	)
	if err := params.Validate(mach.Procs()); err != nil {
		return nil, err
	}
	if memBytes, ok := memoryBytes(mach); ok {
		if err := params.checkMemory(memBytes, mach.Procs()); err != nil {
			return nil, err
		}
	}
	switch params.Device {
	case DeviceShmem, DeviceLFShmem:
		host, devs, err = newSharedMemoryDevices(mach, params)
	case DeviceT3D:
		host, devs, err = newT3DDevices(mach, params)
		if err == nil && params.ReceiveQueue == QueueShared {
			devs, err = newT3DQueueDevices(mach, params, devs)
		}
	}
	if err != nil {
		return nil, err
	}
	w := &World{host: host, params: params}
	for i, dev := range devs {
		r, err := newRank(w, i, dev)
		if err != nil {
			return nil, err
		}
		w.ranks = append(w.ranks, r)
	}
	return w, nil
}

// memoryBytes is the memory a process can use on mach, when the machine
// bounds it (machines.Memory: the SX-4 node's main memory, shared by its
// processes; a T3D PE's local memory).
func memoryBytes(mach machines.Machine) (int, bool) {
	if m, ok := mach.(machines.Memory); ok {
		return m.MemoryBytes(), true
	}
	return 0, false
}

// PoolBytes is the largest block of message data the device can hand out
// at once (the shared pool of ch_shmem and ch_lfshmem, a per-sender eager
// buffer of ch_t3d): longer messages move in several segments or, with
// ch_t3d, straight into the receive buffer.
func (w *World) PoolBytes() int { return w.ranks[0].dev.DataCapacity() }

// Rank is process i's communicator.
func (w *World) Rank(i int) *Rank { return w.ranks[i] }

// Size is the number of processes.
func (w *World) Size() int { return len(w.ranks) }

// Open initializes MPICH on mach (NewWorld) and returns it as a World:
// each rank offers stacks.Comm.
func Open(mach machines.Machine, params Params) (*stacks.World, error) {
	w, err := NewWorld(mach, params)
	if err != nil {
		return nil, err
	}
	sw := &stacks.World{Stack: Name, Title: "MPICH " + params.Device, Machine: mach}
	var coll *collLayout
	if params.Device == DeviceT3D && params.Collectives == CollectivesShmem {
		coll = &collLayout{m: w.host.(t3dHost).T3D, chunk: params.EagerBytes}
	}
	for _, r := range w.ranks {
		if coll != nil {
			sw.Ranks = append(sw.Ranks, &collRank{rankOf: r, l: coll})
			continue
		}
		sw.Ranks = append(sw.Ranks, r)
	}
	return sw, nil
}

// Needs are the machine capabilities MPICH's devices use.
func Needs() []machines.Capability {
	return []machines.Capability{
		machines.Cap[SharedMemory]("sysv-shm", sharedMemoryCapability+", for "+DeviceShmem+" and "+DeviceLFShmem),
		machines.Cap[T3D]("one-sided", t3dCapability+", for "+DeviceT3D),
		machines.Cap[T3DQueue]("swap-get", t3dQueueCapability),
	}
}

// Comms returns every rank as a stacks.Comm.
func (w *World) Comms() []stacks.Comm {
	c := make([]stacks.Comm, len(w.ranks))
	for i, r := range w.ranks {
		c[i] = r
	}
	return c
}

// FootprintBytes is what the device holds in the rank's memory
// (stacks.Footprint): with ch_t3d, the packet rings and control blocks of
// every peer and the shared receive queue; with the shared-memory devices, the shared segment (in the
// node's memory, which all processes share).
func (r *Rank) FootprintBytes(nonblocking bool) int {
	p := r.w.params
	if p.Device != DeviceT3D {
		return p.SharedMemoryBytes
	}
	line := func(b int) int { return (b + 63) &^ 63 }
	n := len(r.w.ranks)
	b := line(n*p.RingPackets*p.slotBytes()) + line(n*ctlBytes)
	if p.ReceiveQueue == QueueShared {
		b += line(qSlots+p.QueuePackets*p.slotBytes()) + line(qGetSize)
	}
	return b
}

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
	host   machines.Local
	params Params
	ranks  []*Rank
	// remote: the device reaches its peers with remote writes (ch_t3d,
	// ch_lfshmem across nodes), not through a shared segment.
	remote bool
}

// NewWorld initializes MPICH on every process of mach (MPI_Init) with the
// device params.Device. What each device needs of the machine, in verbs
// (Needs): ch_shmem a shared segment with every process on one node
// (machines.SharedSegments; machines.Semaphores for lock sysv);
// ch_lfshmem that, or else remote writes (machines.RemoteWrite);
// ch_t3d remote writes, with receive_queue fetch-inc (the default) a
// fetch-and-increment register or a remote fetch-and-increment, with
// receive_queue shared remote read and swap. A machine without them gives a *machines.MissingCapability error
// naming the verb.
func NewWorld(mach machines.Machine, params Params) (*World, error) {
	if err := params.Validate(mach.Procs()); err != nil {
		return nil, err
	}
	if memBytes, ok := memoryBytes(mach); ok {
		if err := params.checkMemory(memBytes, mach.Procs()); err != nil {
			return nil, err
		}
	}
	var (
		host machines.Local
		devs []Device
		err  error
	)
	w := &World{params: params}
	switch params.Device {
	case DeviceShmem, DeviceLFShmem:
		host, devs, err = newSharedDevices(mach, params)
		if len(devs) > 0 {
			_, w.remote = devs[0].(*lfPut)
		}
	case DeviceT3D:
		host, devs, err = newT3DWorldDevices(mach, params)
		w.remote = true
	case DeviceSock:
		host, devs, err = newSockDevices(mach, params)
		w.remote = true
	}
	if err != nil {
		return nil, err
	}
	w.host = host
	for i, dev := range devs {
		r, err := newRank(w, i, dev)
		if err != nil {
			return nil, err
		}
		w.ranks = append(w.ranks, r)
	}
	return w, nil
}

// newT3DWorldDevices sets up ch_t3d on mach: a fetch-and-increment pool
// per PE, per-sender rings, or a shared receive queue per PE.
func newT3DWorldDevices(mach machines.Machine, params Params) (machines.Local, []Device, error) {
	m, err := machines.Need[machines.RemoteWrite](mach, "mpich "+params.Device, machines.VerbRemoteWrite)
	if err != nil {
		return nil, nil, err
	}
	t3d, err := newT3DDevices(m, params, params.ReceiveQueue == QueuePerSender)
	if err != nil {
		return nil, nil, err
	}
	switch params.ReceiveQueue {
	case QueueFetchInc:
		devs, err := newT3DFIDevices(m, params, t3d)
		return m, devs, err
	case QueueShared:
		devs, err := newT3DQueueDevices(m, params, t3d)
		return m, devs, err
	}
	devs := make([]Device, len(t3d))
	for i, d := range t3d {
		devs[i] = d
	}
	return m, devs, nil
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
		coll = &collLayout{m: w.host.(machines.RemoteWrite), chunk: params.EagerBytes}
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

// Needs are the verbs MPICH's devices use, each with the devices that
// need it.
func Needs() []machines.Capability {
	need := func(v machines.Capability, why string) machines.Capability {
		v.What += ", " + why
		return v
	}
	return []machines.Capability{
		need(machines.VerbLocal, "for every device"),
		need(machines.VerbShared, "for "+DeviceShmem+", and "+DeviceLFShmem+" with every process on one node"),
		need(machines.VerbSemaphores, "for lock "+LockSysV+" there"),
		need(machines.VerbRemoteWrite, "for "+DeviceT3D+", and "+DeviceLFShmem+" across nodes"),
		need(machines.VerbOrderedWrites, "used by "+DeviceT3D+" where present (else a quiet orders its puts)"),
		need(machines.VerbFetchIncReg, "for "+DeviceT3D+" with receive_queue "+QueueFetchInc+" (the default)"),
		need(machines.VerbRemoteFetchInc, "for "+DeviceT3D+" with receive_queue "+QueueFetchInc+" where there is no register (one built from a word in each PE's memory)"),
		need(machines.VerbRemoteRead, "for "+DeviceT3D+" with receive_queue "+QueueShared),
		need(machines.VerbSwap, "for "+DeviceT3D+" with receive_queue "+QueueShared),
		need(machines.VerbSockets, "for "+DeviceSock),
		need(machines.VerbScheduler, "used where present for the cost of a thread woken from a mutex or condition variable"),
		need(machines.VerbThreads, "used by "+DeviceT3D+" where present: a process's threads time-share its CPU"),
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
// (stacks.Footprint): with ch_t3d, the control blocks of every peer and
// its receive queue (the fetch-and-increment pool, the packet rings of
// every peer, or the shared queue); with ch_lfshmem across nodes,
// its slots, the counts of slots its peers emptied and the control
// blocks; on a
// shared segment, the segment (in the node's memory, which all processes
// share).
func (r *Rank) FootprintBytes(nonblocking bool) int {
	p := r.w.params
	if p.Device == DeviceSock {
		return 0 // the connections' buffers are the kernel's
	}
	if !r.w.remote {
		return p.SharedMemoryBytes
	}
	line := func(b int) int { return (b + 63) &^ 63 }
	n := len(r.w.ranks)
	if p.Device == DeviceLFShmem {
		return line(n*p.slotBytes()) + line(8*n) + line(n*ctlBytes)
	}
	b := line(n * ctlBytes)
	switch p.ReceiveQueue {
	case QueuePerSender:
		b += line(n * p.RingPackets * p.slotBytes())
	case QueueShared:
		b += line(qSlots+p.QueuePackets*p.slotBytes()) + line(qGetSize)
	case QueueFetchInc:
		b += line(p.QueuePackets * p.slotBytes())
		if _, hw := r.w.host.(machines.FetchIncRegister); !hw {
			b += line(8) // the word a remote fetch-and-increment builds the register from
		}
	}
	return b
}

// sendCycles is the software of the send path per control packet:
// t3d_send_cycles on ch_t3d (EPCC's per-message work, fitted by
// calibration/t3d-mpi.yaml), packet_cycles on the other devices.
func (w *World) sendCycles() float64 {
	if w.params.Device == DeviceT3D {
		return w.params.T3DSendCycles
	}
	return w.params.PacketCycles
}

// recvCycles is the receive path's software per control packet:
// t3d_recv_cycles on ch_t3d, packet_cycles on the other devices.
func (w *World) recvCycles() float64 {
	if w.params.Device == DeviceT3D {
		return w.params.T3DRecvCycles
	}
	return w.params.PacketCycles
}

package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
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
// capability (machines/sx4), ch_t3d the T3D capability (machines/t3d); a
// machine without it gives a *machines.MissingCapability error.
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

// memoryBytes is the memory a process can use on mach: the SX-4 node's
// main memory (shared by its processes), a T3D PE's local memory.
func memoryBytes(mach machines.Machine) (int, bool) {
	switch m := mach.(type) {
	case *sx4.Machine:
		return m.Params().NodeMemoryMB << 20, true
	case *t3d.Machine:
		return m.Params().MemoryMB << 20, true
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
	case t3d.Name:
		var mp t3d.Params
		if mp, err = t3d.ParseParams(file, "machine.params", machineParams); err == nil {
			if m, err = t3d.New(eng, procs, mp); err != nil {
				err = fmt.Errorf("%s: machine.params: %w", file, err)
			}
		}
	default:
		return nil, fmt.Errorf("%s: mpich runs on machine %q (devices %s, %s) or %q (device %s), not %q", file, sx4.Name, DeviceShmem, DeviceLFShmem, t3d.Name, DeviceT3D, machineName)
	}
	if err != nil {
		return nil, err
	}
	w, err := NewWorld(m, params)
	if err != nil {
		return nil, machines.Locate(file, "stack.params", stackParams, err)
	}
	return w, nil
}

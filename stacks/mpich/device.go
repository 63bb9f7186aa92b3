package mpich

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Device is MPICH's abstract device (section 3) for one process: it moves
// control packets (the envelope plus, for short messages, the data) and
// message data between processes. The protocols (short, eager, rendezvous)
// and MPI matching live above it, in Rank, and are the same for every
// device.
//
// Packets: the caller builds a packet (HeaderBytes of header, the ready
// word first, then inline data) in a private buffer and hands it to
// SendControl, which either delivers it whole or returns false when the
// destination cannot take it now (slot or queue full); the caller backs off
// and retries (Figure 3). Packets from one sender to one receiver arrive in
// the order sent. ReadControl returns at most one incoming packet, copied
// into a private buffer (Figure 2 with is_blocking false). WaitControl
// blocks until a packet may have arrived, polling as the hardware would.
//
// Data: eager and rendezvous data travel through memory the device hands
// out with AllocData (for the shared-memory devices, the bounded shared
// pool guarded by a lock). The sender copies into it (PutData) and names
// its address in a packet; the receiver copies out (GetData) and gives it
// back (FreeData). AllocData may return less than asked (at least min) so
// that long messages move in segments, or nothing when no memory is free
// now (the caller retries later). A put-based device (the T3D) can
// implement the same contract with memory in the receiver's address space
// and puts for PutData.
type Device interface {
	// Name is the device's MPICH name (ch_shmem, ch_lfshmem, ...).
	Name() string
	// SendControl delivers the first size bytes of pkt to dest, or reports
	// false if dest cannot take a packet now.
	SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error)
	// ReadControl copies one incoming packet, if any, into pkt (header and
	// inline data) and returns its sender.
	ReadControl(p *sim.Proc, pkt mem.Region) (from int, ok bool, err error)
	// WaitControl blocks until a packet may have arrived.
	WaitControl(p *sim.Proc)
	// AllocData returns memory for n bytes of data to dest, or for fewer
	// but at least min; ok is false when none is available now.
	AllocData(p *sim.Proc, dest, min, n int) (data mem.Region, ok bool, err error)
	// DataCapacity is the most AllocData can ever return.
	DataCapacity() int
	// DataAt is the region a packet names by address and length.
	DataAt(a mem.Addr, n int) mem.Region
	// PutData copies src into data (the sender's side).
	PutData(p *sim.Proc, data, src mem.Region)
	// GetData copies data into dst (the receiver's side).
	GetData(p *sim.Proc, dst, data mem.Region)
	// FreeData gives data back once it has been copied out.
	FreeData(p *sim.Proc, data mem.Region) error
}

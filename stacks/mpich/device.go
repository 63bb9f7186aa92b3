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
// now (the caller retries later). A put-based device (ch_t3d) implements
// the same contract with memory in the receiver's address space and puts
// for PutData.
//
// Optional capabilities a device may add: DirectData (rendezvous data put
// straight into the receive buffer), RoomWaiter (the progress engine spins
// until room frees up instead of backing off) and PerSenderData.
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
	// PutData copies src into data, memory AllocData returned for dest
	// (the sender's side); the data is visible to dest on return.
	PutData(p *sim.Proc, dest int, data, src mem.Region)
	// GetData copies data into dst (the receiver's side).
	GetData(p *sim.Proc, dst, data mem.Region)
	// FreeData gives data back once it has been copied out.
	FreeData(p *sim.Proc, data mem.Region) error
}

// DirectData is an optional Device capability: the sender can write into
// the receiver's memory (a one-sided put). The rendezvous protocol then
// moves a long message straight into the receive buffer: the ok-to-send
// names the buffer, the sender puts the data there with PutDirect and
// sends a fin packet; no data memory is allocated.
type DirectData interface {
	// PutDirect copies src to address dst in dest's memory and returns
	// once it is delivered there.
	PutDirect(p *sim.Proc, dest int, dst mem.Addr, src mem.Region) error
	// ReceivedDirect is the receiver's side, when the fin packet says the
	// data is in buf: on a machine whose caches remote writes do not
	// update, the device drops its stale lines of buf.
	ReceivedDirect(p *sim.Proc, buf mem.Region)
}

// RoomWaiter is an optional Device capability: a receiver tells a sender
// that room is free again (a consumed packet slot, a released data buffer)
// by writing a word into the sender's own memory, so a sender that could
// not send spins on those words instead of backing off blindly.
type RoomWaiter interface {
	// WaitRoom blocks until room may have been freed or a packet may have
	// arrived.
	WaitRoom(p *sim.Proc)
}

// PerSenderData is an optional Device property: DataPerSender reports that
// the device's data memory is one buffer per sender at each receiver, so
// the protocol layer copies an unexpected eager message out at once and
// frees its buffer.
type PerSenderData interface {
	DataPerSender() bool
}

// Package t3dmpi is the "MPI on the T3D" baseline of papers/aclmpl-t3d.txt
// section 5: an MPI whose device is built on one-sided puts, with MPICH's
// three protocols (stacks/mpich, papers/mpich-sx4.txt section 3):
//
//   - short: the data travels inside the control packet;
//   - eager: the data is put at once into a buffer the receiver keeps for
//     each sender, then a packet announces it; the receiver copies it out;
//   - rendezvous: a request-to-send packet; once the receive is posted the
//     receiver puts a clear-to-send block (its buffer's address) into the
//     sender's memory; the sender puts the data straight into the receive
//     buffer, waits for its delivery, and sends a FIN packet.
//
// Control packets go into per-sender rings at the receiver (Slots packets
// each, single writer, like ch_lfshmem's slots): the sender waits for a
// credit (the receiver puts back how many packets it consumed), puts the
// payload, waits for its delivery, then puts the header whose sequence
// number marks the packet valid. The receiver's progress engine polls the
// next slot of every sender's ring with uncached loads (remote puts leave
// the cache stale) and matches packets against posted receives, keeping
// unexpected ones in order. Send is Isend+Wait; every wait drives the
// progress engine.
//
// It lives here rather than in stacks/mpich because that package's World
// is bound to its shared-memory capability (System V segments, semaphores,
// the NEC routines); the protocols and the software cost per packet are
// MPICH's. The paper's MPI was EPCC's; its internals are not described.
package t3dmpi

import (
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Name is the stack's name in scenarios.
const Name = "mpi-t3d"

// packetCycles is the MPI software path per control packet, at the sender
// and again at the receiver (envelope, matching, request bookkeeping). It
// is MPICH's: stacks/mpich.packetCycles, 1700 cycles, calibrated there on
// the SX-4 (papers/mpich-sx4.txt Figure 6); the same code on the T3D's
// Alpha is taken to need the same number of cycles. Not tuned to any T3D
// MPI figure (those are held out).
const packetCycles = 1700

// pollCycles is the loop overhead per sender ring examined by the progress
// engine (the uncached loads themselves are charged as loads). Assumed.
const pollCycles = 4

// Machine is what the device needs: per-PE memory and CPU, puts and quiet.
type Machine interface {
	machines.Machine
	CPU(pe int) *mem.CPU
	Alloc(pe int, name string, n int) (mem.Region, error)
	Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int)
	PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64)
	Quiet(p *sim.Proc, pe int)
}

// Params are the stack's options (stack.params).
type Params struct {
	// ShortBytes: messages up to this length travel inside the packet.
	// MPICH's default is "less than 1 Kbyte" (mpich-sx4.txt section 3);
	// 1024 taken.
	ShortBytes int `yaml:"short_bytes"`
	// EagerBytes: longer messages up to this length use the eager
	// protocol, through a per-sender buffer at the receiver; longer ones
	// use rendezvous. MPICH's default eager limit is 128 KB (mpich-sx4.txt
	// section 3), but a buffer per sender on every PE must fit the T3D's
	// memory on 128 PEs: 16 KB assumed.
	EagerBytes int `yaml:"eager_bytes"`
	// Slots is the number of packets in each sender's ring at a receiver.
	// Assumed 2.
	Slots int `yaml:"slots"`
}

// DefaultParams returns the default options.
func DefaultParams() Params { return Params{ShortBytes: 1024, EagerBytes: 16 << 10, Slots: 2} }

// ParseParams decodes stack params over the defaults.
func ParseParams(file, field string, node *yaml.Node) (Params, error) {
	p := DefaultParams()
	if err := strictyaml.DecodeAt(file, field, node, &p); err != nil {
		return Params{}, err
	}
	switch {
	case p.ShortBytes < 8:
		return Params{}, fmt.Errorf("%s: %s.short_bytes must be at least 8, got %d", file, field, p.ShortBytes)
	case p.EagerBytes < p.ShortBytes:
		return Params{}, fmt.Errorf("%s: %s.eager_bytes (%d) must be at least short_bytes (%d)", file, field, p.EagerBytes, p.ShortBytes)
	case p.Slots < 1:
		return Params{}, fmt.Errorf("%s: %s.slots must be at least 1, got %d", file, field, p.Slots)
	}
	return p, nil
}

// Packet kinds.
const (
	kShort = iota + 1
	kEager
	kRTS
	kFIN
)

const hdrBytes = 32

// World is MPI_COMM_WORLD on the partition.
type World struct {
	m      Machine
	params Params
	ranks  []*Rank
}

// Rank is one process's MPI.
type Rank struct {
	w    *World
	m    Machine
	cpu  *mem.CPU
	rank int
	size int

	rings   mem.Region // per sender: Slots packets of hdrBytes+ShortBytes
	eager   mem.Region // per sender: EagerBytes
	ctl     mem.Region // per receiver: credit (8), eager released (8), CTS addr (8), CTS seq (8)
	stage   mem.Region
	watch   []mem.Addr
	sent    []uint64 // packets sent to each receiver
	esent   []uint64 // eager buffers used at each receiver
	ctsGot  []uint64 // CTS blocks consumed from each receiver
	recvd   []uint64 // packets consumed from each sender
	posted  []*request
	unexp   []*request
	waitFIN []*request   // per sender: the receive whose rendezvous data is coming
	sends   []*request   // rendezvous sends waiting for their clear-to-send
	erel    []uint64     // eager buffers released to each sender
	ctsSent []uint64     // clear-to-send blocks sent to each sender
	rtsSeq  []uint64     // rendezvous sends started to each receiver
	pendCTS [][]*request // per sender: matched rendezvous receives waiting their turn
	free    []mem.Region
	busy    bool // inside the progress engine
}

// New initializes MPI on every PE of m (MPI_Init).
func New(mach machines.Machine, params Params) (*World, error) {
	m, err := machines.Require[Machine](mach, "mpi-t3d", "per-PE memory and one-sided put with quiet (t3dmpi.Machine)")
	if err != nil {
		return nil, err
	}
	w := &World{m: m, params: params}
	n := m.Procs()
	for i := 0; i < n; i++ {
		r := &Rank{w: w, m: m, cpu: m.CPU(i), rank: i, size: n,
			sent: make([]uint64, n), esent: make([]uint64, n), ctsGot: make([]uint64, n), recvd: make([]uint64, n),
			waitFIN: make([]*request, n), erel: make([]uint64, n), ctsSent: make([]uint64, n),
			rtsSeq: make([]uint64, n), pendCTS: make([][]*request, n)}
		if r.rings, err = m.Alloc(i, "mpi.rings", n*params.Slots*r.slotBytes()); err != nil {
			return nil, fmt.Errorf("mpi-t3d: PE %d: packet rings: %w", i, err)
		}
		if r.eager, err = m.Alloc(i, "mpi.eager", n*params.EagerBytes); err != nil {
			return nil, fmt.Errorf("mpi-t3d: PE %d: eager buffers: %w", i, err)
		}
		if r.ctl, err = m.Alloc(i, "mpi.control", n*32); err != nil {
			return nil, err
		}
		if r.stage, err = m.Alloc(i, "mpi.stage", 64); err != nil {
			return nil, err
		}
		for s := 0; s < n; s++ {
			for k := 0; k < params.Slots; k++ {
				r.watch = append(r.watch, r.slot(s, k))
			}
			r.watch = append(r.watch, r.ctlAddr(s), r.ctlAddr(s)+8, r.ctlAddr(s)+24)
		}
		w.ranks = append(w.ranks, r)
	}
	return w, nil
}

// Rank returns process i's communicator.
func (w *World) Rank(i int) *Rank { return w.ranks[i] }

func (r *Rank) slotBytes() int { return (hdrBytes + r.w.params.ShortBytes + 63) &^ 63 }

// slot is packet k of sender s's ring in this rank's memory.
func (r *Rank) slot(s, k int) mem.Addr {
	return r.rings.Addr + mem.Addr((s*r.w.params.Slots+k)*r.slotBytes())
}

func (r *Rank) eagerBuf(s int) mem.Addr { return r.eager.Addr + mem.Addr(s*r.w.params.EagerBytes) }

// ctlAddr is this rank's control block for peer q: [credit, eager
// released, CTS address, CTS count].
func (r *Rank) ctlAddr(q int) mem.Addr { return r.ctl.Addr + mem.Addr(q*32) }

// Rank is the process's rank.
func (r *Rank) Rank() int { return r.rank }

// Size is the number of processes.
func (r *Rank) Size() int { return r.size }

// Buffer allocates n bytes of the process's memory.
func (r *Rank) Buffer(n int) (mem.Region, error) { return r.m.Alloc(r.rank, "user", n) }

// request is a send or a receive.
type request struct {
	r      *Rank
	send   bool
	buf    mem.Region
	peer   int
	tag    int
	done   bool
	err    error
	status stacks.Status
	rts    bool   // send: rendezvous, waiting for CTS
	seq    uint64 // rendezvous: the number of the send
	// unexpected packet
	kind int
	n    int
	data mem.Region
}

func (q *request) Test(p *sim.Proc) (bool, stacks.Status, error) {
	if !q.done {
		if err := q.r.progress(p); err != nil {
			return false, q.status, err
		}
	}
	return q.done, q.status, q.err
}

func (q *request) Wait(p *sim.Proc) (stacks.Status, error) {
	r := q.r
	var err error
	r.cpu.SpinUntil(p, fmt.Sprintf("mpi-t3d rank %d: waiting for a %s", r.rank, map[bool]string{true: "send", false: "receive"}[q.send]), func() bool {
		if err = r.progress(p); err != nil {
			return true
		}
		return q.done
	}, r.watch...)
	if err != nil {
		return q.status, err
	}
	return q.status, q.err
}

func (r *Rank) check(peer int) error {
	if peer < 0 || peer >= r.size {
		return fmt.Errorf("mpi-t3d: rank %d: rank %d out of range [0, %d)", r.rank, peer, r.size)
	}
	return nil
}

// Send is MPI_Send: Isend and Wait.
func (r *Rank) Send(p *sim.Proc, buf mem.Region, dest, tag int) error {
	q, err := r.Isend(p, buf, dest, tag)
	if err != nil {
		return err
	}
	_, err = q.Wait(p)
	return err
}

// Recv is MPI_Recv: Irecv and Wait.
func (r *Rank) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	q, err := r.Irecv(p, buf, src, tag)
	if err != nil {
		return stacks.Status{}, err
	}
	return q.Wait(p)
}

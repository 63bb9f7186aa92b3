// Package pvm is PVM 3.3's direct route for MPPs, as CRI shipped it for the
// T3D and as papers/aclmpl-t3d.txt benchmarked it (section 5: "in PVM we
// used psend() and precv() instead of using the other routines which pack
// and unpack the data"), on a machine with one-sided remote writes (the
// T3D's SHMEM puts; elsewhere the machine's machines.RemoteWrite).
//
// What the package models, and from where:
//
//   - pvm_psend and pvm_precv pack and send (receive and unpack) in one
//     call, mapped onto the native transfer (hardware.yaml
//     t3d_pvm.psend_precv): the sender puts the data straight from the
//     user's buffer into a message slot in the receiver's memory; no pack
//     into an internal buffer.
//   - A send completes without a matching receive (t3d_pvm.psend_precv):
//     psend returns once its data is in the receiver's memory. The
//     receiver's library pulls every message that has arrived into its
//     receive queue whenever it is called (libpvm's message routing loop
//     in the public PVM 3.3 design: every arrived message goes to the
//     receive list, which receives then search), so a message whose receive
//     is not yet posted is copied out of its slot into the queue and copied
//     again when it is received; one whose receive is waiting is copied
//     straight into the user's buffer.
//   - Data above PVM_DATA_MAX (Params.DataMaxBytes, 4,096 bytes by default,
//     t3d_pvm.data_max_bytes) "is divided into parts sent as separate
//     messages until all is delivered": each part takes its own slot and
//     pays the per-message software of both sides (footnote 7 of the paper
//     points to this variable for the kink in PVM's curves). Before its
//     receive only the first part is queued: the later parts wait in the
//     sender's ring (the sender waiting for free slots) until a receive
//     claims the message.
//   - The group library (group.go): pvm_bcast as pvm_mcast does it on an
//     MPP (the root sends to every other member in turn), pvm_reduce's
//     "very simple" algorithm (the root collects every member's
//     contribution, t3d_pvm.reduce_algorithm; the other members do not
//     block) and pvm_barrier counted at one place (the group server's role,
//     taken by instance 0 on a machine with no daemon).
//
// Assumed beyond these (the paper could not see CRI's source: "we have not
// been able to explain the direction change in the spike without access to
// the PVM source code for the T3D", section 5): the message slots are a
// ring per sending PE in each receiver's memory (Params.Slots), one writer
// each as ACLMPL's request blocks (section 4.1) and MPICH's lock-free slots
// are, so no lock or atomic is needed; the receiver frees slots by writing
// a count back into the sender's memory; and the per-message software of
// the library, Params.PartCycles, is fitted by simrun calibrate from
// calibration/t3d-pvm.yaml (Table 2's one-to-all value for PVM).
//
// Every word the receiver polls is written by a remote put, which does not
// update its data cache (the T3D has no coherence), so polls and header
// reads load uncached, and a slot's data lines are invalidated before the
// copy out reads them through the cache.
//
// Layer: a stack: imports stacks, machines, sim, sim/mem and
// internal/strictyaml; never a concrete machine (it requires verbs), a
// workload or the registry.
package pvm

import (
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Name is the stack's name in scenarios.
const Name = "pvm"

// user names PVM in missing-verb errors.
const user = "PVM 3.3 (stack pvm)"

// Machine is what PVM needs of a machine: per-PE memory and CPU, and
// one-sided remote writes with a way to wait for their delivery.
type Machine = machines.RemoteWrite

// Params are the library's options (stack.params).
type Params struct {
	// DataMaxBytes is PVM_DATA_MAX: the largest part of a message sent as
	// one message; larger data is divided into parts of this size, each
	// sent as a separate message. 4,096 bytes, CRI's published default
	// (hardware.yaml t3d_pvm.data_max_bytes: the PVM_DATA_MAX environment
	// variable, 512 64-bit words).
	DataMaxBytes int `yaml:"data_max_bytes"`
	// Slots is the number of message slots in each receiver's ring for one
	// sender: how many parts a sender may have in a receiver's memory
	// before the receiver frees one. Assumed (4): CRI's buffer sizes are
	// not published; the PVM documentation says only that incoming
	// messages are queued by the receiver.
	Slots int `yaml:"slots"`
	// PartCycles is the library's own software per message part on each
	// side: on the send side the call's entry, the part's header and the
	// routing decision; on the receive side the header's decoding, the
	// match against the receive queue and the bookkeeping of the slot.
	// CRI's PVM does not publish it and the paper gives no per-message
	// time for PVM; calibrated by simrun calibrate from
	// calibration/t3d-pvm.yaml (Table 2's one-to-all value for PVM,
	// 57.02 MB/s at 1 KB on 32 PEs): 1026 cycles, 6.8 us at 150 MHz.
	PartCycles float64 `yaml:"part_cycles"`
	// ScanCycles is the loop overhead per ring examined when the library
	// pulls arrived messages into its queue, and per queue entry examined
	// by a match (the loads themselves are charged by the machine).
	// Assumed: a compare and a branch or two, as ACLMPL's scan.
	ScanCycles float64 `yaml:"scan_cycles"`
	// InvalidateReceive makes the receiver invalidate the data-cache lines
	// of a slot before it copies the data out (a remote put does not
	// update its cache: hardware.yaml t3d.hw_cache_coherence). Set false
	// to watch stale lines show up as corrupted deliveries.
	InvalidateReceive bool `yaml:"invalidate_receive"`
}

// DefaultParams returns the library's default options.
func DefaultParams() Params {
	return Params{DataMaxBytes: 4096, Slots: 4, PartCycles: 1026, ScanCycles: 4, InvalidateReceive: true}
}

// ParseParams decodes stack params over the defaults.
func ParseParams(file, field string, node *yaml.Node) (Params, error) {
	p := DefaultParams()
	if err := strictyaml.DecodeAt(file, field, node, &p); err != nil {
		return Params{}, err
	}
	switch {
	case p.DataMaxBytes < 8 || p.DataMaxBytes > 1<<24:
		return Params{}, fmt.Errorf("%s: %s.data_max_bytes must be in [8, 16777216], got %d", file, field, p.DataMaxBytes)
	case p.Slots < 1 || p.Slots > 1024:
		return Params{}, fmt.Errorf("%s: %s.slots must be in [1, 1024], got %d", file, field, p.Slots)
	case !(p.PartCycles >= 0) || p.PartCycles > 1e7:
		return Params{}, fmt.Errorf("%s: %s.part_cycles must be in [0, 1e7], got %g", file, field, p.PartCycles)
	case !(p.ScanCycles >= 0) || p.ScanCycles > 1e6:
		return Params{}, fmt.Errorf("%s: %s.scan_cycles must be in [0, 1e6], got %g", file, field, p.ScanCycles)
	}
	return p, nil
}

// Lib is PVM on a partition: one task per processor.
type Lib struct {
	m      Machine
	params Params
	// ordered: the machine lands one PE's writes to another in issue
	// order (machines.OrderedWrites), so a part's header may follow its
	// data without a quiet between them.
	ordered bool
	tasks   []*Task
}

// New sets PVM up on m: every task's rings of message slots, one per
// sending task, and its array of freed-slot counts, in memory other tasks
// write remotely.
func New(m machines.Machine, params Params) (*Lib, error) {
	mm, err := machines.Need[Machine](m, user, machines.VerbRemoteWrite)
	if err != nil {
		return nil, err
	}
	_, ordered := m.(machines.OrderedWrites)
	l := &Lib{m: mm, params: params, ordered: ordered}
	n := m.Procs()
	l.tasks = make([]*Task, n)
	for i := range l.tasks {
		x := &Task{lib: l, cpu: machines.ProcessorOf(mm, i), rank: i, size: n}
		if err := x.setUp(); err != nil {
			return nil, fmt.Errorf("pvm: task %d: %w", i, err)
		}
		l.tasks[i] = x
	}
	return l, nil
}

// Task returns the library handle of task i, which implements stacks.Comm.
func (l *Lib) Task(i int) *Task { return l.tasks[i] }

// Size is the number of tasks.
func (l *Lib) Size() int { return len(l.tasks) }

// stride is a slot's size: its header and DataMaxBytes of data, rounded up
// to 64 bytes.
func (l *Lib) stride() int { return (hdrBytes + l.params.DataMaxBytes + 63) &^ 63 }

// Task is one processor's PVM task: its rings and its library state. Its
// methods are called from that task's process.
type Task struct {
	lib  *Lib
	cpu  machines.Processor
	rank int
	size int

	rings mem.Addr // ring s: Slots slots written by task s, at rings + s*Slots*stride
	freed mem.Addr // word d: how many of this task's parts task d has freed (d writes it)
	stage mem.Addr // where outgoing headers and counts are built

	sent []int // parts this task has put into each task's ring
	next []int // parts this task has taken out of each task's ring
	// inflight[s] is the message from task s whose later parts are still
	// to come (its first part has been taken), or nil.
	inflight  []*message
	queue     []*message // the receive queue: arrived, not yet received, in arrival order
	posted    []*recvReq // receives waiting for a message, in post order
	free      []mem.Region
	seenFreed []uint64 // each task's freed count as last loaded
	// watch is what a wait watches: entry s the head flag of ring s
	// (head), entry size+d the freed count task d writes.
	watch    []mem.Addr
	scanFrom int // ring where the next sweep starts (round robin)
	round    sweepRound
	part     partRead // takePart's read of a header
	scratch  *mem.Region

	stats Stats
}

// Stats count a task's traffic.
type Stats struct {
	Parts     int // parts sent
	Queued    int // messages that arrived before their receive (copied into the queue)
	FullWaits int // times a send found a receiver's ring full
}

// Stats returns the task's counters.
func (x *Task) Stats() Stats { return x.stats }

// setUp allocates the task's rings (one per sender, other tasks write
// them), its freed-count array (written by receivers) and its staging
// block.
func (x *Task) setUp() error {
	l := x.lib
	ring := l.params.Slots * l.stride()
	r, err := machines.MapRemote(l.m, nil, x.rank, x.rank, "pvm.rings", x.size*ring)
	if err != nil {
		return fmt.Errorf("rings of %d slots of %d bytes for %d tasks: %w", l.params.Slots, l.stride(), x.size, err)
	}
	x.rings = r.Addr
	f, err := machines.MapRemote(l.m, nil, x.rank, x.rank, "pvm.freed", x.size*8)
	if err != nil {
		return err
	}
	x.freed = f.Addr
	s, err := l.m.Alloc(x.rank, "pvm.stage", 64)
	if err != nil {
		return err
	}
	x.stage = s.Addr
	x.sent = make([]int, x.size)
	x.next = make([]int, x.size)
	x.inflight = make([]*message, x.size)
	x.seenFreed = make([]uint64, x.size)
	x.watch = make([]mem.Addr, 2*x.size)
	for s := 0; s < x.size; s++ {
		x.watch[s] = x.rings + mem.Addr(s*ring) + flagOff // slot 0 of ring s
		x.watch[x.size+s] = x.freed + mem.Addr(8*s)
	}
	return nil
}

// Rank is the task's instance number (its PE).
func (x *Task) Rank() int { return x.rank }

// Size is the number of tasks.
func (x *Task) Size() int { return x.size }

// CPU is the task's processor.
func (x *Task) CPU() *mem.CPU { return x.lib.m.CPU(x.rank) }

// Buffer allocates n bytes of the task's memory for user data.
func (x *Task) Buffer(n int) (mem.Region, error) {
	return x.lib.m.Alloc(x.rank, "user", n)
}

func (x *Task) checkPeer(op string, pe int) error {
	if pe < 0 || pe >= x.size {
		return fmt.Errorf("pvm: task %d: %s: task %d out of range [0, %d)", x.rank, op, pe, x.size)
	}
	return nil
}

var _ stacks.Comm = (*Task)(nil)

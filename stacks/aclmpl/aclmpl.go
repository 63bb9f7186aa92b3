// Package aclmpl is the Advanced Computing Lab Message Passing Library on a
// machine with one-sided remote writes (papers/aclmpl-t3d.txt, section 4:
// the T3D's SHMEM puts; elsewhere the machine's machines.RemoteWrite, the
// SCI adapter's posted writes with MemBarrier, LAPI_Put with LAPI_Fence):
//
//   - the synchronous protocol of Figure 1 (sync.go): the receiver puts a
//     16-byte request block (buffer address, length, flag) into the
//     sender's array of request blocks indexed by receiving PE; the sender
//     spin-waits on the flag, puts the data straight into the receive
//     buffer, waits for it to be delivered, and puts an 8-byte completion
//     block (size, DONE); the receiver spins on DONE. Calls: Send, Recv,
//     SendRecv (send-and-receive).
//   - the asynchronous protocol of Figure 2 (async.go): the sender allocates
//     a buffer in the receiver's fixed pool by reading the receiver's
//     fetch-and-increment register (the T3D's; elsewhere one built from a
//     word and the machine's remote fetch-and-increment, register.go),
//     puts the data and then a DONE flag; the
//     receiver looks in its sent-but-not-yet-received list, then scans the
//     pool, copies the data out and marks the slot RECEIVED; when the last
//     slot is used the pool has overflowed: its messages are copied out to
//     the list and the register is reset, letting blocked senders resume.
//     Calls: AsyncSend (Isend), AsyncRecv (Irecv; its Test is the receive
//     that returns at once), BlockingAsyncRecv (Irecv + Wait).
//   - the global operations of 4.3 (global.go), built on the synchronous
//     primitives: tree broadcast, and a reduce with a user-supplied
//     operator that runs the tree below binary_swap_from_elems elements and
//     the binary swap with its final gather from there.
//
// The two protocols share nothing ("with no overlap", section 4): a message
// sent with Send must be received with Recv, one sent with Isend with Irecv.
// The synchronous request block carries no tag, so Send and Recv match by
// PE only (tags are ignored) and Recv needs a definite source.
//
// Every flag a PE spins on is written by a remote put, which does not update
// its data cache (the T3D has no coherence), so spins load uncached.
// Memory other PEs write remotely (the request and completion arrays, the
// pool, receive buffers) is mapped for them where the machine must map it
// (machines.MapRemote), at set-up.
//
// The stack charges itself CPU time only for its own bookkeeping, through
// the constants below; every other cost comes from the machine.
//
// Layer: a stack: imports stacks, machines, sim, sim/mem and
// internal/strictyaml; never a concrete machine (it requires verbs), a
// workload or the registry.
package aclmpl

import (
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
	"gopkg.in/yaml.v3"
)

// Name is the stack's name in scenarios.
const Name = "aclmpl"

// Software costs of the library itself, in CPU cycles.
const (
	// callCycles is a library call's entry, argument checks and the
	// address arithmetic of its blocks: a few dozen Alpha instructions.
	// Assumed; the paper gives no instruction count, only that "the T3D is
	// extremely instruction cache sensitive" (section 5).
	callCycles = 60
	// scanCycles is the loop overhead per pool slot or list entry examined
	// by the asynchronous receive (the loads themselves are charged by the
	// machine). Assumed: a compare and a branch or two.
	scanCycles = 4
	// slotCycles is the default slot_cycles: calibrated by
	// calibration/t3d-mpi.yaml (aclmpl.slot_cycles) to the asynchronous
	// column of Table 2's one-to-all row (60.61 MB/s), about 3.1 us a
	// buffer on each side at 150 MHz.
	slotCycles = 486
)

// Machine is what ACLMPL needs of a machine: per-PE memory and CPU, and
// one-sided remote writes with a way to wait for their delivery. The
// asynchronous protocol needs a fetch-and-increment register per PE in
// addition: the machine's (machines.FetchIncRegister), or one built from a
// word with a remote fetch-and-increment (machines.RemoteFetchInc; see
// register.go).
type Machine = machines.RemoteWrite

// Params are the library's options (stack.params).
type Params struct {
	// PoolSlots is the number of buffers in each PE's asynchronous pool.
	// The paper says only "a fixed sized pool of buffers" (4.2); 64 assumed.
	PoolSlots int `yaml:"pool_slots"`
	// SlotBytes is the data capacity of one pool buffer; longer messages
	// travel as several buffers. Not given in the paper; 8192 assumed, one
	// page of the Alpha 21064 (the Alpha architecture's 8 KB page). Not a
	// neutral choice: where asynchronous ACLMPL crosses MPI in Figures 5
	// and 6 moves with it (docs/t3d-mpi.md, "The asynchronous pool").
	SlotBytes int `yaml:"slot_bytes"`
	// RetryUs is a blocked asynchronous sender's first back-off before it
	// reads the receiver's register again. Not given in the paper; assumed.
	RetryUs float64 `yaml:"retry_us"`
	// MaxBackoffUs caps the back-off, which doubles after every failed
	// attempt. The paper says only that a sender whose receiver's pool is
	// out of bounds "is blocked" until the receiver resets its register
	// (4.2); 128 us (64 doublings' worth of retry_us) assumed, not tuned.
	MaxBackoffUs float64 `yaml:"max_backoff_us"`
	// InvalidateReceive makes a receive invalidate the data-cache lines of
	// its buffer once the data is there, and an asynchronous receive those
	// of a pool buffer before it copies the data out (one line at a time, or the whole
	// cache when that is cheaper, Cray's shmem_udcflush_line /
	// shmem_udcflush). A remote put does not update the receiver's cache
	// (hardware.yaml t3d.hw_cache_coherence: "no hardware support for cache
	// coherency"), so without it a program that had read its buffer before
	// reads stale lines. The paper says only that "cache coherency ... will
	// greatly affect these timings" (section 5). Set false to watch the
	// stale lines show up as corrupted deliveries.
	InvalidateReceive bool `yaml:"invalidate_receive"`
	// BinarySwapFromElems is the array length, in elements, from which
	// Reduce runs the binary-swap algorithm instead of the tree: 1024,
	// where section 4.3 found it faster on the T3D ("On the T3D we have
	// found that N >= 1024 is sufficient for binary swap reduction to
	// outperform the simple tree based algorithm"). 0 keeps the tree at
	// every length.
	BinarySwapFromElems int `yaml:"binary_swap_from_elems"`
	// SlotCycles is the asynchronous protocol's software per pool buffer,
	// on each side: the sender's after it has claimed a buffer (the
	// index arithmetic, the header it builds, the bookkeeping of a
	// message sent as pieces), the receiver's as it takes a piece out
	// of a buffer (matching the header against the request, marking the
	// buffer RECEIVED, advancing past received buffers). Section 4.2
	// names the work ("buffer management, race conditions, and
	// synchronization issues") but gives no instruction count. Default
	// slotCycles, calibrated by calibration/t3d-mpi.yaml (a free
	// parameter there, with its bounds); 0 charges only callCycles per
	// call and scanCycles per buffer examined.
	SlotCycles float64 `yaml:"slot_cycles"`
}

// DefaultParams returns the library's default options.
func DefaultParams() Params {
	return Params{PoolSlots: 64, SlotBytes: 8192, RetryUs: 2, MaxBackoffUs: 128, InvalidateReceive: true, BinarySwapFromElems: 1024, SlotCycles: slotCycles}
}

// ParseParams decodes stack params over the defaults.
func ParseParams(file, field string, node *yaml.Node) (Params, error) {
	p := DefaultParams()
	if err := strictyaml.DecodeAt(file, field, node, &p); err != nil {
		return Params{}, err
	}
	switch {
	case p.PoolSlots < 1:
		return Params{}, fmt.Errorf("%s: %s.pool_slots must be at least 1, got %d", file, field, p.PoolSlots)
	case p.SlotBytes < 8:
		return Params{}, fmt.Errorf("%s: %s.slot_bytes must be at least 8, got %d", file, field, p.SlotBytes)
	case !(p.RetryUs > 0) || p.RetryUs > 1e6:
		return Params{}, fmt.Errorf("%s: %s.retry_us must be positive and at most 1e6, got %g", file, field, p.RetryUs)
	case !(p.MaxBackoffUs >= p.RetryUs) || p.MaxBackoffUs > 1e9:
		return Params{}, fmt.Errorf("%s: %s.max_backoff_us must be at least retry_us (%g) and at most 1e9, got %g", file, field, p.RetryUs, p.MaxBackoffUs)
	case !(p.SlotCycles >= 0 && p.SlotCycles <= 1e9):
		return Params{}, fmt.Errorf("%s: %s.slot_cycles must be between 0 and 1e9 cycles, got %g", file, field, p.SlotCycles)
	case p.BinarySwapFromElems < 0 || p.BinarySwapFromElems > 1<<40:
		return Params{}, fmt.Errorf("%s: %s.binary_swap_from_elems must be 0 (never) or a positive number of elements, got %d", file, field, p.BinarySwapFromElems)
	}
	return p, nil
}

// Lib is ACLMPL on a partition: one PE handle per processor.
type Lib struct {
	m      Machine
	reg    register // nil without a fetch-and-increment: no async
	params Params
	pes    []*PE
	// words is storeWords' run of stores, one for every PE: its fill
	// takes what it needs before its first store.
	words wordWriter
}

// New sets ACLMPL up on m: each PE's request and completion arrays, in
// memory other PEs write remotely. A PE's asynchronous buffer pool (if the
// machine has a fetch-and-increment to build its register from) is
// allocated when the asynchronous protocol first uses it, so that
// synchronous runs do not hold it.
func New(m machines.Machine, params Params) (*Lib, error) {
	mm, err := machines.Need[Machine](m, "aclmpl", machines.VerbRemoteWrite)
	if err != nil {
		return nil, err
	}
	l := &Lib{m: mm, params: params, reg: newRegister(m)}
	// The PEs in one array and their pointers in one slice, each allocated
	// once at its final size: a million-PE run builds a million PEs.
	pes := make([]PE, m.Procs())
	l.pes = make([]*PE, len(pes))
	for i := range pes {
		if err := l.newPE(&pes[i], i); err != nil {
			return nil, fmt.Errorf("aclmpl: PE %d: %w", i, err)
		}
		l.pes[i] = &pes[i]
	}
	return l, nil
}

// PE returns the library handle of PE i, which implements stacks.Comm.
func (l *Lib) PE(i int) *PE { return l.pes[i] }

// Size is the number of PEs.
func (l *Lib) Size() int { return len(l.pes) }

// PE is one processor's view of the library: its blocks in its own memory
// and its protocol state. Its methods are called from that PE's process.
type PE struct {
	lib  *Lib
	cpu  machines.Processor
	rank int
	size int

	// Addresses in the PE's memory (only the address: a million PEs).
	reqs  mem.Addr // request blocks written by receivers, indexed by receiving PE
	comps mem.Addr // completion blocks written by senders, indexed by sending PE
	stage mem.Addr // where outgoing request blocks and pool headers are built

	async   *asyncState // nil until the asynchronous protocol is first used
	scratch *mem.Region // receive space of the reductions, nil until one needs it
	spin    *wordSpin   // its spins on a word, nil until the first
}

// newPE sets up x as PE i: its request and completion arrays, which other
// PEs write remotely, and its staging block, which only it uses.
func (l *Lib) newPE(x *PE, i int) error {
	n := l.m.Procs()
	*x = PE{lib: l, cpu: machines.ProcessorOf(l.m, i), rank: i, size: n}
	for _, b := range []struct {
		at     *mem.Addr
		name   string
		n      int
		remote bool
	}{
		{&x.reqs, "aclmpl.requests", n * reqBytes, true},
		{&x.comps, "aclmpl.completions", n * compBytes, true},
		{&x.stage, "aclmpl.stage", 64, false},
	} {
		var r mem.Region
		var err error
		if b.remote {
			r, err = machines.MapRemote(l.m, nil, i, i, b.name, b.n)
		} else {
			r, err = l.m.Alloc(i, b.name, b.n)
		}
		if err != nil {
			return err
		}
		*b.at = r.Addr
	}
	return nil
}

// Rank is the PE number.
func (x *PE) Rank() int { return x.rank }

// Size is the number of PEs.
func (x *PE) Size() int { return x.size }

// CPU is the PE's processor (for workloads that fill and check buffers as
// the PE's program sees them).
func (x *PE) CPU() *mem.CPU { return x.lib.m.CPU(x.rank) }

// Buffer allocates n bytes of the PE's memory for user data, where other
// PEs' puts reach it (a synchronous send puts straight into the receive
// buffer).
func (x *PE) Buffer(n int) (mem.Region, error) {
	return machines.MapRemote(x.lib.m, nil, x.rank, x.rank, "user", n)
}

func (x *PE) checkPeer(op string, pe int) error {
	if pe < 0 || pe >= x.size {
		return fmt.Errorf("aclmpl: PE %d: %s: PE %d out of range [0, %d)", x.rank, op, pe, x.size)
	}
	return nil
}

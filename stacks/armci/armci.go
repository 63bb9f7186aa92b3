// Package armci is ARMCI, the Aggregate Remote Memory Copy Interface of
// papers/armci-sp.txt: put, get and accumulate of contiguous, vector
// (generalized I/O vector, Figure 1) and strided (Figure 2) data; fences;
// read-modify-write; collective allocation. Its ranks implement
// stacks.RemoteCopy. It has three ports (2.4), chosen by the verbs a
// machine offers (Open): the SP port on LAPI (this file and sp.go), the
// shared-memory port on shared segments (shm.go) and the SHMEM port on
// remote writes and reads (shmem.go).
//
// The SP port is the paper's (section 2.4, Figure 3), on LAPI
// (machines/lapi, implemented by machines/sp): sections of few or large
// blocks move by one nonblocking LAPI_Get or LAPI_Put per block; the
// others by one active message whose completion handler, at the remote
// node, packs the section into a contiguous buffer and LAPI_Puts it back
// in full packets (get), or unpacks what the message carried (put);
// accumulate always runs in the active-message handler at the owner,
// under a pthread mutex ("owner computes"). The thresholds are Params.
// Everything takes its time from the machine: LAPI calls, the dispatcher
// and its threads, copies, packets; the stack charges only its accumulate
// loop (accCyclesPerElem) and its descriptor handling
// (descCyclesPerBlock).
//
// Ordering in the SP port (2.3): operations to one rank complete in issue
// order. LAPI orders nothing between messages (a multi-packet put may land
// after a later one-packet put; with switch_jitter_us any message may
// overtake another), and an active message's work is done later, in the
// completion thread; so an operation to a rank with a put or accumulate
// still outstanding there first waits on that rank's LAPI completion
// counter (the port's ORDER). Operations to different ranks are not
// ordered and do not wait for one another.
//
// Layer: a stack: imports stacks, machines, machines/lapi, sim, sim/mem and
// internal/strictyaml; never a concrete machine (it requires verbs), a
// workload or the registry.
package armci

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/lapi"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Name is the stack's name in scenarios.
const Name = "armci"

// Params are the SP port's protocol thresholds (stack.params).
type Params struct {
	// LAPIMaxBlocks: a transfer of at most this many blocks uses one LAPI
	// operation per block ("for small array sections ARMCI_GetS uses
	// LAPI_Get before switching to the Active Message (AM) protocol to
	// optimize latency", 2.5). Assumed: 2.
	LAPIMaxBlocks int `yaml:"lapi_max_blocks"`
	// LAPIMinBlockBytes: blocks of at least this size use one LAPI
	// operation each ("very large array sections where ARMCI_GetS switches
	// again from the Active Message to LAPI_Get protocol ... when the cost
	// of the two extra memory copies makes the AM protocol less
	// competitive", 2.5). Assumed: 1024 bytes, a block that fills a packet
	// by itself (the AM protocol's gain is filling packets, 2.5), where a
	// get's data outlasts its 30 us of software.
	LAPIMinBlockBytes int `yaml:"lapi_min_block_bytes"`
	// BufferBytes is the size of the buffers the active-message protocol
	// packs into; larger transfers are split. Assumed: 256 KB.
	BufferBytes int `yaml:"buffer_bytes"`
	// ShortPutBytes: a put whose descriptor and data fit in this many
	// bytes travels in the active message's user header and is stored by
	// the header handler itself, without the completion thread ("the
	// additional level of latency optimization for short active
	// messages", 2.4). Assumed: 900 bytes, a user header that fits one
	// 1024-byte packet with LAPI's own header. 0 disables it.
	ShortPutBytes int `yaml:"short_put_bytes"`
	// Native makes every get and put one nonblocking LAPI operation per
	// block followed by one wait: the paper's baseline ("multiple
	// LAPI_Get operations that transferred contiguous blocks of data ...
	// issue requests for all columns in the section and then wait for all
	// of them to complete", 2.5), the same code as ARMCI's small-section
	// path. Accumulate and Rmw are unchanged.
	Native bool `yaml:"native"`
	// Barrier is how the shared-memory port's Barrier synchronizes:
	// "shared-memory", a sense-reversing counter barrier in a shared
	// segment; or zero-byte messages of MPICH (ch_lfshmem, its default
	// configuration) opened on the same machine, as the paper's ARMCI
	// remap did ("these synchronizations were implemented naively in
	// terms of message-passing", 3.2): "message-passing", every rank
	// sends to rank 0, which answers each once all have arrived (the
	// naive one), or "recursive-doubling", pairwise zero-byte exchanges
	// with rank xor 1, 2, 4, ... (the pattern of MPICH 1's MPI_Barrier,
	// ranks above the largest power of two first folded into it; assumed
	// from MPICH's source, not in the papers). Default shared-memory. The
	// other ports have their own barrier and accept only the default.
	Barrier string `yaml:"barrier"`
	// Lock is the shared-memory port's mutual exclusion for accumulate and
	// read-modify-write: "tas", the NEC test-and-set lock, or "sysv", one
	// System V semaphore per rank ("Mutual exclusion is implemented using
	// vendor-specific locks ..., System V semaphores (Unix)", 2.4).
	// Default tas. The other ports accept only the default.
	Lock string `yaml:"lock"`
}

// Barrier and Lock values.
const (
	BarrierShared  = "shared-memory"
	BarrierMessage = "message-passing"
	BarrierRecDbl  = "recursive-doubling"
	LockTAS        = "tas"
	LockSysV       = "sysv"
)

// DefaultParams are the thresholds above.
func DefaultParams() Params {
	return Params{LAPIMaxBlocks: 2, LAPIMinBlockBytes: 1024, BufferBytes: 256 << 10, ShortPutBytes: 900,
		Barrier: BarrierShared, Lock: LockTAS}
}

// Validate checks the thresholds.
func (p Params) Validate() error {
	switch {
	case p.LAPIMaxBlocks < 0:
		return fmt.Errorf("lapi_max_blocks: must not be negative, got %d", p.LAPIMaxBlocks)
	case p.LAPIMinBlockBytes < 1:
		return fmt.Errorf("lapi_min_block_bytes: must be positive, got %d", p.LAPIMinBlockBytes)
	case p.ShortPutBytes < 0 || p.ShortPutBytes > 1024:
		return fmt.Errorf("short_put_bytes: %d is outside [0, 1024]", p.ShortPutBytes)
	case p.BufferBytes < 1024 || p.BufferBytes > 64<<20:
		return fmt.Errorf("buffer_bytes: %d is outside [1024, 64 MB]", p.BufferBytes)
	case p.Barrier != BarrierShared && p.Barrier != BarrierMessage && p.Barrier != BarrierRecDbl:
		return fmt.Errorf("barrier: %q is not %q, %q or %q", p.Barrier, BarrierShared, BarrierMessage, BarrierRecDbl)
	case p.Lock != LockTAS && p.Lock != LockSysV:
		return fmt.Errorf("lock: %q is neither %q nor %q", p.Lock, LockTAS, LockSysV)
	}
	return nil
}

// ParseParams decodes a scenario's stack params over the defaults.
func ParseParams(file, field string, node *yaml.Node) (Params, error) {
	p := DefaultParams()
	if err := strictyaml.DecodeAt(file, field, node, &p); err != nil {
		return Params{}, err
	}
	if err := p.Validate(); err != nil {
		return Params{}, strictyaml.Errorf(file, node, field, "%v", err)
	}
	return p, nil
}

// accCyclesPerElem is the accumulate loop's cost per element (two loads,
// a multiply-add, a store): assumed 4 cycles of the Power2 Super (two
// quadword load/store units, a fused multiply-add, 2.2).
const accCyclesPerElem = 4

// descCyclesPerBlock is building or walking a descriptor, per block
// (address arithmetic and a loop step). Assumed: 10 cycles.
const descCyclesPerBlock = 10

// LAPI is what the SP port needs of a machine: the LAPI verbs
// (machines/lapi), which machines/sp implements.
type LAPI = lapi.ActiveMessages

// user names ARMCI in missing-verb errors.
const user = "ARMCI (stack armci)"

// verbLAPI is the SP port's verb, for listings.
var verbLAPI = machines.Cap[LAPI]("active-messages", "active messages with header and completion handlers, counted put and get, and mutexes, as LAPI offers them (machines/lapi.ActiveMessages)")

// port tags a verb's listing with the port that uses it.
func port(c machines.Capability, what string) machines.Capability {
	c.What += ", " + what
	return c
}

// Needs are the verbs ARMCI's ports use, each tagged with its port. Open
// takes the first port whose verbs the machine has: the SP port (LAPI);
// the shared-memory port when every process is on one node; the SHMEM
// port, whose lock is the remote swap or, without it, a ticket lock on
// the remote fetch-and-increment, and whose barrier is the machine's or,
// without one, built from remote writes.
func Needs() []machines.Capability {
	return []machines.Capability{
		port(verbLAPI, "for the SP port (Figure 3), chosen first"),
		port(machines.VerbShared, "for the shared-memory port, when every process is on one node"),
		port(machines.VerbSemaphores, "for the shared-memory port with lock: sysv"),
		port(machines.VerbRemoteWrite, "for the SHMEM port"),
		port(machines.VerbRemoteRead, "for the SHMEM port"),
		port(machines.VerbSwap, "for the SHMEM port's lock"),
		port(machines.VerbRemoteFetchInc, "for the SHMEM port's ticket lock where there is no swap"),
		port(machines.VerbBarrier, "for the SHMEM port's barrier, else one built from remote writes"),
	}
}

// MessagePassing opens a message-passing stack on machine m, one rank per
// processor, whose ranks offer stacks.Comm: the shared-memory port's
// message-passing barriers (Params.Barrier) send its zero-byte messages.
// The registry gives MPICH's, in its default configuration (ch_lfshmem),
// as the paper's remap used; ARMCI never imports a concrete stack.
type MessagePassing func(m machines.Machine) (*stacks.World, error)

// Opener is Open with mp, as a registry's open function.
func Opener(mp MessagePassing) func(m machines.Machine, par Params) (*stacks.World, error) {
	return func(m machines.Machine, par Params) (*stacks.World, error) { return Open(m, par, mp) }
}

// Open returns ARMCI on m, one rank per processor, on the first port
// whose verbs m has: the SP port on LAPI (so the SP keeps the paper's
// port); the shared-memory port when every process is on one node of
// shared segments; the SHMEM port on remote writes and reads with a swap
// or a remote fetch-and-increment. Another machine gives a
// *machines.MissingCapability naming what each port lacks there. mp opens
// the message-passing stack of the shared-memory port's message-passing
// barriers (nil: those barriers are refused).
func Open(m machines.Machine, par Params, mp MessagePassing) (*stacks.World, error) {
	if err := par.Validate(); err != nil {
		return nil, err
	}
	out := &stacks.World{Stack: Name, Title: "ARMCI", Machine: m}
	sh, shared := m.(machines.SharedSegments)
	one := shared && oneNode(sh)
	v, remote := shmemVerbsOf(m)
	_, lp := m.(LAPI)
	var err error
	switch {
	case lp:
		if err = ownParams(par, "SP"); err == nil {
			err = openLAPI(m.(LAPI), par, out)
		}
	case one:
		err = openShared(sh, par, mp, out)
	case remote:
		if err = ownParams(par, "SHMEM"); err == nil {
			err = openSHMEM(v, par, out)
		}
	default:
		return nil, missingPorts(m)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ownParams refuses the shared-memory port's params on another port.
func ownParams(par Params, port string) error {
	if par.Barrier != BarrierShared || par.Lock != LockTAS {
		return fmt.Errorf("armci: barrier %q and lock %q: the %s port has its own barrier and locks; only the shared-memory port takes these params", par.Barrier, par.Lock, port)
	}
	return nil
}

// oneNode reports whether every process of m runs on one node.
func oneNode(m machines.SharedSegments) bool {
	for pe := 1; pe < m.Procs(); pe++ {
		if m.NodeOf(pe) != m.NodeOf(0) {
			return false
		}
	}
	return true
}

// missingPorts is the error of a machine none of the ports fits: what
// each port lacks there, by the verbs' listing names.
func missingPorts(m machines.Machine) error {
	shm := machines.VerbShared.Name
	if s, ok := m.(machines.SharedSegments); ok {
		nodes := map[int]bool{}
		for pe := 0; pe < s.Procs(); pe++ {
			nodes[s.NodeOf(pe)] = true
		}
		shm = fmt.Sprintf("%s with every process on one node (they are on %d nodes)", shm, len(nodes))
	}
	var lack []string
	for _, c := range []machines.Capability{machines.VerbRemoteWrite, machines.VerbRemoteRead} {
		if !c.Has(m) {
			lack = append(lack, c.Name)
		}
	}
	if !machines.VerbSwap.Has(m) && !machines.VerbRemoteFetchInc.Has(m) {
		lack = append(lack, machines.VerbSwap.Name+" or "+machines.VerbRemoteFetchInc.Name)
	}
	return &machines.MissingCapability{Machine: m.Name(), User: user, Capability: fmt.Sprintf(
		"the verbs of one of its ports: the SP port's %s; the shared-memory port's %s; the SHMEM port's %s",
		verbLAPI.Name, shm, strings.Join(lack, ", "))}
}

// openLAPI opens the SP port on l.
func openLAPI(l LAPI, par Params, out *stacks.World) error {
	var err error
	w := &world{m: l, par: par}
	n := l.Procs()
	for i := 0; i < n; i++ {
		r := &Rank{w: w, id: i, cpu: machines.ProcessorOf(l, i),
			getC: l.NewCounter(i), reply: l.NewCounter(i), arrived: l.NewCounter(i), release: l.NewCounter(i),
			cmpl: make([]*lapi.Counter, n), issued: make([]int, n), inbuf: make([]mem.Region, n),
		}
		for j := range r.cmpl {
			r.cmpl[j] = l.NewCounter(i)
		}
		r.hh = r.header
		bufs := []*mem.Region{&r.pack, &r.out}
		for j := range r.inbuf {
			bufs = append(bufs, &r.inbuf[j])
		}
		for _, b := range bufs {
			if *b, err = l.Alloc(i, "armci buffer", par.BufferBytes+descMax); err != nil {
				return fmt.Errorf("armci: %w", err)
			}
		}
		w.ranks = append(w.ranks, r)
		out.Ranks = append(out.Ranks, r)
	}
	return nil
}

// descMax is room for a descriptor in front of the data in a buffer; a
// vector descriptor that does not fit splits the transfer.
const descMax = 64 << 10

// world is ARMCI's state shared by its ranks: what each learns of the
// others at start-up (counter and buffer addresses, the allocation table).
type world struct {
	m      LAPI
	par    Params
	ranks  []*Rank
	allocs [][]mem.Addr // Malloc's table, in call order
}

// Rank is one process's ARMCI.
type Rank struct {
	w   *world
	id  int
	cpu machines.Processor
	mu  lapi.Mutex // guards accumulate and read-modify-write at this rank
	hh  lapi.AMHeader

	getC     *lapi.Counter   // origin counter of per-block LAPI_Gets
	reply    *lapi.Counter   // target counter of replies to this rank (AM get data, Rmw values)
	rmwValue int64           // the value a Rmw reply brought
	cmpl     []*lapi.Counter // per target: completion counters of puts and accumulates
	// issued is per target the LAPI operations counted on cmpl and not
	// yet known complete there: a later operation to that target waits
	// for them (order).
	issued           []int
	arrived, release *lapi.Counter // barrier
	nallocs          int
	pack, out        mem.Region   // packing buffers: remote-side gets, outgoing puts
	inbuf            []mem.Region // per source: where its active messages' data lands
}

// Rank is the rank's number.
func (r *Rank) Rank() int { return r.id }

// Size is the number of ranks.
func (r *Rank) Size() int { return len(r.w.ranks) }

// CPU is the rank's processor.
func (r *Rank) CPU() *mem.CPU { return r.w.m.CPU(r.id) }

// Buffer allocates n bytes of private memory.
func (r *Rank) Buffer(n int) (mem.Region, error) { return r.w.m.Alloc(r.id, "user", n) }

// Malloc allocates n bytes on every rank and returns every rank's address
// (ARMCI_Malloc): each allocates, writes its address in the table every
// rank reads (the exchange ARMCI does by message passing), and all meet
// in a barrier.
func (r *Rank) Malloc(p *sim.Proc, n int) ([]mem.Addr, error) {
	reg, err := r.w.m.Alloc(r.id, "armci malloc", n)
	if err != nil {
		return nil, fmt.Errorf("armci: ARMCI_Malloc of %d bytes on rank %d: %w", n, r.id, err)
	}
	row := publish(&r.w.allocs, r.nallocs, r.id, len(r.w.ranks), reg.Addr)
	r.nallocs++
	r.Barrier(p)
	return row, nil
}

// Free is ARMCI_Free: a barrier (memory is not reused in the model).
func (r *Rank) Free(p *sim.Proc, addrs []mem.Addr) error {
	if len(addrs) != len(r.w.ranks) {
		return fmt.Errorf("armci: ARMCI_Free of %d addresses, want %d", len(addrs), len(r.w.ranks))
	}
	r.AllFence(p)
	r.Barrier(p)
	return nil
}

// Barrier: every rank sends an active message to rank 0, which answers
// each once all have arrived.
func (r *Rank) Barrier(p *sim.Proc) {
	m, n := r.w.m, len(r.w.ranks)
	if n == 1 {
		return
	}
	hdr := []byte{opBarrier}
	if r.id != 0 {
		m.Amsend(p, r.id, 0, r.w.ranks[0].hh, hdr, 0, 0, r.w.ranks[0].arrived, nil, nil)
		m.Waitcntr(p, r.id, r.release, 1)
		return
	}
	m.Waitcntr(p, 0, r.arrived, n-1)
	for i := 1; i < n; i++ {
		m.Amsend(p, 0, i, r.w.ranks[i].hh, hdr, 0, 0, r.w.ranks[i].release, nil, nil)
	}
}

// Fence waits until every put and accumulate to proc is complete there
// (ARMCI_Fence).
func (r *Rank) Fence(p *sim.Proc, proc int) {
	if r.issued[proc] > 0 {
		r.w.m.Waitcntr(p, r.id, r.cmpl[proc], r.issued[proc])
	}
	r.issued[proc] = 0
}

// AllFence is Fence for every rank (ARMCI_AllFence).
func (r *Rank) AllFence(p *sim.Proc) {
	for i := range r.issued {
		r.Fence(p, i)
	}
}

// order applies the ordering rule before an operation to proc:
// armci-sp.txt 2.3, "The ARMCI operations are ordered (complete in order
// they were issued) when referencing the same remote process(or) ...
// Usually, ordering can be accomplished with a lower overhead by using
// platform-specific means inside the communication library, rather than
// by a fence operation at the application level." LAPI does not order its
// messages, so the SP port orders them as ARMCI's LAPI port did (its
// ORDER, a FENCE_NODE of the one target): an operation to proc waits on
// proc's LAPI completion counter only while a put or accumulate to proc is
// still outstanding, that is only for the operation just before it to the
// same rank (the ones before that were complete when it was issued). The
// blocks of one operation go back to back (they are distinct bytes) and an
// operation to another rank waits for nothing, so a program that
// alternates targets overlaps one target's wait with the other's put: 10
// 8-byte puts alternating between two ranks and an AllFence take 471 us,
// 491 us with the application's Fence after each (before this rule, 408
// us, unordered). To one rank it costs what that Fence costs (582 us, 355
// us unordered): a LAPI_Put has no ARMCI code at the target that could
// hold a later operation back, so only its completion counter orders it.
// Gets and read-modify-writes return complete, so leave nothing
// outstanding. (Accumulates after accumulates commute, and
// ARMCI's LAPI port let them overlap; here they wait anyway: an active
// message's data lands in the target's one buffer for this origin, free
// again only once the previous one is served.)
func (r *Rank) order(p *sim.Proc, proc int) {
	if r.issued[proc] > 0 {
		r.Fence(p, proc)
	}
}

// useLAPI says whether blocks go one LAPI operation each (Figure 3).
func (r *Rank) useLAPI(segs []seg) bool {
	return r.w.par.Native || len(segs) <= r.w.par.LAPIMaxBlocks || total(segs)/len(segs) >= r.w.par.LAPIMinBlockBytes
}

func (r *Rank) check(proc int) error {
	if proc < 0 || proc >= len(r.w.ranks) {
		return fmt.Errorf("armci: rank %d: no rank %d (%d ranks)", r.id, proc, len(r.w.ranks))
	}
	return nil
}

// Active-message operations (the first byte of the user header).
const (
	opGet byte = iota + 1
	opPut
	opAcc
	opRmw
	opRmwReply
	opBarrier
	opPutShort // a short put carried in the user header
)

// uhdr layout: op, acc type, rmw op, 0, origin rank (4), address (8),
// scale (16), value (8), descriptor length (4).
const uhdrLen = 44

func makeUhdr(op byte, t stacks.AccType, rop stacks.RmwOp, origin int, a mem.Addr, scale complex128, v int64, desc int) []byte {
	b := make([]byte, uhdrLen)
	b[0], b[1], b[2] = op, byte(t), byte(rop)
	le := binary.LittleEndian
	le.PutUint32(b[4:], uint32(origin))
	le.PutUint64(b[8:], uint64(a))
	le.PutUint64(b[16:], math.Float64bits(real(scale)))
	le.PutUint64(b[24:], math.Float64bits(imag(scale)))
	le.PutUint64(b[32:], uint64(v))
	le.PutUint32(b[40:], uint32(desc))
	return b
}

// publish writes rank's address a of its k-th ARMCI_Malloc into the table
// every rank reads (growing it on the first rank to get there) and returns
// that allocation's row: the exchange of addresses ARMCI_Malloc does, the
// same in every port. The row is complete once all ranks have passed the
// barrier that follows.
func publish(table *[][]mem.Addr, k, rank, ranks int, a mem.Addr) []mem.Addr {
	for len(*table) <= k {
		*table = append(*table, make([]mem.Addr, ranks))
	}
	(*table)[k][rank] = a
	return (*table)[k]
}

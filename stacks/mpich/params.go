package mpich

import (
	"errors"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"gopkg.in/yaml.v3"
)

// Device and lock names.
const (
	DeviceShmem   = "ch_shmem"   // per-process packet queues guarded by locks (section 3)
	DeviceLFShmem = "ch_lfshmem" // p(p-1) single-writer packet slots (section 5)
	DeviceT3D     = "ch_t3d"     // MPICH-style put-based device standing in for the T3D MPI baseline (not EPCC's code)
	LockSysV      = "sysv"       // System V semaphores (section 4)
	LockTAS       = "tas"        // test-and-set locks (section 6)

	CollectivesShmem = "shmem" // ch_t3d: MPI_Bcast and MPI_Reduce by puts into system buffers (t3dcoll.go)
	CollectivesP2P   = "p2p"   // collectives are the workload's trees over point-to-point messages
)

// Params configures the stack (stack.params in a scenario).
type Params struct {
	// Device is ch_shmem or ch_lfshmem (on one node's shared segment, the
	// SX-4's; ch_lfshmem also across nodes, by remote writes), ch_t3d
	// (by remote writes: the T3D's puts), or ch3:sock (MPICH2's TCP
	// channel, over a machine's sockets). The defaults of the other fields
	// depend on it: see DefaultParamsFor.
	Device string `yaml:"device"`
	// Lock guards the ch_shmem queues and the shared data pool on a shared
	// segment: sysv or tas. (ch_lfshmem across nodes has neither.)
	Lock string `yaml:"lock"`
	// ShortBytes: messages shorter than this travel inside the control
	// packet ("default is less than 1 Kbyte", section 3).
	ShortBytes int `yaml:"short_bytes"`
	// EagerBytes: messages up to this length are sent at once through the
	// shared pool ("the default is 128K bytes", section 3); longer ones use
	// the rendezvous protocol. ch_t3d keeps one eager buffer of this size
	// per sender in every process's memory (allocated on the sender's
	// first use), which must fit the T3D's memory on 128 PEs: 16 KB
	// assumed there (the default of the former stacks/t3dmpi; the paper's
	// T3D MPI was EPCC's, whose threshold is not given, footnote 5 of
	// papers/aclmpl-t3d.txt).
	EagerBytes int `yaml:"eager_bytes"`
	// SharedMemoryBytes is the shared segment (System V shared memory on
	// the SX-4) the device requests: packet queues or slots plus the data
	// pool. 4 MB is MPICH's default
	// shared-memory size (MPI_GLOBMEMSIZE); with the 32x32 slot array of
	// section 5 it leaves about 3 MB of pool, the Figure 4 dip.
	SharedMemoryBytes int `yaml:"shared_memory_bytes"`
	// SlotProcs is the dimension of the lock-free slot array: "on a
	// 32-processor SX-4, one might make this an array of length 32x32"
	// (section 5). Must be at least the number of processes.
	SlotProcs int `yaml:"slot_procs"`
	// QueuePackets is the length of each ch_shmem incoming packet queue,
	// and of ch_t3d's receive queue (receive_queue fetch-inc: the pool of
	// slots its fetch-and-increment register hands out; shared: the locked
	// queue). MPICH's value is not in the paper, nor EPCC's, nor the size
	// of ACLMPL's "fixed sized pool" (papers/aclmpl-t3d.txt 4.2); 16
	// assumed (ping-pong never fills it).
	QueuePackets int `yaml:"queue_packets"`
	// RingPackets is the number of packet slots each sender has in a
	// receiver's memory (ch_t3d only): the lock-free single-writer slot of
	// section 5, made a short ring so that a sender may have a packet in
	// flight while the previous one is read. Assumed 2 (the former
	// stacks/t3dmpi's value: the least that overlaps sending with reading;
	// ch_t3d is our MPICH-style stand-in for the paper's EPCC MPI, whose
	// buffering is not described).
	RingPackets int `yaml:"ring_packets"`
	// Fences: the NEC synchronization in PKT_COPYIN / PKT_READY_SET and in
	// lock release; with ch_t3d, the quiet (wait for every put to be
	// delivered) between the data and the header that marks it ready.
	// Turning it off is for teaching (sx4-lockfree-nofence).
	Fences bool `yaml:"fences"`
	// ReadyBitCached reads the ready bit (and queue tail, or with ch_t3d
	// the ready words and credits) through the non-coherent cache instead
	// of PKT_READY_IS_SET or an uncached load: for teaching
	// (sx4-spin-cached).
	ReadyBitCached bool `yaml:"ready_bit_cached"`
	// Threads is the thread-safety build of papers/mpich2-threads.txt
	// section 2: single (no thread locks compiled in), runtime (locks
	// compiled in, taken only when MPI_Init_thread asked for multiple) or
	// multiple (always taken). Default runtime: "The default build of the
	// ch3:sock channel supports thread safety, but it is enabled only at
	// run time" (section 6).
	Threads string `yaml:"threads"`
	// ThreadWait is what a thread that must wait for the progress engine
	// while another thread polls the device does (section 4.6): yield
	// (sleep on a condition variable, woken when progress is made: no CPU
	// spent, a thread wake-up of latency) or spin (poll the progress
	// engine every ThreadPollCycles: lower latency, the CPU kept busy).
	// Default yield: "it is common practice to have a thread that is
	// waiting for an event ... to yield to other threads" (section 4.6).
	ThreadWait string `yaml:"thread_wait"`
	// ThreadLocking is where the thread lock is taken: progress (the
	// lock guards each step of the progress engine and is released across
	// every blocking wait: section 4) or per-call (held around each whole
	// MPI call: the teaching variant that deadlocks Figure 2).
	ThreadLocking string `yaml:"thread_locking"`
	// ContextIDs is the context-id algorithm of MPI_Comm_dup (section 5):
	// multi (Figure 3, MPICH2's; default: "works efficiently in both
	// single-threaded and multithreaded cases", section 5.3), single (the
	// bit-vector allreduce of 5.1, unsafe with threads), naive-lock (lock,
	// allreduce, unlock: the deadly embrace of 5.2) or naive-two (two
	// allreduces without priority: may loop for ever, 5.2).
	ContextIDs string `yaml:"context_ids"`
	// Allreduce is MPI_Allreduce's algorithm, which MPI_Comm_dup's
	// context-id agreement uses: linear (every process sends to process 0,
	// which combines and sends the result back: MPICH's, and the default
	// of the MPICH devices) or recursive-doubling (log2 p rounds of
	// exchanges with a partner, the processes beyond the largest power of
	// two folded in first: MPICH2's algorithm for short messages, Thakur,
	// Rabenseifner and Gropp, "Optimization of collective communication
	// operations in MPICH", IJHPCA 19(1), 2005; the default of ch3:sock,
	// MPICH2's channel).
	Allreduce string `yaml:"allreduce"`
	// CommDup is how much of MPI_Comm_dup and MPI_Comm_free runs as code:
	// mpich2 (MPICH2 1.0's MPI layer: the context id, then the
	// communicator object from its handle pool, the fields copied, the
	// process group shared by reference, the attributes' copy callbacks,
	// and on MPI_Comm_free their release: commobj.go; the default of
	// ch3:sock, MPICH2's channel) or context-id (the context-id agreement
	// and its mask only: the default of the MPICH 1 devices, whose own
	// MPI_Comm_dup is not modelled, and the choice of a schedule
	// exploration of Figure 3, whose properties do not depend on the
	// object code that follows it).
	CommDup string `yaml:"comm_dup"`
	// Collectives is how MPI_Bcast and MPI_Reduce move data (ch_t3d
	// only): shmem (default for ch_t3d: binomial trees of puts into a
	// system buffer of eager_bytes per PE, copied out at memcpy speed, one
	// MPI call's software per PE; t3dcoll.go says why) or p2p (the stack
	// offers no collectives: a workload builds its trees over MPI_Send and
	// MPI_Recv, the behaviour before; the SX-4 devices' only one).
	Collectives string `yaml:"collectives"`
	// ReceiveQueue is how ch_t3d's control packets reach a PE: fetch-inc
	// (default: a pool of queue_packets slots in the receiver's memory,
	// each claimed by a sender's read of the receiver's
	// fetch-and-increment register and read in order by the receiver, the
	// buffer management of Illinois Fast Messages and ACLMPL's asynchronous
	// protocol, papers/aclmpl-t3d.txt 4.2 and 7, t3dfiqueue.go), per-sender
	// (a ring of ring_packets per ordered pair in the receiver's memory,
	// written only by that sender's puts, so no lock: the single-writer
	// design of ACLMPL's request blocks, 4.1, and of section 5 of
	// papers/mpich-sx4.txt, which the receiver must scan, t3d.go) or
	// shared (one queue per receiver of queue_packets packets, appended to
	// under a lock taken with the T3D's atomic swap: MPICH's ch_shmem queue
	// on remote memory, t3dqueue.go; our construction, described by neither
	// paper).
	ReceiveQueue string `yaml:"receive_queue"`
	// PacketCycles is MPICH's software per control packet on each side,
	// in cycles of the process's CPU: the path from MPI_Send down to the
	// device, and again from the device up to a completed MPI_Recv on the
	// other side (envelope building, matching, request bookkeeping, the
	// debugging hooks the paper mentions in section 8); a collective call
	// (ch_t3d's shmem collectives) pays it once on each PE. Calibrated:
	// calibration/mpich-packet.yaml fits it to Figure 6 at 0 bytes (37 us
	// half round trip, of which the machine operations of Figures 2 and 3
	// take about 10 us): 1700 cycles, 13.6 us at 125 MHz. On the T3D
	// (ch_t3d) the same code on the 150 MHz Alpha is taken to need the
	// same number of cycles (assumed: the same portable C code; no T3D
	// figure isolates it). The code's footprint in an instruction cache is
	// this many 4-byte instructions per path (code.go).
	PacketCycles float64 `yaml:"packet_cycles"`
	// T3DSendCycles is the software a ch_t3d process runs for each control
	// packet it sends, from MPI_Send down to the device (envelope
	// building, request bookkeeping, the device's packet header), charged
	// through the CPU on the send path's code (build, adi.go) once per
	// packet: one short or eager message, a rendezvous request, its
	// ok-to-send, its data packet. EPCC's per-message work is not
	// described by papers/aclmpl-t3d.txt (footnote 5: "The T3D MPI
	// implementation was from EPCC"). Default t3dSendCycles, calibrated
	// by calibration/t3d-mpi.yaml (a free parameter there, with its
	// bounds and the sentences that set them); packet_cycles (1700,
	// MPICH's path fitted on the SX-4) gives the device without
	// EPCC's extra work. The code it runs is the send path's 6.8 KB
	// whatever the cycles (code.go): the fitted work is taken to loop in
	// that code, not to add code to the instruction cache.
	T3DSendCycles float64 `yaml:"t3d_send_cycles"`
	// T3DRecvCycles is the software a ch_t3d process runs for each control
	// packet it takes from its receive queue, from the device up to a
	// completed receive (decoding, matching against the posted receives,
	// completing the request), charged on the receive path's code
	// (readIncoming, adi.go). Default t3dRecvCycles, calibrated by
	// calibration/t3d-mpi.yaml, as T3DSendCycles.
	T3DRecvCycles float64 `yaml:"t3d_recv_cycles"`
}

// devices are the device names.
var devices = []string{DeviceShmem, DeviceLFShmem, DeviceT3D, DeviceSock}

// deviceOnly lists the params that only some devices use: setting one for
// another device is an error.
var deviceOnly = []struct {
	field   string
	devices []string
}{
	{"lock", []string{DeviceShmem, DeviceLFShmem}},
	{"fences", []string{DeviceShmem, DeviceLFShmem, DeviceT3D}},
	{"ready_bit_cached", []string{DeviceShmem, DeviceLFShmem, DeviceT3D}},
	{"shared_memory_bytes", []string{DeviceShmem, DeviceLFShmem}},
	{"slot_procs", []string{DeviceLFShmem}},
	{"queue_packets", []string{DeviceShmem, DeviceT3D}},
	{"ring_packets", []string{DeviceT3D}},
	{"collectives", []string{DeviceT3D}},
	{"receive_queue", []string{DeviceT3D}},
	{"t3d_send_cycles", []string{DeviceT3D}},
	{"t3d_recv_cycles", []string{DeviceT3D}},
}

// DefaultParams is the paper's final version (Figure 6).
func DefaultParams() Params {
	return Params{
		Device: DeviceLFShmem, Lock: LockTAS,
		ShortBytes: 1024, EagerBytes: 128 * 1024,
		SharedMemoryBytes: 4 << 20, SlotProcs: 32, QueuePackets: 16,
		RingPackets: 2, Fences: true,
		Threads: BuildRuntime, ThreadWait: WaitYield, ThreadLocking: LockingProgress, ContextIDs: ContextMulti, Allreduce: AllreduceLinear,
		CommDup:     CommDupContextID,
		Collectives: CollectivesP2P, ReceiveQueue: QueueFetchInc,
		// EPCC's per-packet software on ch_t3d (the only device that
		// charges it), calibrated by calibration/t3d-mpi.yaml to Table 2's
		// one-to-all row.
		T3DSendCycles: t3dSendCycles, T3DRecvCycles: t3dRecvCycles,
		PacketCycles: 1700,
	}
}

// DefaultParamsFor is the default configuration of a device: DefaultParams
// with the device set, for ch_t3d its own eager_bytes (16 KB) and the
// SHMEM collectives (its receive queue is DefaultParams' fetch-and-increment
// pool),
// for ch3:sock ch3's eager limit (sockEagerBytes) as both short_bytes and
// eager_bytes (ch3 sends an eager message with its envelope: there is no
// data memory between them).
func DefaultParamsFor(device string) Params {
	p := DefaultParams()
	p.Device = device
	if device == DeviceT3D {
		p.EagerBytes = 16 << 10
		p.Collectives = CollectivesShmem
	}
	if device == DeviceSock {
		p.ShortBytes, p.EagerBytes = sockEagerBytes, sockEagerBytes
		p.Allreduce = AllreduceRecursiveDoubling
		p.CommDup = CommDupMPICH2
	}
	return p
}

// ch_t3d's per-packet software (T3DSendCycles, T3DRecvCycles) by default:
// calibrated by calibration/t3d-mpi.yaml, whose fitted values they are.
// Its free params mpich.t3d_send_cycles and mpich.t3d_recv_cycles are fitted
// to Table 2's one-to-all row (1 KB from PE 0 to 31 PEs) of
// papers/aclmpl-t3d.txt, released as training data; Table 2's other rows
// and the figures judge them. About 75 us on each side at 150 MHz, where
// MPICH's own path (packet_cycles) is 11.3 us: EPCC's work per message,
// which the paper does not describe.
const (
	t3dSendCycles = 11209
	t3dRecvCycles = 11454
)

// Upper bounds of the params: far above anything the papers' machines
// could hold, low enough that the layout arithmetic (slot, queue and ring
// arrays, their products with the number of processes) cannot overflow.
// The machine's memory and shared_memory_bytes bound them further (check,
// checkMemory).
const (
	maxShortBytes  = 1 << 30 // 1 GiB: a control packet larger than any SX-4 or T3D memory share
	maxEagerBytes  = 1 << 40 // 1 TiB: above the SX-4's 16 GB node and a T3D PE's 64 MB
	maxSharedBytes = 1 << 40 // 1 TiB: likewise
	maxSlotProcs   = 1 << 12 // 4096 processes: the SX-4 has at most 32 CPUs a node
	maxRingPackets = 1 << 10 // 1024 packets per sender ring (the default is 2)
	maxPathCycles  = 1e9     // about 7 s of a 150 MHz Alpha per packet: far above any library's path
	// maxPacketCycles is 1e7 cycles (80 ms at 125 MHz) of software per
	// packet: its code footprint (4 bytes a cycle) stays far from overflow.
	maxPacketCycles = 1e7
)

// paramErrorf is an invalid stack param, named by its YAML name:
// machines.Locate places it at its line in stack.params.
func paramErrorf(field, format string, args ...any) error {
	return machines.ParamErrorf(Name, field, format, args...)
}

// Validate returns every bad parameter (each a *machines.ParamError,
// joined with errors.Join) for a run on procs processes.
func (p Params) Validate(procs int) error {
	err := p.check()
	if p.Device == DeviceLFShmem && p.SlotProcs >= 1 && p.SlotProcs <= maxSlotProcs && p.SlotProcs < procs {
		err = errors.Join(err, paramErrorf("slot_procs", "%d is smaller than the number of processes (%d)", p.SlotProcs, procs))
	}
	return err
}

// check is Validate without the number of processes: what ParamsFromYAMLAt
// can check at once. It reports every bad parameter, joined; a check that
// depends on another parameter (eager_bytes against short_bytes, the
// packet arrays against shared_memory_bytes) is made only when that
// parameter is valid, so that one bad value is reported once.
func (p Params) check() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, paramErrorf(field, format, args...))
	}
	devOK := slices.Contains(devices, p.Device)
	if !devOK {
		bad("device", "must be %q, %q, %q or %q, got %q", DeviceShmem, DeviceLFShmem, DeviceT3D, DeviceSock, p.Device)
	}
	if p.Lock != LockSysV && p.Lock != LockTAS {
		bad("lock", "must be %q or %q, got %q", LockSysV, LockTAS, p.Lock)
	}
	shortOK := p.ShortBytes >= 1 && p.ShortBytes <= maxShortBytes
	if !shortOK {
		bad("short_bytes", "must be between 1 and %d, got %d", maxShortBytes, p.ShortBytes)
	}
	switch {
	case p.EagerBytes > maxEagerBytes:
		bad("eager_bytes", "must be at most %d, got %d", maxEagerBytes, p.EagerBytes)
	case shortOK && p.EagerBytes < p.ShortBytes:
		bad("eager_bytes", "(%d) must be at least short_bytes (%d)", p.EagerBytes, p.ShortBytes)
	case !shortOK && p.EagerBytes < 1:
		bad("eager_bytes", "must be at least 1, got %d", p.EagerBytes)
	}
	queueOK := p.QueuePackets >= 1
	if !queueOK {
		bad("queue_packets", "must be at least 1, got %d", p.QueuePackets)
	}
	if p.RingPackets < 1 || p.RingPackets > maxRingPackets {
		bad("ring_packets", "must be between 1 and %d, got %d", maxRingPackets, p.RingPackets)
	}
	slotOK := p.SlotProcs >= 1 && p.SlotProcs <= maxSlotProcs
	if !slotOK {
		bad("slot_procs", "must be between 1 and %d, got %d", maxSlotProcs, p.SlotProcs)
	}
	if !slices.Contains([]string{BuildSingle, BuildRuntime, BuildMultiple}, p.Threads) {
		bad("threads", "must be %q, %q or %q, got %q", BuildSingle, BuildRuntime, BuildMultiple, p.Threads)
	}
	if p.ThreadWait != WaitYield && p.ThreadWait != WaitSpin {
		bad("thread_wait", "must be %q or %q, got %q", WaitYield, WaitSpin, p.ThreadWait)
	}
	if p.ThreadLocking != LockingProgress && p.ThreadLocking != LockingPerCall {
		bad("thread_locking", "must be %q or %q, got %q", LockingProgress, LockingPerCall, p.ThreadLocking)
	}
	if p.Collectives != CollectivesShmem && p.Collectives != CollectivesP2P {
		bad("collectives", "must be %q or %q, got %q", CollectivesShmem, CollectivesP2P, p.Collectives)
	}
	if !slices.Contains([]string{QueueFetchInc, QueuePerSender, QueueShared}, p.ReceiveQueue) {
		bad("receive_queue", "must be %q, %q or %q, got %q", QueueFetchInc, QueuePerSender, QueueShared, p.ReceiveQueue)
	}
	for _, c := range []struct {
		field string
		v     float64
	}{{"t3d_send_cycles", p.T3DSendCycles}, {"t3d_recv_cycles", p.T3DRecvCycles}} {
		if !(c.v >= 0 && c.v <= maxPathCycles) {
			bad(c.field, "must be between 0 and %g cycles, got %g", float64(maxPathCycles), c.v)
		}
	}
	if p.Allreduce != AllreduceLinear && p.Allreduce != AllreduceRecursiveDoubling {
		bad("allreduce", "must be %q or %q, got %q", AllreduceLinear, AllreduceRecursiveDoubling, p.Allreduce)
	}
	if p.CommDup != CommDupMPICH2 && p.CommDup != CommDupContextID {
		bad("comm_dup", "must be %q or %q, got %q", CommDupMPICH2, CommDupContextID, p.CommDup)
	}
	if !slices.Contains(contextAlgorithms, p.ContextIDs) {
		bad("context_ids", "must be one of %s, got %q", strings.Join(contextAlgorithms, ", "), p.ContextIDs)
	}
	if !(p.PacketCycles >= 0 && p.PacketCycles <= maxPacketCycles) {
		bad("packet_cycles", "must be between 0 and %g, got %g", float64(maxPacketCycles), p.PacketCycles)
	}
	sharedOK := p.SharedMemoryBytes > 0 && p.SharedMemoryBytes <= maxSharedBytes
	if !sharedOK {
		bad("shared_memory_bytes", "must be between 1 and %d, got %d", maxSharedBytes, p.SharedMemoryBytes)
	}
	// The packet arrays must fit the shared segment (divisions: no
	// overflow), checked only when their operands are valid.
	if shortOK && sharedOK {
		slots := p.SharedMemoryBytes / p.slotBytes()
		switch {
		case p.Device == DeviceShmem && queueOK && p.QueuePackets > slots:
			bad("queue_packets", "%d packets of %d bytes do not fit shared_memory_bytes (%d)", p.QueuePackets, p.slotBytes(), p.SharedMemoryBytes)
		case p.Device == DeviceLFShmem && slotOK && p.SlotProcs > slots/p.SlotProcs:
			bad("slot_procs", "%dx%d packet slots of %d bytes do not fit shared_memory_bytes (%d)", p.SlotProcs, p.SlotProcs, p.slotBytes(), p.SharedMemoryBytes)
		}
	}
	return errors.Join(errs...)
}

// slotBytes is the size of a packet slot: header and short data, rounded up.
func (p Params) slotBytes() int { return roundUp(HeaderBytes + p.ShortBytes) }

// checkMemory checks the params against the machine's memory (bytes per
// process for ch_t3d, the node's for the shared-memory devices), on procs
// processes: message thresholds and the device's fixed layout must fit.
func (p Params) checkMemory(memBytes, procs int) error {
	var errs []error
	if p.ShortBytes > memBytes {
		errs = append(errs, paramErrorf("short_bytes", "%d exceeds the machine's memory (%d bytes)", p.ShortBytes, memBytes))
	}
	switch {
	case p.EagerBytes > memBytes:
		errs = append(errs, paramErrorf("eager_bytes", "%d exceeds the machine's memory (%d bytes)", p.EagerBytes, memBytes))
	case p.Device == DeviceT3D && p.ReceiveQueue != QueuePerSender && p.QueuePackets > (memBytes-procs*ctlBytes-p.EagerBytes)/p.slotBytes():
		errs = append(errs, paramErrorf("queue_packets", "%s's receive queue of %d packets of %d bytes, the control blocks of %d processes and one %d-byte eager buffer do not fit a PE's %d bytes",
			DeviceT3D, p.QueuePackets, p.slotBytes(), procs, p.EagerBytes, memBytes))
	case p.Device == DeviceT3D:
		// Every PE holds the rings and control blocks of all peers and at
		// least one sender's eager buffer (bounds above keep this exact).
		need := procs*(p.RingPackets*p.slotBytes()+ctlBytes) + p.EagerBytes
		if need > memBytes {
			errs = append(errs, paramErrorf("eager_bytes", "%s needs %d bytes of each PE's %d (packet rings of ring_packets %d x %d processes, control blocks and one %d-byte eager buffer)",
				DeviceT3D, need, memBytes, p.RingPackets, procs, p.EagerBytes))
		}
	}
	if (p.Device == DeviceShmem || p.Device == DeviceLFShmem) && p.SharedMemoryBytes > memBytes {
		errs = append(errs, paramErrorf("shared_memory_bytes", "%d exceeds the machine's memory (%d bytes)", p.SharedMemoryBytes, memBytes))
	}
	return errors.Join(errs...)
}

// ParamsFromYAMLAt decodes the stack params at the YAML path field (e.g.
// "stack.params", "series[2].stack.params") over the defaults of the
// device they name. Errors name file, line and field.
func ParamsFromYAMLAt(file, field string, node *yaml.Node) (Params, error) {
	// Every problem is reported at once: decoding goes on over the fields
	// that did decode (a field that did not keeps its default), and an
	// unknown device is checked with the other fields over the defaults.
	p := DefaultParams()
	decErr := strictyaml.DecodeAt(file, field, node, &p)
	devOK := slices.Contains(devices, p.Device)
	if devOK && p.Device != DefaultParams().Device {
		p = DefaultParamsFor(p.Device)
		decErr = strictyaml.DecodeAt(file, field, node, &p)
	}
	errs := []error{decErr}
	unused := map[string]bool{} // reported as unused: their values are not checked too
	if devOK {
		for _, o := range deviceOnly {
			if n := strictyaml.Find(node, o.field); n != nil && !slices.Contains(o.devices, p.Device) {
				unused[o.field] = true
				errs = append(errs, strictyaml.Errorf(file, n, field+"."+o.field, "device %s does not use it (it is for %s)", p.Device, strings.Join(o.devices, " and ")))
			}
		}
	}
	if err := p.check(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if pe, ok := e.(*machines.ParamError); !ok || !unused[pe.Field] {
				errs = append(errs, machines.Locate(file, field, node, e))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Params{}, err
	}
	return p, nil
}

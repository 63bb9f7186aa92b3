package t3d

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the T3D model a scenario may override (machine.params). Field
// names are the YAML names; units are in the names. Params is never mutated
// during a run.
type Params struct {
	// ClockMHz is the PE clock: "150 MHz DEC Alpha 21064 (EV4)"
	// (hardware.yaml t3d.clock_MHz).
	ClockMHz float64 `yaml:"clock_mhz"`
	// MaxPEs is the largest partition the machine accepts: 2048, the
	// largest T3D, "32-2048" PEs (hardware.yaml t3d.pe_count_range). A
	// what-if study of a larger T3D-like torus raises it (at most
	// MaxWhatIfPEs); nothing else about the machine changes.
	MaxPEs int `yaml:"max_pes"`
	// PEsPerNode is the number of PEs sharing one network router: "two PEs
	// share one 6-way network switch" (hardware.yaml t3d.pes_per_node).
	PEsPerNode int `yaml:"pes_per_node"`
	// TorusNodes overrides the torus shape [x, y, z] in nodes; empty means
	// the most nearly cubic shape of PEs/pes_per_node nodes (128 PEs: 4x4x4
	// nodes, hardware.yaml t3d.topology_example).
	TorusNodes []int `yaml:"torus_nodes"`
	// MemoryMB is each PE's local memory: "16 or 64" MB (hardware.yaml
	// t3d.local_mem_MB); we take 64.
	MemoryMB int `yaml:"memory_mb"`
	// CacheKB is the data cache: "8 Kbytes" (hardware.yaml t3d.dcache_KB),
	// direct-mapped and write-through (t3d.dcache_org, the 21064's).
	CacheKB int `yaml:"cache_kb"`
	// ICacheKB is the instruction cache: "both instruction and data caches
	// (8 Kbytes each)" (hardware.yaml t3d.dcache_KB), direct-mapped with
	// lines of cache_line_bytes like the data cache (the 21064's
	// organisation). The code paths a stack runs through it
	// (mem.CPU.Execute) miss when they do not fit together: "the T3D is
	// extremely instruction cache sensitive" (aclmpl-t3d.txt section 5,
	// Table 1). A miss is a line fill from local memory (memory_latency_ns).
	ICacheKB int `yaml:"icache_kb"`
	// CacheLineBytes is the data cache line: 32 bytes (hardware.yaml
	// t3d.dcache_org, the 21064's standard organisation).
	CacheLineBytes int `yaml:"cache_line_bytes"`
	// LoadNs is a load that hits the data cache: the 21064's 3-cycle
	// load-use latency (20 ns at 150 MHz). Assumed from the 21064's
	// organisation; hardware.yaml does not list it.
	LoadNs float64 `yaml:"load_ns"`
	// MemoryLatencyNs is a load that misses or bypasses the cache (uncached
	// loads of flags). hardware.yaml t3d.local_mem_latency_ns is
	// unconfirmed; ~150 ns (about 23 cycles) assumed.
	MemoryLatencyNs float64 `yaml:"memory_latency_ns"`
	// StoreNs is the issue cost of a store into the 21064's write buffer:
	// one cycle assumed.
	StoreNs float64 `yaml:"store_ns"`
	// MemcpyMBps is a word-aligned memcpy: "word aligned memcpy() speeds on
	// the T3D are only 170MB/sec (approximately)" (aclmpl-t3d.txt 4.2;
	// calibration.yaml t3d_aclmpl.word_aligned_memcpy_MBps).
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// LinkMBps is the bandwidth of a torus link in each direction: "peak
	// bandwidth of 300 MB/second in each direction" (hardware.yaml
	// t3d.link_bw_MBps_per_direction). The PE's network interface (its
	// injection and ejection ports) runs at the same rate.
	LinkMBps float64 `yaml:"link_mbps"`
	// HopNs is a message head's delay through one router and link. Not
	// found (hardware.yaml t3d.router_hop_latency_ns is unconfirmed): 3
	// network clocks (20 ns at 150 MHz, t3d.network_clock_MHz) assumed. It
	// is small next to the interface latency, so the results barely depend
	// on it.
	HopNs float64 `yaml:"hop_ns"`
	// InterfaceNs is the latency of a PE's network interface, paid once when
	// a packet leaves a PE and once when it enters one: half of the
	// "~100 cycles" of a remote access (hardware.yaml
	// t3d.shmem_remote_access_cycles, ~667 ns at 150 MHz) for each one-way
	// trip, split evenly between injection and ejection.
	InterfaceNs float64 `yaml:"interface_ns"`
	// PutStartupNs is the processor time to start a put: the "short
	// sequence of instructions to initiate a transfer" (hardware.yaml
	// t3d.shmem_remote_access_cycles), including the DTB annex set-up for
	// the remote PE and the SHMEM library call. No figure found:
	// calibrated: calibration/t3d-put-startup.yaml fits it to the 4.5 us
	// one-word synchronous latency "between direct neighbor PES"
	// (aclmpl-t3d.txt 4.1; calibration.yaml
	// t3d_aclmpl.sync_latency_one_word_neighbour_us): 790 ns.
	//
	// The "direct neighbour" pair of that figure and of Table 1 is PEs 0
	// and 1, which share a router node (pes_per_node 2) and so cross no
	// torus link (0 hops): two PEs on one node are the nearest pair a T3D
	// has, and PEs 0 and 1 are the pair a benchmark of the period measures
	// (workloads/collective's latency case bounces a word between them).
	// The head still passes the sender's injection and the receiver's
	// ejection port (interface_ns each way). With pes_per_node 1 the same
	// pair is one hop apart and the latency grows by 2*hop_ns per round
	// trip.
	PutStartupNs float64 `yaml:"put_startup_ns"`
	// PutMBps is the rate at which a PE streams a put's data into the
	// network (remote stores through the write buffer). No raw SHMEM figure
	// found (hardware.yaml t3d.shmem_put_get_bw_MBps): calibrated
	// (calibration/t3d-put-rate.yaml, whose training is the two claims of
	// the bound) to the paper's statement, derived from its point-to-point protocol, of
	// "high bandwidth (greater than 100MB/sec for one-to-all and
	// all-to-one communication patterns)" with the synchronous protocol
	// (aclmpl-t3d.txt 4.1; calibration.yaml
	// t3d_aclmpl.sync_one_to_all_and_all_to_one_MBps: "greater than
	// 100"). Collective curves are not tuned to.
	PutMBps float64 `yaml:"put_mbps"`
	// GetMBps is the rate of a get, which the PE resolves word by word
	// through its prefetch queue: 8 bytes per 250 ns issue-and-resolve
	// ("the high cost of issuing and resolving prefetches in the T3D ...
	// 250ns", hardware.yaml t3d.prefetch_issue_resolve_ns), 32 MB/s. The
	// paper: shmem_put() "is faster than shmem_get()" (4.1).
	GetMBps float64 `yaml:"get_mbps"`
	// PacketHeaderBytes is what a request, acknowledgement or
	// fetch-and-increment packet occupies on a link, and what every data
	// packet carries besides its payload. Assumed: one 16-byte
	// header (the T3D routes "data and communication information"
	// separately, hardware.yaml t3d.network_clock_MHz).
	PacketHeaderBytes int `yaml:"packet_header_bytes"`
	// PacketPayloadBytes is the data a network packet carries. Assumed: 32
	// bytes, one 4-word block as the 21064's write buffer merges stores
	// (hardware.yaml t3d.dcache_org: 32-byte lines); no published packet
	// format found. Each packet carries packet_header_bytes besides, on
	// the fast path as in packet mode.
	PacketPayloadBytes int `yaml:"packet_payload_bytes"`
	// PacketMode sends each packet as its own unit through the network
	// (sim/net's packet model). False (the default): messages cross in
	// units of unit_bytes, each lasting the sum of its packets' durations
	// (sim/net's fast path). Both give the same times on an idle network
	// (headers counted per packet in both); they differ only in how
	// messages that meet at a link share it. Nothing the T3D's stacks do
	// observes its packets one by one (its network delivers in order), so
	// the default is the fast path.
	PacketMode bool `yaml:"packet_mode"`
	// NetworkModel is how the network carries messages: "units" (the
	// default), packets or units of a message taking the links of their
	// route one after the other, contending link by link (sim/net's unit
	// model); or "flow", each message one flow over its route whose bytes
	// share every link max-min fairly with the other flows' (sim/net's
	// flow model: far fewer events, its error against units stated in
	// docs/fidelity.md). A simulation choice, not a hardware figure.
	// packet_mode needs the unit model.
	NetworkModel string `yaml:"network_model"`
	// FlowShareMinBytes is, on the flow network model, the largest
	// message (payload bytes) that crosses its route at its own rate, hop
	// by hop, without taking a share of its links' time: a simulation
	// grain, not a hardware figure. Assumed 32: the protocols' control
	// messages (requests, acknowledgements, swaps, one-word puts) hold a
	// link for tens of nanoseconds, and recomputing the sharing as each
	// starts and ends is about half the flow model's CPU on the 128-PE
	// 64 KiB MPI all-to-all (with 0 the flow model is no faster than the
	// unit model there), whose result it moves by 0.2 %. 0: every
	// message, control messages included, shares its links.
	FlowShareMinBytes int `yaml:"flow_share_min_bytes"`
	// UnitBytes is, on the fast path, the payload of the units a message
	// crosses the network in (rounded up to whole packets); 0: whole
	// messages. Assumed: 4096, a simulation grain, not a hardware figure.
	// Messages that meet at a link interleave unit by unit, as the T3D's
	// packets do; whole messages would wait for each other, which turns a
	// hot spot (every PE putting to PE 0, then 1, ...) into a pipeline
	// the hardware does not form. Checked against the packet model on the
	// 128-PE all-to-all at 1 MB: 4096-byte and 512-byte units agree within
	// 0.5% (sync ACLMPL 25.6 and 25.7 MB/s, raw SHMEM 18.0 and 18.0).
	UnitBytes int `yaml:"unit_bytes"`
	// FetchIncNs is the access to the fetch-and-increment register at the
	// target PE, once the request has arrived. The register serves one
	// request at a time: requests that arrive while it is busy wait in
	// arrival order. The latency is not found
	// (hardware.yaml t3d.fetch_and_increment: "assume about one remote
	// read"): the network round trip gives the remote read; the register
	// access itself is taken as one local memory access.
	FetchIncNs float64 `yaml:"fetch_inc_ns"`
	// BarrierNs is the hardware barrier (eureka) network's time from the
	// last PE's arrival to every PE's release. "barrier synchronisation
	// takes only one cycle per check" (hardware.yaml t3d.barrier_eureka); a
	// tree of depth ~log2(2048) at a few cycles per level: 0.5 us assumed.
	// Used by the benchmark harness only, never by the stacks' protocols.
	BarrierNs float64 `yaml:"barrier_ns"`
	// FenceCycles is a memory barrier (the Alpha MB instruction) on the
	// PE's own memory. Assumed: 1 cycle, because the 21064's write buffer
	// is not modelled (stores are visible in order), so a fence has
	// nothing to drain; no published figure (hardware.yaml has none).
	FenceCycles float64 `yaml:"fence_cycles"`
	// CopyStartupCycles is the fixed cost of starting a local memcpy (the
	// call and its alignment checks) before it streams at memcpy_mbps.
	// Assumed: 10 cycles; no published figure (aclmpl-t3d.txt 4.2 gives
	// only the 170 MB/s rate).
	CopyStartupCycles float64 `yaml:"copy_startup_cycles"`
	// CacheFlushCyclesPerLine is the cost of invalidating one line when a
	// PE flushes its whole data cache (cache_kb/cache_line_bytes lines; 256
	// by default). Assumed: one cycle per line; no published figure
	// (hardware.yaml t3d.dcache_org gives only the organisation).
	CacheFlushCyclesPerLine float64 `yaml:"cache_flush_cycles_per_line"`
	// ThreadSwitchCycles is a switch between two threads time-sharing a
	// PE's one Alpha 21064 (machines.Threads): saving and restoring its
	// 32 integer and 32 floating-point registers (64 stores and 64 loads,
	// at best one a cycle) and the thread scheduler's bookkeeping.
	// Assumed 200 cycles (1.3 us at 150 MHz): no measured T3D
	// thread-switch figure was found (hardware.yaml lists none).
	ThreadSwitchCycles float64 `yaml:"thread_switch_cycles"`
}

// DefaultParams returns the model of the Cray T3D of the paper.
func DefaultParams() Params {
	return Params{
		ClockMHz:           150,
		MaxPEs:             MaxPEs,
		PEsPerNode:         2,
		MemoryMB:           64,
		CacheKB:            8,
		ICacheKB:           8,
		CacheLineBytes:     32,
		LoadNs:             20,
		MemoryLatencyNs:    150,
		StoreNs:            6.667,
		MemcpyMBps:         170,
		LinkMBps:           300,
		HopNs:              20,
		InterfaceNs:        167,
		PutStartupNs:       790,
		PutMBps:            125,
		GetMBps:            32,
		PacketHeaderBytes:  16,
		PacketPayloadBytes: 32,
		UnitBytes:          4096,
		NetworkModel:       machines.NetworkUnits,
		FlowShareMinBytes:  32,
		FetchIncNs:         150,
		BarrierNs:          500,

		FenceCycles:             1,
		CopyStartupCycles:       10,
		CacheFlushCyclesPerLine: 1,
		ThreadSwitchCycles:      200,
	}
}

// Limits of the plausible ranges Validate accepts. They are wide (what-if
// studies stay possible) but keep every conversion to simulated time, to
// cycles and to bytes far from overflow.
const (
	maxClockMHz    = 10000 // 100 ps cycle
	maxRateMBps    = 1e7   // 10 TB/s
	minRateMBps    = 1     // slower turns a large transfer into hours of simulated time
	maxOpNs        = 1e9   // one second for a single operation or hop
	maxOpCycles    = 1e6   // fence, copy start-up
	maxMemoryMB    = 4096  // per PE; the T3D had 16 or 64 (hardware.yaml t3d.local_mem_MB)
	maxCacheKB     = 16384 // 16 MB: the cache model holds one tag per line
	maxFlushCycles = 1000  // per line: keeps a whole-cache flush far from overflow
	maxLineBytes   = 4096
	maxHeaderBytes = 1 << 16
)

// ParamError is an invalid parameter (machines.ParamError, Machine "t3d").
type ParamError = machines.ParamError

func paramErrorf(field, format string, args ...any) error {
	return machines.ParamErrorf(Name, field, format, args...)
}

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, maxClockMHz, "MHz"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("link_mbps", p.LinkMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("put_mbps", p.PutMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("get_mbps", p.GetMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("load_ns", p.LoadNs, 0, maxOpNs, "ns"),
			machines.Float("memory_latency_ns", p.MemoryLatencyNs, 0, maxOpNs, "ns"),
			machines.Float("store_ns", p.StoreNs, 0, maxOpNs, "ns"),
			machines.Float("hop_ns", p.HopNs, 0, maxOpNs, "ns"),
			machines.Float("interface_ns", p.InterfaceNs, 0, maxOpNs, "ns"),
			machines.Float("put_startup_ns", p.PutStartupNs, 0, maxOpNs, "ns"),
			machines.Float("fetch_inc_ns", p.FetchIncNs, 0, maxOpNs, "ns"),
			machines.Float("barrier_ns", p.BarrierNs, 0, maxOpNs, "ns"),
			machines.Float("fence_cycles", p.FenceCycles, 0, maxOpCycles, "cycles"),
			machines.Float("copy_startup_cycles", p.CopyStartupCycles, 0, maxOpCycles, "cycles"),
			machines.Float("cache_flush_cycles_per_line", p.CacheFlushCyclesPerLine, 0, maxFlushCycles, "cycles"),
			machines.Float("thread_switch_cycles", p.ThreadSwitchCycles, 0, maxOpCycles, "cycles"),
		}, []machines.IntRange{
			machines.Int("max_pes", p.MaxPEs, 1, MaxWhatIfPEs, "PEs"),
			machines.Int("pes_per_node", p.PEsPerNode, 1, MaxPEs, "PEs"),
			machines.Int("memory_mb", p.MemoryMB, 1, maxMemoryMB, "MB"),
			machines.Int("cache_kb", p.CacheKB, 1, maxCacheKB, "KB"),
			machines.Int("icache_kb", p.ICacheKB, 1, maxCacheKB, "KB"),
			machines.Int("cache_line_bytes", p.CacheLineBytes, 8, maxLineBytes, "bytes"),
			machines.Int("packet_header_bytes", p.PacketHeaderBytes, 0, maxHeaderBytes, "bytes"),
			machines.Int("packet_payload_bytes", p.PacketPayloadBytes, 8, maxHeaderBytes, "bytes"),
			machines.Int("unit_bytes", p.UnitBytes, 0, 1<<30, "bytes"),
			machines.Int("flow_share_min_bytes", p.FlowShareMinBytes, 0, 1<<30, "bytes"),
		}
}

// PacketFeatures are the features only the unit network model does
// (machines.Networked).
func (p Params) PacketFeatures() []machines.PacketFeature {
	return []machines.PacketFeature{{Field: "packet_mode", On: p.PacketMode, What: "packet_mode sends packets one by one", Off: "false"}}
}

// Validate names (by its YAML name, as a *ParamError) the first parameter
// that is not a finite number in its plausible range.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	if err := machines.CheckRanges(Name, floats, ints); err != nil {
		return err
	}
	if err := machines.CheckNetworkModel(Name, p.NetworkModel, p.PacketFeatures()...); err != nil {
		return err
	}
	switch {
	case p.CacheLineBytes&(p.CacheLineBytes-1) != 0:
		return paramErrorf("cache_line_bytes", "must be a power of two, got %d", p.CacheLineBytes)
	case (p.CacheKB<<10)%p.CacheLineBytes != 0:
		return paramErrorf("cache_kb", "%d KB is not a whole number of cache_line_bytes (%d) lines", p.CacheKB, p.CacheLineBytes)
	case (p.ICacheKB<<10)%p.CacheLineBytes != 0:
		return paramErrorf("icache_kb", "%d KB is not a whole number of cache_line_bytes (%d) lines", p.ICacheKB, p.CacheLineBytes)
	case len(p.TorusNodes) != 0 && len(p.TorusNodes) != 3:
		return paramErrorf("torus_nodes", "must list 3 sizes [x, y, z] in nodes, got %v", p.TorusNodes)
	}
	nodes := 1
	for i, d := range p.TorusNodes {
		if err := machines.CheckRanges(Name, nil, []machines.IntRange{{Field: fmt.Sprintf("torus_nodes[%d]", i), V: d, Lo: 1, Hi: p.MaxPEs, Unit: "nodes"}}); err != nil {
			return err
		}
		nodes *= d // at most MaxWhatIfPEs^3: no overflow
	}
	if nodes > p.MaxPEs {
		return paramErrorf("torus_nodes", "%v is %d nodes; a T3D has at most %d (max_pes; hardware.yaml t3d.pe_count_range)", p.TorusNodes, nodes, p.MaxPEs)
	}
	if err := p.memConfig().Validate(); err != nil {
		return fmt.Errorf("t3d: %w", err)
	}
	return nil
}

// memConfig is one PE's processor: an Alpha 21064 with a direct-mapped
// instruction cache, a direct-mapped, write-through data cache that remote writes do not update (there is "no
// hardware support for cache coherency", hardware.yaml
// t3d.hw_cache_coherence), stores visible in order (the write buffer is not
// modelled), and memcpy at the measured rate.
func (p Params) memConfig() mem.Config {
	cyc := 1000 / p.ClockMHz // ns per cycle
	return mem.Config{
		ClockMHz: p.ClockMHz,
		Cache: mem.CacheConfig{Enabled: true, LineBytes: p.CacheLineBytes, SizeBytes: p.CacheKB << 10,
			Ways: 1, Coherent: false},
		ICache: mem.ICacheConfig{Enabled: true, LineBytes: p.CacheLineBytes, SizeBytes: p.ICacheKB << 10},
		Costs: mem.Costs{
			LoadCycles:         p.LoadNs / cyc,
			MissCycles:         p.MemoryLatencyNs / cyc,
			UncachedLoadCycles: p.MemoryLatencyNs / cyc,
			StoreCycles:        p.StoreNs / cyc,
			FenceCycles:        p.FenceCycles,
			AtomicCycles:       p.MemoryLatencyNs / cyc,
			FlushCycles:        p.CacheFlushCyclesPerLine * float64(p.CacheKB<<10) / float64(max(p.CacheLineBytes, 1)),
			CopyStartupCycles:  p.CopyStartupCycles,
			MemcpyMBps:         p.MemcpyMBps,
			VectorMBps:         p.MemcpyMBps,
		},
	}
}

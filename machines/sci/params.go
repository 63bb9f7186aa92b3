package sci

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the Scali PCI-SCI cluster model a scenario may override
// (machine.params). Field names are the YAML names; units are in the
// names. Params is never mutated during a run.
type Params struct {
	// TorusW and TorusH are the 2D torus of SCI ringlets in nodes: "The
	// SCI network was organized as an 8 x 12 2D mesh/torus"
	// (scampi-sci.txt 1.6). A run on fewer nodes uses the first nodes of
	// it, row by row, as a partition of the 96-node machine. TorusH 1 is a
	// single ringlet of TorusW nodes.
	TorusW int `yaml:"torus_w"`
	TorusH int `yaml:"torus_h"`
	// ProcsPerNode is the number of MPI processes per node: the nodes are
	// "dual Pentium 450 MHz processors PCs" (1.6), so 1 or 2. Assumed 1:
	// the paper's barrier and all-to-all tables run one process per node;
	// its "two processes on the same PC" points set 2.
	ProcsPerNode int `yaml:"procs_per_node"`
	// ClockMHz is the Pentium II clock: 450 MHz (1.6).
	ClockMHz float64 `yaml:"clock_mhz"`
	// MemoryMB is a node's main memory. Not stated for the Paderborn
	// nodes; assumed 256 MB (a 1999 dual Pentium II server).
	MemoryMB int `yaml:"memory_mb"`
	// MemcpyMBps is a local memory-to-memory copy on a node. No Pentium II
	// 450 / 440BX memcpy figure was found (hardware.yaml
	// sci.host_memcpy_MBps, bounded by the 800 MB/s FSB peak): calibrated
	// by calibration/sci-scampi.yaml to the 130 MB/s intra-node ping-pong
	// bandwidth (scampi-sci.txt 1.6;
	// calibration.yaml sci_scampi.intranode_bandwidth_MBps).
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// LoadNs is a load that misses the caches: assumed 100 ns (a 100 MHz
	// SDRAM access on a 440BX).
	LoadNs float64 `yaml:"load_ns"`
	// StoreNs is a local store: one cycle assumed (write buffers).
	StoreNs float64 `yaml:"store_ns"`
	// PCIWriteMBps is the rate at which the CPU's stores to the SCI
	// window cross the PCI bus into the adapter's stream buffers (a 32-bit
	// 33 MHz bus: 132 MB/s peak, hardware.yaml sci.pci_32_33_peak_MBps;
	// "bandwidths up to 80 Mbytes/s into a single system" on an LC-2
	// adapter, sci.lc2_remote_store_latency_us). Calibrated by
	// calibration/sci-scampi.yaml to the 76 MB/s
	// inter-node ping-pong bandwidth (scampi-sci.txt 1.6; calibration.yaml
	// sci_scampi.internode_bandwidth_MBps): 87, with the receiving node's
	// PCI bus modelled (85 before it was).
	PCIWriteMBps float64 `yaml:"pci_write_mbps"`
	// PCIMHz is the node's PCI bus clock: a 32-bit, 33 MHz bus, 132 MB/s
	// peak (hardware.yaml sci.pci_32_33_peak_MBps: "33 MHz x 4 bytes").
	// One bus per node, shared by the CPUs' posted writes into the adapter
	// (pci_write_mbps) and the adapter's writes of incoming SCI packets
	// into host memory (DMA bursts of 4 bytes per clock).
	PCIMHz float64 `yaml:"pci_mhz"`
	// PCIBurstOverheadCycles is what a DMA burst costs the bus besides its
	// data phases: arbitration, the address phase and the turnaround.
	// Assumed 3 clocks (the PCI protocol's minimum is an address phase and
	// a turnaround; arbitration is hidden only on a busy bus), so a 64-byte
	// packet holds the bus 19 clocks, 111 MB/s of the 132 MB/s peak.
	PCIBurstOverheadCycles float64 `yaml:"pci_burst_overhead_cycles"`
	// AdapterNs is the latency of the PCI-SCI adapter each way: from the
	// stream buffer to the first SCI link at the sender, and from the last
	// link through the PCI bridge into memory at the receiver. The LC-2
	// remote store latency is 2.9 us end to end (hardware.yaml
	// sci.lc2_remote_store_latency_us, UltraSparc hosts). Calibrated by
	// calibration/sci-scampi.yaml to the
	// 9.4 us inter-node ping-pong latency (scampi-sci.txt 1.6;
	// calibration.yaml sci_scampi.internode_latency_us): 1780, the PCI
	// burst of the envelope into the receiver's memory (0.58 us) being
	// modelled apart (2050 before it was).
	AdapterNs float64 `yaml:"adapter_ns"`
	// LinkMBps is an SCI link's bandwidth. The standard's links are 1 GB/s
	// (hardware.yaml sci.standard_link); the LC-2's rate is often quoted
	// as 500 MB/s but not confirmed: assumed 500.
	LinkMBps float64 `yaml:"link_mbps"`
	// HopNs is a packet's delay through one node's bypass FIFO and link.
	// Not found; assumed 50 ns (small next to adapter_ns).
	HopNs float64 `yaml:"hop_ns"`
	// PacketHeaderBytes is an SCI packet's header: "packets with a
	// 16-byte header and 16, 64, or 256 data bytes" (hardware.yaml
	// sci.packet_payloads_bytes).
	PacketHeaderBytes int `yaml:"packet_header_bytes"`
	// GatherSplitProb is the probability that a stream buffer is sent
	// before its 64-byte block is complete, so that a block the CPU writes
	// whole leaves as two 32-byte halves (two SCI packets that may be
	// reordered). The PSB gathers writes into 64-byte stream buffers
	// (hardware.yaml sci.psb_features, sci.stream_buffers, unconfirmed);
	// when it flushes a partial one (its timers, the other CPU's writes) is
	// not documented: assumed 0.1. The Pentium II writes at most one
	// 32-byte write-combining line per PCI burst.
	GatherSplitProb float64 `yaml:"gather_split_prob"`
	// GrainBytes is a simulation grain, not hardware: consecutive full
	// 64-byte packets of one bulk write cross the network as one message of
	// up to this many bytes (each packet's header still counted), so that a
	// long transfer is not millions of events. Reordering acts per grain
	// (the envelope and the flags are single packets, so they reorder
	// against the data as packets would; the data are read only after
	// MemBarrier); CRC errors act per packet: the hit packet lands late or
	// twice, the rest of its grain at once. Assumed 1024.
	GrainBytes int `yaml:"grain_bytes"`
	// ReorderNs is the largest extra delay a packet may take in the SCI
	// fabric (its adapters' queues, ringlet arbitration), drawn per message
	// from the engine's generator: packets are reordered ("the
	// possibility of reordering of packets in the SCI interconnect
	// fabric", scampi-sci.txt 1.5.1). Assumed 200 ns.
	ReorderNs float64 `yaml:"reorder_ns"`
	// ReadAccessNs is the remote memory access of a remote read or a
	// fetch-and-increment at the target adapter. Assumed 500 ns (a PCI
	// read of host memory by the adapter). Remote reads come out "an order
	// of magnitude slower than local loads" (1.3.1).
	ReadAccessNs float64 `yaml:"read_access_ns"`
	// MapUs is the cost of creating and mapping an SCI shared memory
	// segment at a receiver through the driver (first use of a channel).
	// Not stated; assumed 50 us (system calls on both nodes).
	MapUs float64 `yaml:"map_us"`
	// CheckpointNs is StartCheckPoint or EndCheckPoint: reading the shadow
	// of the driver's state and the interrupt counter "mapped into
	// user-space for fast checkpointing" (1.3.2). Assumed 2 local loads.
	CheckpointNs float64 `yaml:"checkpoint_ns"`

	// Faults (none by default).

	// CRCErrorRate is the probability that an SCI packet is hit by a CRC
	// error. The link layer retries it (hardware.yaml sci.reliability), but
	// the hit may be on the request (the write lands late) or on the
	// response (it has landed, and lands again with the retry), and the
	// driver's error state changes, failing checkpoints (1.3.2, 1.5.1).
	CRCErrorRate float64 `yaml:"crc_error_rate"`
	// CRCRetryNs is the time of the link layer's retry of a packet hit by
	// a CRC error. Assumed 2 us (the echo timeout and the resend).
	CRCRetryNs float64 `yaml:"crc_retry_ns"`
	// UnplugAtUs, when positive, is when a cable is pulled out: the output
	// link of node UnplugNode on its horizontal ringlet goes down for
	// UnplugForUs (1.4: "it should be possible to exchange cables while an
	// application is running"). Every adapter gets the interrupt, so
	// checkpoints in progress fail; writes that find no way round fail.
	UnplugAtUs  float64 `yaml:"unplug_at_us"`
	UnplugForUs float64 `yaml:"unplug_for_us"`
	UnplugNode  int     `yaml:"unplug_node"`
	// RerouteAtUs, when positive, is when the routing function changes
	// (1.4: "change the routing function in the SCI interconnect fabric
	// ... transparent to the running application"): from then on routes
	// take the vertical ringlet first.
	RerouteAtUs float64 `yaml:"reroute_at_us"`
	// NetworkModel is how the network carries messages: "units" (the
	// default), packets or units of a message taking the links of their
	// route one after the other, contending link by link (sim/net's unit
	// model); or "flow", each message one flow over its route whose bytes
	// share every link max-min fairly with the other flows' (sim/net's
	// flow model: far fewer events, its error against units stated in
	// docs/fidelity.md). A simulation choice, not a hardware figure.
	// Reordering (reorder_ns, 200 by default: set it to 0), CRC errors
	// and unplugged cables need the unit model; so does the ringlets'
	// bypass priority, which the flow model does not have (a flow shares
	// a ring link equally with the traffic it meets).
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
}

// DefaultParams returns the Paderborn cluster of the paper.
func DefaultParams() Params {
	return Params{
		TorusW: 8, TorusH: 12, ProcsPerNode: 1,
		ClockMHz: 450, MemoryMB: 256,
		MemcpyMBps: 134,
		LoadNs:     100, StoreNs: 2.2,
		PCIWriteMBps: 87, AdapterNs: 1780,
		PCIMHz: 33, PCIBurstOverheadCycles: 3,
		LinkMBps: 500, HopNs: 50, PacketHeaderBytes: 16,
		GatherSplitProb: 0.1, GrainBytes: 1024, ReorderNs: 200,
		ReadAccessNs: 500, MapUs: 50, CheckpointNs: 200,
		CRCRetryNs:        2000,
		NetworkModel:      machines.NetworkUnits,
		FlowShareMinBytes: 32,
	}
}

// SoakFaults are the params a soak runs the machine under to exercise
// ScaMPI's fault handling (1.3.2, 1.5.1): CRC errors on 0.2 % of the
// 64-byte packets (a 64 KB message is hit about twice, on its request or
// its response, failing checkpoints and retrying its transfers) and
// packets reordered by up to 1 us, five times the default. Not a measured
// rate: chosen so that most runs meet faults yet a 16 KB transfer usually
// completes in one or two tries (at 2 % it needs about 170: a slow soak).
const SoakFaults = "{crc_error_rate: 0.002, reorder_ns: 1000}"

const (
	maxNodes = 4096
	maxNs    = 1e9
	maxRate  = 1e6
)

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, 10000, "MHz"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, 1, maxRate, "MB/s"),
			machines.Float("load_ns", p.LoadNs, 0, maxNs, "ns"),
			machines.Float("store_ns", p.StoreNs, 0, maxNs, "ns"),
			machines.Float("pci_write_mbps", p.PCIWriteMBps, 1, maxRate, "MB/s"),
			machines.Float("adapter_ns", p.AdapterNs, 0, maxNs, "ns"),
			machines.Float("pci_mhz", p.PCIMHz, 1, 10000, "MHz"),
			machines.Float("pci_burst_overhead_cycles", p.PCIBurstOverheadCycles, 0, 1000, "cycles"),
			machines.Float("link_mbps", p.LinkMBps, 1, maxRate, "MB/s"),
			machines.Float("hop_ns", p.HopNs, 0, maxNs, "ns"),
			machines.Float("gather_split_prob", p.GatherSplitProb, 0, 1, ""),
			machines.Float("reorder_ns", p.ReorderNs, 0, maxNs, "ns"),
			machines.Float("read_access_ns", p.ReadAccessNs, 0, maxNs, "ns"),
			machines.Float("map_us", p.MapUs, 0, 1e6, "us"),
			machines.Float("checkpoint_ns", p.CheckpointNs, 0, maxNs, "ns"),
			machines.Float("crc_error_rate", p.CRCErrorRate, 0, 0.5, ""),
			machines.Float("crc_retry_ns", p.CRCRetryNs, 0, maxNs, "ns"),
			machines.Float("unplug_at_us", p.UnplugAtUs, 0, 1e9, "us"),
			machines.Float("unplug_for_us", p.UnplugForUs, 0, 1e9, "us"),
			machines.Float("reroute_at_us", p.RerouteAtUs, 0, 1e9, "us"),
		}, []machines.IntRange{
			machines.Int("torus_w", p.TorusW, 2, maxNodes, "nodes"),
			machines.Int("torus_h", p.TorusH, 1, maxNodes, "nodes"),
			machines.Int("procs_per_node", p.ProcsPerNode, 1, 2, "processes"),
			machines.Int("memory_mb", p.MemoryMB, 1, 1<<16, "MB"),
			machines.Int("packet_header_bytes", p.PacketHeaderBytes, 0, 64, "bytes"),
			machines.Int("grain_bytes", p.GrainBytes, 64, 1<<20, "bytes"),
			machines.Int("unplug_node", p.UnplugNode, 0, maxNodes-1, ""),
			machines.Int("flow_share_min_bytes", p.FlowShareMinBytes, 0, 1<<30, "bytes"),
		}
}

// PacketFeatures are the features only the unit network model does
// (machines.Networked).
func (p Params) PacketFeatures() []machines.PacketFeature {
	return []machines.PacketFeature{
		{Field: "reorder_ns", On: p.ReorderNs > 0, What: "reorder_ns reorders packets", Off: "0"},
		{Field: "crc_error_rate", On: p.CRCErrorRate > 0, What: "crc_error_rate injects CRC errors on packets", Off: "0"},
		{Field: "unplug_at_us", On: p.UnplugAtUs > 0, What: "unplug_at_us takes a link down", Off: "0"},
	}
}

// Validate checks every value and names the first bad field.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	if err := machines.CheckRanges(Name, floats, ints); err != nil {
		return err
	}
	if err := machines.CheckNetworkModel(Name, p.NetworkModel, p.PacketFeatures()...); err != nil {
		return err
	}
	if p.GrainBytes%64 != 0 {
		return machines.ParamErrorf(Name, "grain_bytes", "%d is not a multiple of the 64-byte SCI packet", p.GrainBytes)
	}
	if p.TorusW*p.TorusH > maxNodes {
		return machines.ParamErrorf(Name, "torus_w", "%dx%d nodes is more than %d", p.TorusW, p.TorusH, maxNodes)
	}
	if err := p.memConfig().Validate(); err != nil {
		return fmt.Errorf("sci: %w", err)
	}
	return nil
}

// memConfig is one Pentium II's view of its node's memory: a 16 KB 4-way
// L1 data cache of 32-byte lines (the Pentium II's, assumed from Intel's
// documentation; hardware.yaml does not list it) kept coherent with the
// other CPU and with the adapter's DMA by snooping, so a poll of an
// unchanged word hits (2 cycles assumed) and a first touch misses
// (load_ns); stores visible in program order (no store buffer modelled:
// assumed, the x86's processor ordering); memcpy at memcpy_mbps.
func (p Params) memConfig() mem.Config {
	cyc := 1000 / p.ClockMHz
	return mem.Config{
		ClockMHz: p.ClockMHz,
		Cache:    mem.CacheConfig{Enabled: true, LineBytes: 32, SizeBytes: 16 << 10, Ways: 4, Coherent: true},
		Costs: mem.Costs{
			LoadCycles:         2,
			MissCycles:         p.LoadNs / cyc,
			UncachedLoadCycles: p.LoadNs / cyc,
			StoreCycles:        p.StoreNs / cyc,
			FenceCycles:        p.LoadNs / cyc,
			AtomicCycles:       p.LoadNs / cyc,
			CopyStartupCycles:  50,
			MemcpyMBps:         p.MemcpyMBps,
			VectorMBps:         p.MemcpyMBps,
		},
	}
}

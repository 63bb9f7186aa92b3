package sp

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/am"
	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the IBM SP model a scenario may override (machine.params).
// Field names are the YAML names; units are in the names. Params is never
// mutated during a run.
type Params struct {
	// ClockMHz is the node processor's clock: "the 120MHz Power2 Super
	// processor" (armci-sp.txt 2.5; hardware.yaml sp.p2sc_clock_MHz).
	ClockMHz float64 `yaml:"clock_mhz"`
	// MemoryMB is a node's main memory: "512MB main memory on each
	// uniprocessor node" (armci-sp.txt 2.5).
	MemoryMB int `yaml:"memory_mb"`
	// MemcpyMBps is a node's memory copy. Not found (hardware.yaml
	// sp.memcpy_MBps is unconfirmed; McCalpin calls Power2 STREAM "very
	// high"): 300 MB/s assumed, a quadword load/store copy at half the
	// 120 MHz clock's memory bus.
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// CopyStartupCycles is a copy's fixed cost (call, loop set-up).
	// Assumed: 60 cycles (0.5 us).
	CopyStartupCycles float64 `yaml:"copy_startup_cycles"`
	// PacketBytes is the payload of a switch packet: "the 1024-byte
	// packets in the IBM SP network" (armci-sp.txt 2.5; hardware.yaml
	// sp.packet_bytes; calibration.yaml sp_armci.packet_bytes).
	PacketBytes int `yaml:"packet_bytes"`
	// PacketHeaderBytes is what a packet carries besides its payload (the
	// switch route and LAPI's header with the handler, counters and
	// addresses). Assumed: 64 bytes; no published format found.
	PacketHeaderBytes int `yaml:"packet_header_bytes"`
	// AdapterMBps is the rate at which a node's TB-3 adapter moves packets
	// (payload and header) to or from the switch. Calibrated by
	// calibration/sp-lapi.yaml to "For the same amount of contiguous data,
	// the rate is 30MB/s" (armci-sp.txt section 1; calibration.yaml
	// sp_armci.contiguous_same_bytes_MBps), measured as a stream of
	// 1600-byte gets from a sleeping node (armci-2x100): 34. Consistent with "A thin node ... is unable to
	// deliver more than about 30 MB/s to or from the SP Switch"
	// (hardware.yaml sp.tb3_node_throughput_MBps), counted in user data:
	// 34 MB/s of 1088-byte packets carry 32 MB/s of data.
	AdapterMBps float64 `yaml:"adapter_mbps"`
	// LinkMBps is a switch link's bandwidth in each direction:
	// hardware.yaml sp.sp_switch_link_MBps_per_direction, 150 (unconfirmed;
	// at least 100). Above the adapter's rate, so it rarely matters.
	LinkMBps float64 `yaml:"link_mbps"`
	// LinkNs is a packet head's delay through one link and chip. The
	// switch's end-to-end hardware latency is "about 500ns" (hardware.yaml
	// sp.hps_hw_latency_ns); per-stage latency is not found: 125 ns per
	// link assumed (4 links on a 2-stage route: 500 ns).
	LinkNs float64 `yaml:"link_ns"`
	// Radix is the switch chips' radix in the direction of travel: 8-port
	// chips (hardware.yaml sp.switch_chip) as 4 x 4 crossbars (sim/net
	// Multistage).
	Radix int `yaml:"radix"`
	// SendOverheadUs is LAPI's processor time to send one message (a
	// LAPI_Put, LAPI_Get or LAPI_Amsend call, or a reply sent by the
	// dispatcher): building its header and handing it to the adapter.
	// ReceiveOverheadUs is LAPI's dispatcher time per incoming message
	// before its handler runs. No figure found (hardware.yaml
	// sp.lapi_latency_us unconfirmed): calibrated by
	// calibration/sp-lapi.yaml, 11 us each (split evenly: assumed), with
	// interrupt_us and adapter_mbps, to the "90 uS latency for the first
	// column and 30 uS for the next ones (pipelining), the transfer rate is
	// 0.5MB/s" of armci-sp.txt section 1 (calibration.yaml
	// sp_armci.lapi_get_first_us and lapi_get_pipelined_us; measured 90.6
	// and 31.1 us). A pipelined get
	// costs its target one receive and one send, its origin one send and
	// one receive; the 30 us emerge from that plus packets, copies and the
	// origin's own interrupts.
	SendOverheadUs    float64 `yaml:"send_overhead_us"`
	ReceiveOverheadUs float64 `yaml:"receive_overhead_us"`
	// Progress is how incoming LAPI messages are handled: "interrupt" (a
	// sleeping node is woken by an interrupt) or "polling" (only when the
	// node's program is inside a LAPI call that polls). "we run the tests
	// ... which were sleeping at that time. This assured that the incoming
	// requests were processed in the interrupt mode" (armci-sp.txt 2.5).
	Progress string `yaml:"progress"`
	// InterruptUs is the processor time to take an interrupt and switch to
	// LAPI's handler thread; InterruptLatencyUs the delay before it runs
	// (not processor time). Only the first request to a sleeping node pays
	// them (the sim/am pipelining). Latency assumed 5 us (AIX interrupt
	// delivery); InterruptUs calibrated to the 90 us first LAPI_Get
	// (armci-sp.txt section 1; calibration.yaml sp_armci.lapi_get_first_us)
	// by calibration/sp-lapi.yaml: 34.5 us; 34 kept, within its tolerance.
	InterruptUs        float64 `yaml:"interrupt_us"`
	InterruptLatencyUs float64 `yaml:"interrupt_latency_us"`
	// CompletionUs is the hand-off of a completion handler to LAPI's
	// completion thread (a thread switch on AIX). Assumed: 10 us.
	CompletionUs float64 `yaml:"completion_us"`
	// PollUs is one look at the adapter's receive FIFO. Assumed: 1 us.
	PollUs float64 `yaml:"poll_us"`
	// MutexUs is a pthread mutex lock or unlock without contention.
	// Assumed: 1 us (a system call-free AIX pthread lock is well under).
	MutexUs float64 `yaml:"mutex_us"`
	// SwitchJitterUs is the largest extra delay a packet may meet in the
	// switch, drawn per packet from the engine's generator: the SP
	// switch offers four routes between a pair of nodes and the adapter
	// spreads packets over them, so a packet may queue behind other
	// traffic on its route that a later packet on another route avoids
	// (Stunkel et al., "The SP2 High-Performance Switch", IBM Systems
	// Journal 34(2), 1995). So packets of different messages may arrive,
	// and be dispatched, out of order: LAPI guarantees no order between
	// messages (LAPI Programming Guide: order is the program's, by
	// LAPI_Fence or a wait on a counter; armci-sp.txt 2.3: "Some systems
	// allow ordering of otherwise unordered operations by providing a
	// fence operation"). Assumed 0: a quiet switch, as in the paper's
	// measurements on a 4-node test (2.5); then packets arrive in the
	// order they reach the adapter link, which is not message order: a
	// later one-packet message can pass between the packets of an earlier
	// long one (stacks/armci's TestOrderingUnderSwitchJitter, 4 KB then 8 B).
	// A packet queued behind one 1088-byte packet at an adapter waits 32
	// us (adapter_mbps): simrun litmus --machine sp uses 40.
	SwitchJitterUs float64 `yaml:"switch_jitter_us"`
	// NetworkModel is how the network carries messages: "units" (the
	// default), packets or units of a message taking the links of their
	// route one after the other, contending link by link (sim/net's unit
	// model); or "flow", each message one flow over its route whose bytes
	// share every link max-min fairly with the other flows' (sim/net's
	// flow model: far fewer events, its error against units stated in
	// docs/fidelity.md). A simulation choice, not a hardware figure.
	// switch_jitter_us (reordering) needs the unit model.
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

// DefaultParams is the model of the PNNL SP of armci-sp.txt 2.5.
func DefaultParams() Params {
	return Params{
		ClockMHz:           120,
		MemoryMB:           512,
		MemcpyMBps:         300,
		CopyStartupCycles:  60,
		PacketBytes:        1024,
		PacketHeaderBytes:  64,
		NetworkModel:       machines.NetworkUnits,
		FlowShareMinBytes:  32,
		AdapterMBps:        34,
		LinkMBps:           150,
		LinkNs:             125,
		Radix:              4,
		SendOverheadUs:     11,
		ReceiveOverheadUs:  11,
		Progress:           "interrupt",
		InterruptUs:        34,
		InterruptLatencyUs: 5,
		CompletionUs:       10,
		PollUs:             1,
		MutexUs:            1,
	}
}

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, 1000, "MHz"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, 1, 100000, "MB/s"),
			machines.Float("copy_startup_cycles", p.CopyStartupCycles, 0, 1e6, "cycles"),
			machines.Float("adapter_mbps", p.AdapterMBps, 0.1, 100000, "MB/s"),
			machines.Float("link_mbps", p.LinkMBps, 0.1, 100000, "MB/s"),
			machines.Float("link_ns", p.LinkNs, 0, 1e6, "ns"),
			machines.Float("send_overhead_us", p.SendOverheadUs, 0, 1e4, "us"),
			machines.Float("receive_overhead_us", p.ReceiveOverheadUs, 0, 1e4, "us"),
			machines.Float("interrupt_us", p.InterruptUs, 0, 1e5, "us"),
			machines.Float("interrupt_latency_us", p.InterruptLatencyUs, 0, 1e5, "us"),
			machines.Float("completion_us", p.CompletionUs, 0, 1e5, "us"),
			machines.Float("poll_us", p.PollUs, 0, 1e4, "us"),
			machines.Float("mutex_us", p.MutexUs, 0, 1e4, "us"),
			machines.Float("switch_jitter_us", p.SwitchJitterUs, 0, 1e6, "us"),
		}, []machines.IntRange{
			machines.Int("memory_mb", p.MemoryMB, 1, 1<<16, "MB"),
			machines.Int("packet_bytes", p.PacketBytes, 16, 1<<20, "bytes"),
			machines.Int("packet_header_bytes", p.PacketHeaderBytes, 0, 4096, "bytes"),
			machines.Int("radix", p.Radix, 2, 64, "ports"),
			machines.Int("flow_share_min_bytes", p.FlowShareMinBytes, 0, 1<<30, "bytes"),
		}
}

// PacketFeatures are the features only the unit network model does
// (machines.Networked).
func (p Params) PacketFeatures() []machines.PacketFeature {
	return []machines.PacketFeature{{Field: "switch_jitter_us", On: p.SwitchJitterUs > 0, What: "switch_jitter_us reorders packets", Off: "0"}}
}

// Validate reports the first parameter out of its plausible range.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	if err := machines.CheckRanges(Name, floats, ints); err != nil {
		return err
	}
	if err := machines.CheckNetworkModel(Name, p.NetworkModel, p.PacketFeatures()...); err != nil {
		return err
	}
	if _, err := am.ParseMode(p.Progress); err != nil {
		return machines.ParamErrorf(Name, "progress", "%v", err)
	}
	return nil
}

func us(v float64) sim.Time { return sim.Micro(v) }

func (p Params) amParams() am.Params {
	mode, _ := am.ParseMode(p.Progress)
	return am.Params{
		Mode:             mode,
		PollCost:         us(p.PollUs),
		DispatchCost:     us(p.ReceiveOverheadUs),
		InterruptLatency: us(p.InterruptLatencyUs),
		InterruptCost:    us(p.InterruptUs),
		CompletionCost:   us(p.CompletionUs),
		// LAPI_Waitcntr drives the dispatcher itself: a waiting program
		// polls (assumed, as LAPI's polling wait).
		WaitPolls: true,
	}
}

func (p Params) memConfig() mem.Config {
	return mem.Config{
		ClockMHz: p.ClockMHz,
		// No cache is modelled: the P2SC's cache is coherent with the
		// adapter's DMA, so it has nothing to show here (assumed).
		Costs: mem.Costs{
			LoadCycles: 1, MissCycles: 1, UncachedLoadCycles: 1, StoreCycles: 1, AtomicCycles: 1,
			CopyStartupCycles: p.CopyStartupCycles,
			MemcpyMBps:        p.MemcpyMBps,
			VectorMBps:        p.MemcpyMBps,
		},
	}
}

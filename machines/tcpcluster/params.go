package tcpcluster

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the Linux cluster model a scenario may override
// (machine.params). Field names are the YAML names; units are in the
// names. Params is never mutated during a run.
//
// papers/mpich2-threads.txt names the systems only as "a single SMP box"
// (Figure 1) and "a Myrinet-connected Linux cluster using the ch3:sock
// channel (TCP) in MPICH2 1.0.5" (Figure 4, section 5.3.2); it gives no
// processor, clock or network figure. The node is therefore a typical
// cluster node of the paper's time, a dual-processor 2.4 GHz Intel Xeon
// (Pentium 4 core) with Myrinet-2000, assumed; every default below says
// where its value comes from. None is calibrated: the paper states no
// point-to-point latency to calibrate to.
type Params struct {
	// ProcsPerNode is how many processes run on each node, one per CPU:
	// 1 puts every process on a node of its own (Figure 4's cluster, its
	// messages over Myrinet); 2 puts two on each SMP box, talking through
	// the kernel's loopback (Figure 1: "a single SMP box").
	ProcsPerNode int `yaml:"procs_per_node"`
	// CPUsPerNode is the node's processors: 2, the dual-processor Xeon
	// nodes of Linux clusters of 2002-2006 (assumed typical). A process
	// and each of its threads run on a CPU of their own (a process's two
	// threads and one process per node, or two single-threaded processes
	// on a node).
	CPUsPerNode int `yaml:"cpus_per_node"`
	// ClockMHz is the processor clock: 2400, a 2.4 GHz Xeon (Intel's Xeon
	// of 2002-2003; assumed typical, see above). MPICH's own software
	// costs are in cycles of it.
	ClockMHz float64 `yaml:"clock_mhz"`
	// MemoryMB is a node's memory: 2048 (assumed: 1-2 GB per node was
	// usual for such clusters).
	MemoryMB int `yaml:"memory_mb"`
	// MemcpyMBps is a node's memory copy, in user space and in the
	// kernel's copies between user memory and socket buffers
	// (copy_from_user, copy_to_user). Assumed 1000 MB/s: the order of
	// STREAM Copy on Pentium 4 Xeon nodes with a 400-533 MHz front-side
	// bus (1-2 GB/s in McCalpin's STREAM results; a copy moves each byte
	// twice over the bus).
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// CopyStartupCycles is a copy's fixed cost (call, alignment). Assumed
	// 100 cycles (42 ns).
	CopyStartupCycles float64 `yaml:"copy_startup_cycles"`
	// AtomicCycles is a locked read-modify-write (the test-and-set of a
	// pthread mutex, an atomic reference count) and FenceCycles a memory
	// fence: assumed 100 cycles each, the order of a locked instruction or
	// mfence on the Pentium 4, which drains its deep pipeline and store
	// buffer (Intel's Pentium 4 optimization manual advises avoiding them
	// in loops for that reason).
	AtomicCycles float64 `yaml:"atomic_cycles"`
	FenceCycles  float64 `yaml:"fence_cycles"`
	// SyscallUs is entering and leaving the kernel for one system call
	// (write, read, poll) besides its work. 0.5 us assumed: the order of
	// lmbench's "null call" latency for Linux on Pentium 4 processors
	// (McVoy and Staelin, "lmbench: Portable tools for performance
	// analysis", USENIX 1996, define the measure; P4 results of Linux
	// 2.4/2.6 are a few tenths of a microsecond).
	SyscallUs float64 `yaml:"syscall_us"`
	// TxSegmentUs is the kernel's protocol processing to send one TCP
	// segment (socket layer, TCP and IP output, the driver's hand-off to
	// the adapter), besides copying its bytes; RxSegmentUs that of
	// receiving one (driver, IP and TCP input, queueing on the socket,
	// waking its reader; the ACK it owes). Assumed 3 and 4 us (7,000 and
	// 10,000 cycles at 2.4 GHz): Foong, Huff, Hum, Patwardhan and Regnier
	// ("TCP performance re-visited", ISPASS 2003) measured Linux's TCP/IP
	// on a 2.4 GHz Pentium 4 at about 1 Hz of CPU per bit/s, much of it
	// per-packet work besides the copies, where Clark, Jacobson, Romkey
	// and Salwen ("An analysis of TCP processing overhead", IEEE
	// Communications 1989) had found TCP itself a few hundred
	// instructions: the rest is the operating system's.
	TxSegmentUs float64 `yaml:"tx_segment_us"`
	RxSegmentUs float64 `yaml:"rx_segment_us"`
	// InterruptUs is the adapter's interrupt for an arriving segment
	// (entry, handler, exit) on the receiving node, before RxSegmentUs.
	// Assumed 2 us on a Pentium 4 (the loopback path has none).
	InterruptUs float64 `yaml:"interrupt_us"`
	// WakeupUs is what a thread sleeping in the kernel (in poll(), or on a
	// futex under a pthread mutex) takes to run again once woken: the
	// wake-up, the scheduler and a context switch. Assumed 3 us: lmbench's
	// context-switch latencies for Linux on Pentium 4 processors are a few
	// microseconds (McVoy and Staelin 1996).
	WakeupUs float64 `yaml:"wakeup_us"`
	// PollFdUs is poll()'s work per descriptor it examines (each of the
	// process's connections, one per other process). Assumed 0.05 us.
	PollFdUs float64 `yaml:"poll_fd_us"`
	// SndBufBytes and RcvBufBytes are a connection's kernel send and
	// receive buffers: Linux 2.6's defaults, tcp_wmem 16384 and tcp_rmem
	// 87380 (Documentation/networking/ip-sysctl.txt). A write takes no
	// more than both leave room for (the bytes in flight, the bytes not
	// yet read).
	SndBufBytes int `yaml:"sndbuf_bytes"`
	RcvBufBytes int `yaml:"rcvbuf_bytes"`
	// MTUBytes is the Myrinet IP interface's MTU: 9000, the jumbo frames
	// Myrinet's IP drivers carry (assumed; Myrinet itself has no packet
	// size limit, Boden et al., "Myrinet: a gigabit-per-second local area
	// network", IEEE Micro 1995). LoopbackMTUBytes is Linux 2.6's lo
	// device MTU, 16436. A segment carries the MTU less 40 bytes of IP
	// and TCP headers.
	MTUBytes         int `yaml:"mtu_bytes"`
	LoopbackMTUBytes int `yaml:"loopback_mtu_bytes"`
	// FrameHeaderBytes is what a segment carries on the wire besides its
	// payload: 40 bytes of IP and TCP headers, 14 of the Ethernet
	// emulation of Myrinet's IP driver and Myrinet's route and type
	// (assumed 64 in all).
	FrameHeaderBytes int `yaml:"frame_header_bytes"`
	// PCIMBps is the adapter's DMA across the node's I/O bus: 528, the
	// peak of 64-bit 66 MHz PCI (PCI Local Bus Specification 2.2), the
	// bus of Myrinet-2000's PCI64 adapters.
	PCIMBps float64 `yaml:"pci_mbps"`
	// NICUs is the Myrinet adapter's firmware time per frame on each side
	// (the LANai processor's DMA set-up, header and CRC handling). Assumed
	// 2.5 us a side: Myricom's GM latency for short messages on
	// Myrinet-2000 PCI64 adapters was about 7 us end to end, of which the
	// wire and the two DMAs take about 2.
	NICUs float64 `yaml:"nic_us"`
	// LinkMBps is a Myrinet-2000 link's data rate in each direction: 2
	// Gb/s, 250 MB/s (Myricom: "Myrinet-2000 links, 2+2 Gb/s").
	LinkMBps float64 `yaml:"link_mbps"`
	// LinkNs is a frame head's delay through a link and the crossbar
	// behind it: assumed 250 ns (Myrinet switches route cut-through in
	// well under a microsecond; Boden et al. 1995).
	LinkNs float64 `yaml:"link_ns"`
	// Radix is the switch's crossbar size: 16, Myrinet-2000's 16-port
	// crossbar chips (Myricom's Xbar16), so up to 16 nodes meet in one
	// crossbar; more nodes go through stages of them (sim/net Multistage).
	Radix int `yaml:"radix"`
}

// DefaultParams is the assumed cluster of dual 2.4 GHz Xeon nodes on
// Myrinet-2000, one process per node.
func DefaultParams() Params {
	return Params{
		ProcsPerNode:      1,
		CPUsPerNode:       2,
		ClockMHz:          2400,
		MemoryMB:          2048,
		MemcpyMBps:        1000,
		CopyStartupCycles: 100,
		AtomicCycles:      100,
		FenceCycles:       100,
		SyscallUs:         0.5,
		TxSegmentUs:       3,
		RxSegmentUs:       4,
		InterruptUs:       2,
		WakeupUs:          3,
		PollFdUs:          0.05,
		SndBufBytes:       16384,
		RcvBufBytes:       87380,
		MTUBytes:          9000,
		LoopbackMTUBytes:  16436,
		FrameHeaderBytes:  64,
		PCIMBps:           528,
		NICUs:             2.5,
		LinkMBps:          250,
		LinkNs:            250,
		Radix:             16,
	}
}

// ipTCPHeader is the IP and TCP headers a segment's MTU includes.
const ipTCPHeader = 40

// Ranges are the parameters' plausible ranges, with their units.
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, 100000, "MHz"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, 1, 1e6, "MB/s"),
			machines.Float("copy_startup_cycles", p.CopyStartupCycles, 0, 1e6, "cycles"),
			machines.Float("atomic_cycles", p.AtomicCycles, 0, 1e6, "cycles"),
			machines.Float("fence_cycles", p.FenceCycles, 0, 1e6, "cycles"),
			machines.Float("syscall_us", p.SyscallUs, 0, 1e4, "us"),
			machines.Float("tx_segment_us", p.TxSegmentUs, 0, 1e4, "us"),
			machines.Float("rx_segment_us", p.RxSegmentUs, 0, 1e4, "us"),
			machines.Float("interrupt_us", p.InterruptUs, 0, 1e4, "us"),
			machines.Float("wakeup_us", p.WakeupUs, 0, 1e5, "us"),
			machines.Float("poll_fd_us", p.PollFdUs, 0, 1e3, "us"),
			machines.Float("pci_mbps", p.PCIMBps, 0.1, 1e6, "MB/s"),
			machines.Float("nic_us", p.NICUs, 0, 1e4, "us"),
			machines.Float("link_mbps", p.LinkMBps, 0.1, 1e6, "MB/s"),
			machines.Float("link_ns", p.LinkNs, 0, 1e6, "ns"),
		}, []machines.IntRange{
			machines.Int("procs_per_node", p.ProcsPerNode, 1, 1024, "processes"),
			machines.Int("cpus_per_node", p.CPUsPerNode, 1, 1024, "CPUs"),
			machines.Int("memory_mb", p.MemoryMB, 1, 1<<20, "MB"),
			machines.Int("sndbuf_bytes", p.SndBufBytes, 1, 1<<30, "bytes"),
			machines.Int("rcvbuf_bytes", p.RcvBufBytes, 1, 1<<30, "bytes"),
			machines.Int("mtu_bytes", p.MTUBytes, ipTCPHeader+1, 1<<20, "bytes"),
			machines.Int("loopback_mtu_bytes", p.LoopbackMTUBytes, ipTCPHeader+1, 1<<20, "bytes"),
			machines.Int("frame_header_bytes", p.FrameHeaderBytes, 0, 4096, "bytes"),
			machines.Int("radix", p.Radix, 2, 64, "ports"),
		}
}

// Validate returns every parameter out of its plausible range.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	err := machines.CheckRanges(Name, floats, ints)
	if err == nil && p.ProcsPerNode > p.CPUsPerNode {
		err = machines.ParamErrorf(Name, "procs_per_node", "%d processes on a node of %d CPUs (cpus_per_node): each process runs on a CPU of its own", p.ProcsPerNode, p.CPUsPerNode)
	}
	return err
}

func us(v float64) sim.Time { return sim.Micro(v) }

func (p Params) memConfig() mem.Config {
	return mem.Config{
		ClockMHz: p.ClockMHz,
		// No cache is modelled: the Xeon's caches are coherent among the
		// node's CPUs and with the adapter's DMA, so they change no
		// outcome here, only costs the copy rate already stands for.
		Costs: mem.Costs{
			LoadCycles: 1, MissCycles: 1, UncachedLoadCycles: 1, StoreCycles: 1,
			AtomicCycles: p.AtomicCycles, FenceCycles: p.FenceCycles,
			CopyStartupCycles: p.CopyStartupCycles,
			MemcpyMBps:        p.MemcpyMBps,
			VectorMBps:        p.MemcpyMBps,
		},
	}
}

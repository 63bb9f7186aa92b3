// Package sci models a Scali PCI-SCI cluster as ScaMPI saw it
// (papers/scampi-sci.txt, sections 1.2, 1.3 and 1.6): dual Pentium II
// PCs whose two processes share the node's memory (an SMP node), each PC
// attached through a PCI-SCI adapter to a 2D torus of SCI ringlets (8 x 12
// for the paper's 96 nodes; any shape).
//
// What the paper says makes the protocol hard is modelled mechanically:
//
//   - Remote writes are posted: the CPU's stores cross the PCI bus into the
//     adapter's stream buffers (pci_write_mbps), which gather them into
//     64-byte SCI packets (or 16-byte ones for a partial block, or two
//     32-byte halves when a buffer is flushed early: gather_split_prob); the
//     CPU goes on when its bytes are in the adapter. Each packet crosses
//     the ringlets (sim/net), is written by the target adapter into the
//     target node's memory (waking the target's pollers) and echoed back.
//   - A node's PCI bus (32-bit, 33 MHz) has two masters: the host bridge,
//     carrying the posted writes of both of the node's CPUs into the
//     adapter (32-byte bursts), and the adapter, writing incoming packets
//     into memory (a burst per packet). Each master's transfers go one
//     after the other; while both request, the arbiter alternates between
//     them burst by burst (pci.go), so a node that sends and receives at
//     once shares 132 MB/s of peak between the two directions, and a
//     packet never waits for the whole of a long posted write.
//   - Packets are reordered (reorder_ns, seeded), so a flag written after
//     data may land first, and a 64-byte block may land in two halves.
//   - Remote reads (Read) and the only atomic, fetch-and-increment-by-one
//     (FetchInc), are round trips through the adapters, even for a word of
//     the caller's own node.
//   - MemBarrier waits until every write the process posted is globally
//     performed (echoed).
//   - StartCheckPoint / EndCheckPoint read the driver's error state and
//     interrupt counter: EndCheckPoint fails if anything since the start
//     may have been hit by an error.
//   - Faults: a CRC error per packet (crc_error_rate) hits the request
//     (the write lands late, after the link layer's retry) or the
//     response (the write has landed and lands again with the retry: a
//     write takes effect twice); a cable pulled out for a period (every
//     adapter's interrupt counter moves; writes with no way round fail);
//     the routing function changed at run time.
//
// SCI shared memory is always allocated at the receiver (AllocSCI names
// the node). Writes within a node do not use the adapter: a stack writes
// its node's memory with the CPU. WriteShared is Write of bytes that never
// change (a payload the memory shares): the packets carry them and the
// target shares them rather than copying them, with Write's timing.
//
// Calibrated parameters (the rest come from hardware.yaml, the paper's
// text, or are assumptions stated at their field), fitted together by
// simrun calibrate from calibration/sci-scampi.yaml:
//
//	memcpy_mbps     134  <- 130 MB/s intra-node ping-pong bandwidth at 1 MB (1.6)
//	pci_write_mbps   87  <- 76 MB/s inter-node ping-pong bandwidth at 1 MB (1.6)
//	adapter_ns     1780  <- 9.4 us inter-node ping-pong latency at 0 bytes (1.6)
//
// (ScaMPI's own software cost, stacks/scampi send_cycles and recv_cycles
// 677 each, is fitted to the 4.5 us intra-node latency by
// calibration/sci-scampi.yaml as well.) The barrier
// and all-to-all tables of the paper are held out: nothing is tuned to
// them.
//
// Layer: a machine: imports machines, sim, sim/mem and sim/net. Stacks
// reach it through the machines interfaces only; the registry is the one
// package that imports it by name.
package sci

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Name is the machine's name in scenarios.
const Name = "sci"

// Traffic classes: requests (writes, read and fetch-and-increment
// requests) and responses (echoes, read data, fetch-and-increment values).
const (
	classRequest  = 0
	classResponse = 1
	classes       = 2
)

// Machine is a Scali cluster partition.
type Machine struct {
	eng    *sim.Engine
	params Params
	nodes  []*node
	procs  []*proc
	torus  *net.RingTorus // nil for a single ringlet
	ring   *net.Ring
	net    *net.Network

	pciRate                               float64
	pciCycle                              float64 // ns per PCI clock
	access, mapCost, checkpoint, crcRetry sim.Time
	stats                                 Stats
	ops                                   []*op
	// routes are the routes found so far, [(a*nodes+b)*classes+class],
	// when they never change (no faults of links or routing); else nil.
	routes  [][]*net.Link
	putBufs [][]byte // free buffers for Put's source bytes
}

// Stats counts what the adapters and the fabric did.
type Stats struct {
	Packets        uint64 // SCI request packets sent
	Messages       uint64 // network messages (grains of packets)
	WriteBytes     uint64 // bytes of remote writes
	CRCRequest     uint64 // packets whose request was hit by a CRC error (landed late)
	CRCResponse    uint64 // packets whose response was hit (landed twice)
	FailedWrites   uint64 // writes (or their echoes) lost on a pulled cable or finding no route (checkpoints fail)
	Interrupts     uint64 // cable and error interrupts raised at adapters
	CheckpointFail uint64 // EndCheckPoint calls that failed
	Reads          uint64 // remote read round trips
	FetchIncs      uint64
}

type node struct {
	id     int
	mem    *mem.Memory
	errors uint64 // the driver's error state + interrupt counter
	// pci is the node's PCI bus: the CPUs' posted writes into the adapter
	// (the host bridge's bursts) and the adapter's DMA of incoming packets
	// into memory (its bursts), alternating burst by burst while both
	// request (pci.go).
	pci    *pciBus
	inject [classes]*net.Link
	eject  [classes]*net.Link
}

type proc struct {
	id, node    int
	cpu         *mem.CPU
	outstanding int
	barrier     sim.WaitQueue
	sent        uint64 // bytes this process wrote through the adapter
}

// New builds a cluster of procs processes.
func New(eng *sim.Engine, procs int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	nodes := (procs + params.ProcsPerNode - 1) / params.ProcsPerNode
	if procs < 1 || nodes > params.TorusW*params.TorusH {
		return nil, machines.ParamErrorf(Name, "torus_w", "%d processes at procs_per_node %d need %d nodes; the %dx%d torus has %d",
			procs, params.ProcsPerNode, nodes, params.TorusW, params.TorusH, params.TorusW*params.TorusH)
	}
	if params.UnplugAtUs > 0 && params.UnplugNode >= params.TorusW*params.TorusH {
		return nil, machines.ParamErrorf(Name, "unplug_node", "node %d is not in the %dx%d torus", params.UnplugNode, params.TorusW, params.TorusH)
	}
	ns := func(v float64) sim.Time { return sim.Time(v * float64(sim.Nanosecond)) }
	m := &Machine{eng: eng, params: params,
		pciRate: params.PCIWriteMBps * 1e6, pciCycle: 1000 / params.PCIMHz, access: ns(params.ReadAccessNs),
		mapCost: ns(params.MapUs * 1000), checkpoint: ns(params.CheckpointNs), crcRetry: ns(params.CRCRetryNs),
	}
	var err error
	if params.TorusH == 1 {
		m.ring, err = net.NewRing("sci.ring", 1, params.TorusW, ns(params.HopNs), params.LinkMBps)
	} else {
		m.torus, err = net.NewRingTorus("sci", params.TorusW, params.TorusH, ns(params.HopNs), params.LinkMBps)
	}
	if err != nil {
		return nil, machines.ParamErrorf(Name, "torus_w", "%v", err)
	}
	// A packet caught on a cable when it is pulled is lost, not resent by
	// the fabric: SCI's link layer retries a packet whose echo reports a
	// CRC error (hardware.yaml sci.reliability), but a ringlet has no other
	// way round, and the requester learns of the loss as an error: the
	// driver's error state moves, the writer's checkpoint fails and
	// Figure 1.2's loop writes again (scampi-sci.txt 1.3.2: "If the
	// checkpoint state changes during a data transfer, the data has to be
	// retransmitted").
	m.net, err = net.New(eng, router{m}, net.Config{MTU: 64, Header: params.PacketHeaderBytes, Jitter: ns(params.ReorderNs), LoseOnLinkDown: true, Flow: params.NetworkModel == machines.NetworkFlow, FlowShareMin: params.FlowShareMinBytes})
	if err != nil {
		return nil, fmt.Errorf("sci: %w", err)
	}
	cfg := params.memConfig()
	for i := 0; i < nodes; i++ {
		x := &node{id: i, mem: mem.NewMemory(fmt.Sprintf("node%d", i), params.MemoryMB<<20), pci: newPCIBus(eng)}
		for c := 0; c < classes; c++ {
			x.inject[c] = net.NewLink(fmt.Sprintf("node%d.adapter.out.c%d", i, c), ns(params.AdapterNs), params.LinkMBps)
			x.eject[c] = net.NewLink(fmt.Sprintf("node%d.adapter.in.c%d", i, c), ns(params.AdapterNs), params.LinkMBps)
		}
		m.nodes = append(m.nodes, x)
	}
	for i := 0; i < procs; i++ {
		x := &proc{id: i, node: i / params.ProcsPerNode}
		x.cpu, err = mem.NewCPU(eng, fmt.Sprintf("p%d", i), m.nodes[x.node].mem, cfg)
		if err != nil {
			return nil, fmt.Errorf("sci: %w", err)
		}
		m.procs = append(m.procs, x)
	}
	if params.UnplugAtUs == 0 && params.RerouteAtUs == 0 {
		m.routes = make([][]*net.Link, nodes*nodes*classes)
	}
	m.scheduleFaults()
	return m, nil
}

// scheduleFaults arms the cable pull and the routing change of the params.
func (m *Machine) scheduleFaults() {
	p := m.params
	us := func(v float64) sim.Time { return sim.Time(v * float64(sim.Microsecond)) }
	if p.UnplugAtUs > 0 {
		l := m.cable(p.UnplugNode)
		at, d := us(p.UnplugAtUs), us(p.UnplugForUs)
		m.net.LinkDown(l, at, d)
		m.eng.At(at, m.interruptAll)
		if d > 0 {
			m.eng.At(at+d, m.interruptAll)
		}
	}
	if p.RerouteAtUs > 0 && m.torus != nil {
		m.eng.At(us(p.RerouteAtUs), func() { m.torus.SetOrder(net.YFirst) })
	}
}

// cable is the output link of node n on its horizontal ringlet.
func (m *Machine) cable(n int) *net.Link {
	if m.ring != nil {
		return m.ring.Out(n % m.params.TorusW)
	}
	return m.torus.Row(n / m.params.TorusW).Out(n % m.params.TorusW)
}

// interruptAll: a link changed state; every adapter raises an interrupt,
// which moves every node's checkpoint state.
func (m *Machine) interruptAll() {
	for _, n := range m.nodes {
		n.errors++
		m.stats.Interrupts++
	}
}

// Name is "sci".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of processes.
func (m *Machine) Procs() int { return len(m.procs) }

// Params is the machine's model.
func (m *Machine) Params() Params { return m.params }

// Nodes is the number of nodes in use.
func (m *Machine) Nodes() int { return len(m.nodes) }

// NodeOf is the node process pe runs on.
func (m *Machine) NodeOf(pe int) int { return m.procs[pe].node }

// CPU is process pe's processor (on its node's memory).
func (m *Machine) CPU(pe int) *mem.CPU { return m.procs[pe].cpu }

// NodeMemory is node n's memory, shared by its processes.
func (m *Machine) NodeMemory(n int) *mem.Memory { return m.nodes[n].mem }

// MemoryBytes is a node's memory (machines.Memory).
func (m *Machine) MemoryBytes() int { return m.params.MemoryMB << 20 }

// Stats are the adapters' and fabric's counts so far.
func (m *Machine) Stats() Stats { return m.stats }

// NetStats are the network's counts (messages, units, resends).
func (m *Machine) NetStats() net.Stats { return m.net.Stats() }

// SentBytes is the number of bytes process pe has written through its
// adapter.
func (m *Machine) SentBytes(pe int) uint64 { return m.procs[pe].sent }

// Alloc allocates n bytes of process pe's private memory (in its node's
// memory), 64-byte aligned.
func (m *Machine) Alloc(pe int, name string, n int) (mem.Region, error) {
	return m.alloc(m.procs[pe].node, fmt.Sprintf("p%d.%s", pe, name), n)
}

func (m *Machine) alloc(nd int, name string, n int) (mem.Region, error) {
	if n < 0 {
		return mem.Region{}, fmt.Errorf("sci: node %d: %q: negative size %d", nd, name, n)
	}
	s, err := m.nodes[nd].mem.Alloc(name, (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("sci: %w", err)
	}
	return mem.Region{Mem: m.nodes[nd].mem, Addr: s.Base, Len: n}, nil
}

// AllocSCI creates an SCI shared memory segment of n bytes at node nd (the
// receiver: "The SCI shared memory is for performance reasons always
// physically located on the receiver side", 1.3) and maps it; p, when not
// nil, pays the driver's cost (map_us).
func (m *Machine) AllocSCI(p *sim.Proc, nd int, name string, n int) (mem.Region, error) {
	if p != nil {
		p.Sleep(m.mapCost)
	}
	return m.alloc(nd, "sci."+name, n)
}

// router routes between nodes: the source adapter, the ringlets, the
// target adapter; a node's own adapter loops back.
type router struct{ m *Machine }

// Route appends the route from node a to node b for class. On a machine
// whose routes never change (no cable pulled, no routing change: every
// link stays up and the order of the rings stays the same) a route, once
// found, is kept and copied from then on: the network asks for one per
// message, and the walk round the rings cost more than the message's
// first hop.
func (r router) Route(route []*net.Link, a, b, class int) ([]*net.Link, error) {
	m := r.m
	if m.routes == nil {
		return r.find(route, a, b, class)
	}
	k := (a*len(m.nodes)+b)*classes + class
	if rt := m.routes[k]; rt != nil {
		return append(route, rt...), nil
	}
	base := len(route)
	route, err := r.find(route, a, b, class)
	if err == nil {
		m.routes[k] = append([]*net.Link(nil), route[base:]...)
	}
	return route, err
}

// find is Route without the kept routes.
func (r router) find(route []*net.Link, a, b, class int) ([]*net.Link, error) {
	na, nb := r.m.nodes[a], r.m.nodes[b]
	route = append(route, na.inject[class])
	if a != b {
		var err error
		if r.m.ring != nil {
			route, err = r.m.ring.Route(route, a, b, class)
		} else {
			route, err = r.m.torus.Route(route, a, b, class)
		}
		if err != nil {
			return route, err
		}
	}
	return append(route, nb.eject[class]), nil
}

// opKind is what a network operation is.
type opKind uint8

const (
	opWrite opKind = iota
	opEcho
	opReadReq
	opReadData
	opFIReq
	opFIReply
)

// op is one network message of an operation and its handler.
type op struct {
	m    *Machine
	kind opKind
	pe   int // issuing process
	to   int // target node
	dst  mem.Addr
	// buf is the operation's bytes: a write's payload, a read's data. It
	// is own (the op's storage, reused) or, for a write of bytes that
	// never change (WriteShared), a slice of them: shared, never written
	// here, landed with mem.Memory.WriteShared.
	buf     []byte
	own     []byte
	shared  bool
	packets int
	proc    *sim.Proc // blocked issuer, if any
	value   uint64
	writeFn func()
	replyFn func()
	dmaFn   func()
	// late and twice are the packets hit by CRC errors on their request
	// (landing after the retry) and on their response (landing twice).
	late, twice []int
}

func (m *Machine) newOp(k opKind, pe, to int) *op {
	var o *op
	if n := len(m.ops); n > 0 {
		o = m.ops[n-1]
		m.ops = m.ops[:n-1]
	} else {
		o = &op{m: m}
		o.writeFn = o.retried
		o.replyFn = o.reply
		o.dmaFn = o.dmaDone
	}
	o.kind, o.pe, o.to, o.proc = k, pe, to, nil
	o.buf, o.shared = o.own[:0], false
	return o
}

func (m *Machine) freeOp(o *op) {
	o.proc = nil
	m.ops = append(m.ops, o)
}

// Write posts a remote write of data to address dst of node nd's memory
// from process pe: the CPU's stores cross the PCI bus into the adapter
// (pci_write_mbps), which sends the bytes as SCI packets; Write returns
// when the last byte is in the adapter (data may be reused). The bytes
// land later, possibly out of order; MemBarrier waits for them.
func (m *Machine) Write(p *sim.Proc, pe, nd int, dst mem.Addr, data []byte) {
	m.write(p, pe, nd, dst, data, false)
}

// WriteShared is Write of bytes that never change (a slice
// mem.Memory.SharedView returned, or a payload stream's window): the
// adapter's packets carry slices of data rather than copies, and the
// target memory shares them where it can (mem.Memory.WriteShared), so a
// payload crossing the network is not copied for each hop it takes.
// Timing, packets and faults are Write's.
func (m *Machine) WriteShared(p *sim.Proc, pe, nd int, dst mem.Addr, data []byte) {
	m.write(p, pe, nd, dst, data, true)
}

// write is Write, of shared bytes if shared.
func (m *Machine) write(p *sim.Proc, pe, nd int, dst mem.Addr, data []byte, shared bool) {
	x := m.procs[pe]
	if nd < 0 || nd >= len(m.nodes) {
		panic(fmt.Sprintf("sci: write by process %d to node %d of %d (a bug in the calling stack)", pe, nd, len(m.nodes)))
	}
	x.sent += uint64(len(data))
	m.stats.WriteBytes += uint64(len(data))
	for off := 0; off < len(data); {
		a := dst + mem.Addr(off)
		blockEnd := (int(a) | 63) + 1 - int(a) // bytes to the end of the 64-byte block
		n := min(blockEnd, len(data)-off)
		switch {
		case n == 64 && int(a)&63 == 0:
			// Full blocks: gathered into 64-byte packets, a grain of
			// consecutive full blocks crossing as one message, unless a
			// stream buffer is flushed half full.
			if m.params.GatherSplitProb > 0 && m.eng.Rand().Float64() < m.params.GatherSplitProb {
				m.post(p, x, nd, a, data[off:off+32], 1, shared)
				m.post(p, x, nd, a+32, data[off+32:off+64], 1, shared)
				off += 64
				continue
			}
			k := 64
			for k+64 <= m.params.GrainBytes && off+k+64 <= len(data) {
				if m.params.GatherSplitProb > 0 && m.eng.Rand().Float64() < m.params.GatherSplitProb {
					break
				}
				k += 64
			}
			m.post(p, x, nd, a, data[off:off+k], k/64, shared)
			off += k
		default:
			// A partial block leaves as 16-byte packets.
			for n > 0 {
				s := min(16-int(a)&15, n)
				m.post(p, x, nd, a, data[off:off+s], 1, shared)
				a += mem.Addr(s)
				off += s
				n -= s
			}
		}
	}
}

// WriteWord posts a remote write of an 8-byte little-endian word.
func (m *Machine) WriteWord(p *sim.Proc, pe, nd int, dst mem.Addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.Write(p, pe, nd, dst, b[:])
}

// post sends one message of packets packets. The CPU's stores first
// cross the node's PCI bus into the adapter's stream buffers
// (pci_write_mbps, 32 bytes a burst; the host bridge's transfers one after
// the other, both CPUs', alternating burst by burst with the adapter's
// DMA of incoming packets), and p goes on when its bytes are in the
// adapter; then the adapter sends them
// at the link's rate (store and forward: a packet leaves when gathered).
// The op carries a copy of data, or data itself when shared (it never
// changes).
func (m *Machine) post(p *sim.Proc, x *proc, nd int, dst mem.Addr, data []byte, packets int, shared bool) {
	// The Pentium II writes at most one 32-byte write-combining line per
	// PCI burst.
	if work := sim.TransferTime(len(data), m.pciRate); work > 0 {
		m.nodes[x.node].pci.request(hostBridge, work, sim.TransferTime(min(len(data), 32), m.pciRate), nil, p)
		p.Block("sci: posting writes across the PCI bus")
	}
	o := m.newOp(opWrite, x.id, nd)
	o.dst, o.packets = dst, packets
	if shared {
		o.buf, o.shared = data, true
	} else {
		o.own = append(o.own[:0], data...)
		o.buf = o.own
	}
	x.outstanding++
	m.stats.Packets += uint64(packets)
	m.stats.Messages++
	m.net.Send(net.Msg{Src: x.node, Dst: nd, Class: classRequest, Bytes: len(data)}, o)
}

// Sent: the adapter has sent the packets; nothing to do.
func (o *op) Sent(*net.Message) {}

// IgnoresSent: the network spends no event on Sent (net.QuietSender).
func (o *op) IgnoresSent() {}

// Arrived: the whole message is written on Delivered.
func (o *op) Arrived(*net.Message, int, int) {}

// Delivered moves the operation on.
func (o *op) Delivered(*net.Message) {
	m := o.m
	switch o.kind {
	case opWrite:
		m.dma(o)
	case opEcho:
		x := m.procs[o.pe]
		x.outstanding--
		if x.outstanding == 0 {
			x.barrier.WakeAll()
		}
		m.freeOp(o)
	case opReadReq, opFIReq:
		// The target adapter reads (and for fetch-and-increment writes)
		// host memory across the target's PCI bus.
		if m.access > 0 {
			m.nodes[o.to].pci.request(adapterDMA, m.access, m.access, o.replyFn, nil)
		} else {
			o.reply()
		}
	case opReadData, opFIReply:
		o.proc.Wake()
	}
}

// dma: a write's packets reached the target adapter, which writes them
// into host memory across the target node's PCI bus, one burst per packet
// (pci_mhz, 4 bytes a clock, pci_burst_overhead_cycles per burst), after
// its earlier packets and alternating burst by burst with the node's CPUs'
// posted writes. The adapter starts as the grain's first packet arrives
// (the grain crossed its last link in s), so the bus, not the simulation
// grain, sets the pace: what the bus would have carried of the grain
// since then is done already, all but the last packet's burst. The bytes
// are in memory when the bus has carried the last packet.
func (m *Machine) dma(o *op) {
	nn := m.nodes[o.to]
	n := len(o.buf)
	burst := func(bytes, packets int) sim.Time {
		cycles := float64((bytes+3)/4) + float64(packets)*m.params.PCIBurstOverheadCycles
		return sim.Time(cycles * m.pciCycle * float64(sim.Nanosecond))
	}
	last := burst(min(n, 64), 1)
	s := sim.TransferTime(n+o.packets*m.params.PacketHeaderBytes, m.params.LinkMBps*1e6)
	nn.pci.requestSince(adapterDMA, burst(n, o.packets), last, m.eng.Now()-s, last, o.dmaFn, nil)
}

func (o *op) dmaDone() { o.m.arriveWrite(o) }

// arriveWrite: a write's packets are in the target's memory path. Each
// packet may be hit by a CRC error on its request (the link layer's retry
// lands that packet late) or on its response (it has landed, and the
// retry lands it again); either moves the writer node's error state. The
// other packets of the grain land at once: faults act per 64-byte packet,
// not per simulation grain. The echo returns after the retries.
func (m *Machine) arriveWrite(o *op) {
	o.late, o.twice = o.late[:0], o.twice[:0]
	if r := m.params.CRCErrorRate; r > 0 {
		for i := 0; i < o.packets; i++ {
			if m.eng.Rand().Float64() < r {
				if m.eng.Rand().IntN(2) == 0 {
					o.late = append(o.late, i)
					m.stats.CRCRequest++
				} else {
					o.twice = append(o.twice, i)
					m.stats.CRCResponse++
				}
			}
		}
	}
	if len(o.late) == 0 && len(o.twice) == 0 {
		o.land()
		return
	}
	m.nodes[m.procs[o.pe].node].errors++
	// Every packet whose request got through lands now.
	from := 0
	for _, i := range o.late {
		a, _ := o.packet(i)
		o.writeRange(from, a)
		_, from = o.packet(i)
	}
	o.writeRange(from, len(o.buf))
	m.eng.After(m.crcRetry, o.writeFn)
}

// packet is the byte range of packet i of the operation: a grain of full
// 64-byte packets, or one packet of any size.
func (o *op) packet(i int) (int, int) {
	if o.packets == 1 {
		return 0, len(o.buf)
	}
	return 64 * i, min(64*i+64, len(o.buf))
}

func (o *op) writeRange(a, b int) {
	if a < b {
		o.store(o.dst+mem.Addr(a), o.buf[a:b])
	}
}

// store makes b visible at a in the target's memory: shared, for a
// WriteShared's bytes.
func (o *op) store(a mem.Addr, b []byte) {
	if t := o.m.nodes[o.to].mem; o.shared {
		t.WriteShared(a, b)
	} else {
		t.Write(a, b)
	}
}

// retried: the link layer's retries land the packets hit by CRC errors
// (for the first time, or again), and the echo returns.
func (o *op) retried() {
	for _, hits := range [2][]int{o.late, o.twice} {
		for _, i := range hits {
			o.writeRange(o.packet(i))
		}
	}
	o.echo()
}

func (o *op) write() { o.store(o.dst, o.buf) }

// land writes the bytes (the last time) and sends the echo back.
func (o *op) land() {
	o.write()
	o.echo()
}

func (o *op) echo() {
	o.kind = opEcho
	o.buf, o.shared = o.own[:0], false
	o.m.net.Send(net.Msg{Src: o.to, Dst: o.m.procs[o.pe].node, Class: classResponse}, o)
}

// reply: the target adapter has accessed memory; the response returns.
func (o *op) reply() {
	m := o.m
	t := m.nodes[o.to].mem
	switch o.kind {
	case opReadReq:
		t.Read(o.dst, o.buf)
		o.kind = opReadData
	case opFIReq:
		o.value = t.Load64(o.dst)
		t.Store64(o.dst, o.value+1)
		o.kind = opFIReply
	}
	m.net.Send(net.Msg{Src: o.to, Dst: m.procs[o.pe].node, Class: classResponse, Bytes: len(o.buf)}, o)
}

// Failed: a message was lost on a pulled cable or found no route (a
// cable out and no way round). A write (or its echo) is lost and the
// writer's node records the error, so its checkpoint fails; a read or an
// atomic stops the run.
func (o *op) Failed(_ *net.Message, err error) {
	m := o.m
	switch o.kind {
	case opWrite, opEcho:
		m.stats.FailedWrites++
		m.nodes[m.procs[o.pe].node].errors++
		x := m.procs[o.pe]
		x.outstanding--
		if x.outstanding == 0 {
			x.barrier.WakeAll()
		}
		m.freeOp(o)
	default:
		m.eng.Fail(fmt.Errorf("sci: process %d, node %d: %w", o.pe, o.to, err))
	}
}

// MemBarrier waits until every write process pe posted is globally
// performed (its echo is back, or it failed) ("ensuring that all
// previously issued write-requests have been globally performed", 1.5.1).
func (m *Machine) MemBarrier(p *sim.Proc, pe int) {
	x := m.procs[pe]
	for x.outstanding > 0 {
		x.barrier.Wait(p, fmt.Sprintf("MemBarrier: %d posted writes not yet performed", x.outstanding))
	}
}

// Checkpoint is a token of StartCheckPoint.
type Checkpoint = uint64

// StartCheckPoint reads the driver's error state and interrupt counter
// (1.3.2).
func (m *Machine) StartCheckPoint(p *sim.Proc, pe int) Checkpoint {
	p.Sleep(m.checkpoint)
	return m.nodes[m.procs[pe].node].errors
}

// EndCheckPoint reports whether nothing since tok may have been hit by an
// error. Call MemBarrier first: writes still outstanding are not covered.
func (m *Machine) EndCheckPoint(p *sim.Proc, pe int, tok Checkpoint) bool {
	p.Sleep(m.checkpoint)
	ok := m.nodes[m.procs[pe].node].errors == tok
	if !ok {
		m.stats.CheckpointFail++
	}
	return ok
}

// Read reads n bytes at src in node nd's memory into a new slice: a round
// trip through both adapters per 64-byte block, one at a time (the CPU
// stalls on a PCI read).
func (m *Machine) Read(p *sim.Proc, pe, nd int, src mem.Addr, n int) []byte {
	out := make([]byte, 0, n)
	x := m.procs[pe]
	for off := 0; off < n; {
		k := min(64-int(src+mem.Addr(off))&63, n-off)
		o := m.newOp(opReadReq, pe, nd)
		o.dst = src + mem.Addr(off)
		o.own = append(o.own[:0], make([]byte, k)...)
		o.buf = o.own
		o.proc = p
		m.stats.Reads++
		m.net.Send(net.Msg{Src: x.node, Dst: nd, Class: classRequest}, o)
		p.Block("sci remote read: waiting for the data")
		out = append(out, o.buf...)
		m.freeOp(o)
		off += k
	}
	return out
}

// FetchInc atomically increments the 8-byte word at a in node nd's memory
// by one and returns its previous value: the only atomic of the PCI-SCI
// adapter, "fetch-and-increment-by-one" (1.3.1), performed by the target
// adapter, so every access goes through the adapters, "remote accesses
// from a performance perspective" even when nd is the caller's node.
func (m *Machine) FetchInc(p *sim.Proc, pe, nd int, a mem.Addr) uint64 {
	x := m.procs[pe]
	o := m.newOp(opFIReq, pe, nd)
	o.dst = a
	o.proc = p
	m.stats.FetchIncs++
	m.net.Send(net.Msg{Src: x.node, Dst: nd, Class: classRequest}, o)
	p.Block("sci fetch-and-increment: waiting for the value")
	v := o.value
	m.freeOp(o)
	return v
}

// Counters are the fault and traffic counts by name (for workloads'
// rows).
func (m *Machine) Counters() ([]string, []uint64) {
	s := m.stats
	return []string{"sci_packets", "crc_request_hits", "crc_response_hits_written_twice", "failed_writes", "interrupts", "checkpoint_failures"},
		[]uint64{s.Packets, s.CRCRequest, s.CRCResponse, s.FailedWrites, s.Interrupts, s.CheckpointFail}
}

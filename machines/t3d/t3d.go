// Package t3d models the Cray T3D as ACLMPL saw it (papers/aclmpl-t3d.txt):
// processing elements (PEs), two per router node, on a 3D torus with
// dimension-order routing; SHMEM put (faster) and get, with quiet waiting
// for every outstanding put to be acknowledged; one fetch-and-increment
// register per PE, atomic and reached over the network; data caches that
// remote writes do not update (a spinning PE must load uncached or
// invalidate); memcpy at about 170 MB/s; and the hardware barrier network
// the benchmark harness uses.
//
// Each PE has its own mem.Memory and mem.CPU. A put snapshots the sender's
// bytes and sends them through sim/net: its head takes each link of its
// route when it reaches it, wormhole fashion, so traffic that meets on a
// link contends in simulated time. As its bytes arrive they are written into
// the remote Memory with Memory.Write, which wakes remote spinners but
// leaves the remote cache stale; then the target's acknowledgement, get
// requests and data, and fetch-and-increment requests and replies all cross
// the network as packets of their own (responses on their own virtual
// channels, so a response never waits behind a request's buffer, but on
// the same wires: requests and responses share each torus channel's and
// each PE port's bandwidth, taking turns unit by unit). Messages cross
// whole by default (the fast path) or packet by packet (packet_mode).
//
// Calibrated parameters (everything else comes from hardware.yaml, the
// paper's text, or is an assumption stated at its field), each fitted by
// simrun calibrate from its file:
//
//	put_startup_ns  790  <- 4.5 us one-word synchronous ACLMPL latency between neighbours (4.1): calibration/t3d-put-startup.yaml
//	put_mbps        125  <- "greater than 100MB/sec for one-to-all and all-to-one" (4.1): calibration/t3d-put-rate.yaml
//
// Parameters are checked when they are decoded and when the machine is
// built: a value that is not a finite number in its plausible range, or a
// torus shape that does not hold the PEs, is an error naming its YAML field
// (with file and line when it comes from a scenario), never a silently
// wrong result.
//
// Layer: a machine: imports machines, sim, sim/mem and sim/net. Stacks
// reach it through the machines interfaces only; the registry is the one
// package that imports it by name.
package t3d

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Name is the machine's name in scenarios.
const Name = "t3d"

// MaxPEs is the largest T3D configuration: "32-2048" PEs (hardware.yaml
// t3d.pe_count_range). It is max_pes's default; a what-if study of a
// larger T3D-like machine raises max_pes, up to MaxWhatIfPEs.
const MaxPEs = 2048

// MaxWhatIfPEs is the largest max_pes: 4,194,304 PEs, a torus of 2,097,152
// nodes. Per-PE state is built when first used (links, cache lines, memory
// pages), so a run costs memory in proportion to the PEs and links its
// traffic touches; the bound keeps a typo from asking for more.
const MaxWhatIfPEs = 1 << 22

// Machine is a T3D partition.
type Machine struct {
	eng    *sim.Engine
	params Params
	pes    []*pe
	torus  *net.Torus
	// portNames names the PEs' ports (portName); port is their kind.
	portNames *net.Names
	port      *net.LinkKind
	// portSlab holds the PEs' ports in blocks, built as PEs first use
	// their ports (ports): one allocation per block, not six per PE.
	portSlab [][]portSet
	portUsed int

	net *net.Network

	putStartup, hop, fiAccess, barrierDelay sim.Time
	ni                                      sim.Time // interface_ns
	putRate, getRate                        float64

	ops     []*op // pool
	swaps   []*swapOp
	bufs    [40][][]byte
	barrier struct {
		arrived int
		waiting sim.WaitQueue
		reason  string // the wait's reason, formatted on first use, not per arrival
	}
}

// pe is one processing element.
type pe struct {
	m    *Machine
	id   int32 // < MaxWhatIfPEs
	node int32
	// inject and eject are the PE's one port to its router and one port
	// from it, each a physical channel whose bandwidth the traffic classes
	// share, with one virtual channel per class; built by ports when the
	// PE first sends or receives.
	inject [classes]*net.Link
	eject  [classes]*net.Link
	fi     uint64 // the fetch-and-increment register
	// fiq is the register's queue, built when the first request reaches
	// it (a million PEs, few of them registers anyone uses).
	fiq     *fiQueue
	unacked int32         // puts issued and not yet acknowledged
	quiet   sim.WaitQueue // PEs in Quiet
	puts    uint64
	recv    uint64 // bytes delivered into this PE's memory by puts
	// mem and cpu are the PE's memory and processor: kept in the PE, so
	// that a partition's PEs, memories and CPUs are one allocation and a
	// PE's state is together in the host's memory.
	mem mem.Memory
	cpu mem.CPU
}

// fiQueue holds the fetch-and-increment requests that reached a PE's
// register, the first being served.
type fiQueue struct {
	ops    []*op
	serve  func() // the PE's fiServe, bound once
	served uint64
}

// New builds a partition of pes PEs.
func New(eng *sim.Engine, pes int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if pes < 1 || pes > params.MaxPEs {
		if params.MaxPEs == MaxPEs {
			return nil, fmt.Errorf("t3d: %d PEs requested; a partition has 1 to %d PEs (hardware.yaml t3d.pe_count_range); for a larger what-if T3D-like machine raise machine.params.max_pes (at most %d)", pes, MaxPEs, MaxWhatIfPEs)
		}
		return nil, fmt.Errorf("t3d: %d PEs requested; max_pes is %d (at most %d)", pes, params.MaxPEs, MaxWhatIfPEs)
	}
	nodes := (pes + params.PEsPerNode - 1) / params.PEsPerNode
	dims := net.Shape3D(nodes)
	if len(params.TorusNodes) == 3 {
		dims = [3]int{params.TorusNodes[0], params.TorusNodes[1], params.TorusNodes[2]}
		if dims[0]*dims[1]*dims[2] < nodes {
			return nil, paramErrorf("torus_nodes", "%v holds %d nodes, %d PEs at pes_per_node %d need %d", params.TorusNodes, dims[0]*dims[1]*dims[2], pes, params.PEsPerNode, nodes)
		}
	}
	// Validate bounds every value, so these conversions cannot fail; they
	// are checked anyway, so a wider range cannot overflow silently.
	var times [5]sim.Time
	for i, f := range []struct {
		name string
		ns   float64
	}{
		{"put_startup_ns", params.PutStartupNs}, {"hop_ns", params.HopNs},
		{"fetch_inc_ns", params.FetchIncNs}, {"barrier_ns", params.BarrierNs},
		{"interface_ns", params.InterfaceNs},
	} {
		t, err := sim.FromFloat(f.ns, sim.Nanosecond)
		if err != nil {
			return nil, paramErrorf(f.name, "%v", err)
		}
		times[i] = t
	}
	m := &Machine{
		eng: eng, params: params,
		putStartup:   times[0],
		hop:          times[1],
		fiAccess:     times[2],
		barrierDelay: times[3],
		ni:           times[4],
		putRate:      params.PutMBps * 1e6,
		getRate:      params.GetMBps * 1e6,
	}
	m.portNames = net.NewNames(portName)
	m.port = net.NewLinkKind(m.portNames, m.ni, params.LinkMBps)
	var err error
	m.torus, err = net.NewTorusClasses("t3d", dims, m.hop, params.LinkMBps, classes)
	if err != nil {
		return nil, fmt.Errorf("t3d: %w", err)
	}
	m.net, err = net.New(eng, router{m}, net.Config{
		MTU: params.PacketPayloadBytes, Header: params.PacketHeaderBytes, Packets: params.PacketMode,
		Unit: params.UnitBytes, Flow: params.NetworkModel == machines.NetworkFlow, FlowShareMin: params.FlowShareMinBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("t3d: %w", err)
	}
	cfg := params.memConfig()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("t3d: %w", err)
	}
	m.pes = make([]*pe, pes)
	all := make([]pe, pes)                // one allocation for a million PEs, not a million
	names := sim.NumberedNames("pe", pes) // one allocation, not one per PE
	for i := range m.pes {
		name := names[i]
		x := &all[i]
		*x = pe{m: m, id: int32(i), node: int32(i / params.PEsPerNode)}
		mem.InitMemory(&x.mem, name, params.MemoryMB<<20)
		mem.InitCPUShared(&x.cpu, eng, name, &x.mem, &cfg)
		m.pes[i] = x
	}
	return m, nil
}

// ports builds the PE's network ports on first use: an injection and an
// ejection channel, each with one virtual channel per traffic class. Their
// names are derived when asked for (portName): a million-PE run builds
// millions of ports and reads none of their names.
func (x *pe) ports() {
	if x.inject[0] != nil {
		return
	}
	kind := x.m.port
	id := uint32(x.id) * portIDs // x.id < MaxWhatIfPEs
	ps := x.m.newPorts()
	in, out := &ps.in, &ps.out
	net.InitNamedChannel(in, x.m.portNames, id)
	net.InitNamedChannel(out, x.m.portNames, id+portIDs/2)
	for c := 0; c < classes; c++ {
		x.inject[c], x.eject[c] = &ps.vc[c], &ps.vc[classes+c]
		kind.InitLink(x.inject[c], id+1+uint32(c))
		kind.InitLink(x.eject[c], id+portIDs/2+1+uint32(c))
		x.inject[c].Phys, x.eject[c].Phys = in, out
	}
}

// portSet is a PE's ports: its injection and ejection channels and their
// virtual channels (injection's classes, then ejection's).
type portSet struct {
	in, out net.Channel
	vc      [2 * classes]net.Link
}

// portBlock is the most port sets allocated at once.
const portBlock = 256

// newPorts returns an unused port set of the machine's slab.
func (m *Machine) newPorts() *portSet {
	k := m.portUsed % portBlock
	if k == 0 {
		m.portSlab = append(m.portSlab, make([]portSet, min(portBlock, len(m.pes)-m.portUsed)))
	}
	m.portUsed++
	return &m.portSlab[len(m.portSlab)-1][k]
}

// portIDs is the number of port ids per PE: for the injection, then the
// ejection port, its channel and its virtual channels, one per class.
const portIDs = 2 * (1 + classes)

// portName is the name of a PE's port: pe*portIDs + d*(1+classes) names
// the injection (d 0) or ejection (d 1) channel ("pe7.inject"), plus 1+c
// its virtual channel for class c ("pe7.inject.c0").
func portName(id uint32) string {
	pe, d, c := int(id/portIDs), id%portIDs/(1+classes), int(id%(1+classes))-1
	name := "pe" + strconv.Itoa(pe) + [2]string{".inject", ".eject"}[d]
	if c < 0 {
		return name
	}
	return name + ".c" + strconv.Itoa(c)
}

// Name is "t3d".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of PEs.
func (m *Machine) Procs() int { return len(m.pes) }

// Params is the machine's model.
func (m *Machine) Params() Params { return m.params }

// Torus is the interconnect (its shape in nodes, its links).
func (m *Machine) Torus() *net.Torus { return m.torus }

// CPU is PE pe's processor.
func (m *Machine) CPU(pe int) *mem.CPU { return &m.pes[pe].cpu }

// Memory is PE pe's local memory.
func (m *Machine) Memory(pe int) *mem.Memory { return &m.pes[pe].mem }

// ErrMemoryFull is wrapped by the error of an allocation that does not fit
// in a PE's memory (memory_mb).
var ErrMemoryFull = errors.New("PE memory full")

// Alloc allocates n bytes of PE pe's memory, aligned to and padded to 64
// bytes (whole cache lines, so that a line fill never leaves the memory).
func (m *Machine) Alloc(pe int, name string, n int) (mem.Region, error) {
	m.check("alloc", pe)
	if n < 0 {
		return mem.Region{}, fmt.Errorf("t3d: PE %d: buffer %q: negative size %d", pe, name, n)
	}
	capacity := m.params.MemoryMB << 20
	used := m.pes[pe].mem.Used()
	if base := (used + 63) &^ 63; n > capacity-base || (n+63)&^63 > capacity-base {
		return mem.Region{}, fmt.Errorf("t3d: %w: PE %d: buffer %q of %d bytes does not fit, %d of %d bytes in use (memory_mb %d)",
			ErrMemoryFull, pe, name, n, used, capacity, m.params.MemoryMB)
	}
	s, err := m.pes[pe].mem.Alloc(name, (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("t3d: %w: %v", ErrMemoryFull, err)
	}
	return mem.Region{Mem: &m.pes[pe].mem, Addr: s.Base, Len: n}, nil
}

// Received is the number of bytes puts have delivered into PE pe's memory
// so far (a harness-side count, for detecting lost puts).
func (m *Machine) Received(pe int) uint64 { return m.pes[pe].recv }

// Node is the router node PE pe is attached to.
func (m *Machine) Node(pe int) int { return int(m.pes[pe].node) }

// Hops is the number of torus links between PEs a and b.
func (m *Machine) Hops(a, b int) int { return m.torus.Hops(int(m.pes[a].node), int(m.pes[b].node)) }

// Network is the machine's network (its statistics).
func (m *Machine) Network() *net.Network { return m.net }

// router routes between PEs: a's injection port, the torus route between
// their nodes (dimension order), b's ejection port, on the virtual
// channels of the traffic's class.
type router struct{ m *Machine }

// FixedRoutes: the T3D's routes are dimension order on a torus whose order
// never changes; only a link going down changes them (the network knows).
func (router) FixedRoutes() {}

func (r router) Route(route []*net.Link, a, b, class int) ([]*net.Link, error) {
	pa, pb := r.m.pes[a], r.m.pes[b]
	pa.ports()
	pb.ports()
	route = append(route, pa.inject[class])
	route, err := r.m.torus.Route(route, int(pa.node), int(pb.node), class)
	if err != nil {
		return route, err
	}
	return append(route, pb.eject[class]), nil
}

// buffer returns a scratch buffer of n bytes (n > 0) from the pool, of
// the least power-of-two capacity that holds them.
func (m *Machine) buffer(n int) []byte {
	c := bits.Len(uint(n - 1))
	if k := len(m.bufs[c]); k > 0 {
		b := m.bufs[c][k-1]
		m.bufs[c] = m.bufs[c][:k-1]
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

func (m *Machine) release(b []byte) {
	c := bits.Len(uint(cap(b))) - 1
	m.bufs[c] = append(m.bufs[c], b)
}

func (m *Machine) check(op string, pes ...int) {
	for _, x := range pes {
		if x < 0 || x >= len(m.pes) {
			panic(fmt.Sprintf("t3d: %s: PE %d out of range [0, %d)", op, x, len(m.pes)))
		}
	}
}

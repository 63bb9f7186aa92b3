// Package sp models the IBM SP of papers/armci-sp.txt (section 2.5): 120
// MHz Power2 Super uniprocessor nodes with 512 MB each on the high
// performance switch (a multistage network of 8-port switch chips, TB-3
// adapters, 1024-byte packets), and LAPI as the machine's native interface:
// nonblocking LAPI_Put and LAPI_Get of contiguous data with origin, target
// and completion counters and a wait on a counter; active messages
// (LAPI_Amsend) with a header handler that runs on arrival and says where
// the data goes, and a completion handler that runs in a separate thread
// once the data is there; interrupt or polling progress; pthread mutexes.
//
// LAPI is software over the adapter, and so is this model: every LAPI
// message is a real message of real bytes through sim/net (packets of
// packet_bytes, each with packet_header_bytes, through the node's adapter
// at adapter_mbps and the switch's chips), handed at its destination to the
// node's sim/am endpoint, whose dispatcher runs its handler in the node's
// program (polling) or in LAPI's interrupt-driven handler thread, which
// preempts the program on the node's one processor (sim.Core). A get is a
// request message whose handler, at the target, reads the data and sends
// it back. So the first LAPI_Get to a sleeping node pays the interrupt, and
// the following ones, arriving while the handler thread is still active,
// do not: the "90 uS latency for the first column and 30 uS for the next
// ones (pipelining)" of section 1 emerge from the interrupt, the
// dispatcher's and sender's software costs, copies and packets.
//
// LAPI orders nothing between messages: a node's dispatcher handles them
// in the order they arrive, and with switch_jitter_us (other traffic on
// the switch's routes; 0 by default) a later message may arrive first.
// A program that needs order waits on a completion counter between two
// operations (what LAPI_Fence does); simrun litmus --machine sp shows it.
//
// Calibrated parameters (everything else comes from hardware.yaml or the
// paper, or is an assumption stated at its field), fitted together by
// simrun calibrate from calibration/sp-lapi.yaml:
//
//	send_overhead_us, receive_overhead_us  11 each  <- 30 us per pipelined LAPI_Get (section 1)
//	interrupt_us                          34  <- 90 us first LAPI_Get to a sleeping node (section 1)
//	adapter_mbps                          34  <- 30 MB/s for the same bytes contiguous (section 1)
//
// Layer: a machine: imports machines, machines/lapi, sim, sim/am, sim/mem
// and sim/net. Stacks reach it through the machines and lapi interfaces
// only; the registry is the one package that imports it by name.
package sp

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/am"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Name is the machine's name in scenarios.
const Name = "sp"

// MaxNodes is the largest configuration: the paper's "512-node IBM SP at
// PNNL" (armci-sp.txt 2.5).
const MaxNodes = 512

// Machine is an SP partition: one LAPI task per node.
type Machine struct {
	eng    *sim.Engine
	params Params
	nodes  []*node
	sw     *net.Multistage
	net    *net.Network
	inject []*net.Link // node's adapter into the switch
	eject  []*net.Link // the switch into the node's adapter

	sendCost, mutexCost sim.Time
	msgs                []*msg // pool
	stats               Stats
}

// Stats counts LAPI's traffic.
type Stats struct {
	Puts, Gets, AMs, Acks, Replies, Rmws uint64 // messages sent by kind
	PayloadBytes                         uint64 // user bytes carried
}

// node is one SP node.
type node struct {
	m    *Machine
	id   int
	mem  *mem.Memory
	cpu  *mem.CPU
	core *sim.Core
	ep   *am.Endpoint
	// inHandler counts handlers running on the node (they may call LAPI:
	// such calls do not bind the caller as the node's program).
	inHandler int
	verbs     *verbs // the generic verbs' counters, made on first use
}

// New builds a partition of nodes nodes.
func New(eng *sim.Engine, nodes int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if nodes < 1 || nodes > MaxNodes {
		return nil, fmt.Errorf("sp: %d nodes requested; a partition has 1 to %d nodes (armci-sp.txt 2.5: a 512-node SP)", nodes, MaxNodes)
	}
	m := &Machine{eng: eng, params: params, sendCost: us(params.SendOverheadUs), mutexCost: us(params.MutexUs)}
	var err error
	m.sw, err = net.NewMultistage("sp.switch", max(nodes, 2), params.Radix, sim.Nano(params.LinkNs), params.LinkMBps)
	if err != nil {
		return nil, fmt.Errorf("sp: %w", err)
	}
	m.net, err = net.New(eng, router{m}, net.Config{MTU: params.PacketBytes, Header: params.PacketHeaderBytes, Packets: true, Jitter: us(params.SwitchJitterUs), Flow: params.NetworkModel == machines.NetworkFlow, FlowShareMin: params.FlowShareMinBytes})
	if err != nil {
		return nil, fmt.Errorf("sp: %w", err)
	}
	cfg := params.memConfig()
	for i := 0; i < nodes; i++ {
		x := &node{m: m, id: i, mem: mem.NewMemory(fmt.Sprintf("node%d", i), params.MemoryMB<<20)}
		x.cpu, err = mem.NewCPU(eng, fmt.Sprintf("node%d", i), x.mem, cfg)
		if err != nil {
			return nil, fmt.Errorf("sp: %w", err)
		}
		// A uniprocessor node: LAPI's handler threads preempt the program.
		x.core = eng.NewCore(fmt.Sprintf("node%d", i), true)
		x.ep, err = am.New(eng, fmt.Sprintf("node%d", i), x.core, params.amParams())
		if err != nil {
			return nil, fmt.Errorf("sp: %w", err)
		}
		in := net.NewLink(fmt.Sprintf("node%d.adapter.out", i), 0, params.AdapterMBps)
		out := net.NewLink(fmt.Sprintf("node%d.adapter.in", i), 0, params.AdapterMBps)
		out.Buffered = true
		m.inject = append(m.inject, in)
		m.eject = append(m.eject, out)
		m.nodes = append(m.nodes, x)
	}
	return m, nil
}

// Name is "sp".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of nodes (one LAPI task each).
func (m *Machine) Procs() int { return len(m.nodes) }

// Params is the machine's model.
func (m *Machine) Params() Params { return m.params }

// CPU is node i's processor.
func (m *Machine) CPU(i int) *mem.CPU { return m.nodes[i].cpu }

// Memory is node i's memory.
func (m *Machine) Memory(i int) *mem.Memory { return m.nodes[i].mem }

// Core is node i's processor as its program and LAPI's threads share it.
func (m *Machine) Core(i int) *sim.Core { return m.nodes[i].core }

// Endpoint is node i's LAPI dispatcher (its statistics: interrupts...).
func (m *Machine) Endpoint(i int) *am.Endpoint { return m.nodes[i].ep }

// Network is the machine's network (its statistics).
func (m *Machine) Network() *net.Network { return m.net }

// Stats is LAPI's traffic so far.
func (m *Machine) Stats() Stats { return m.stats }

// MemoryBytes is the memory one task can allocate (machines.Memory).
func (m *Machine) MemoryBytes() int { return m.params.MemoryMB << 20 }

// ErrMemoryFull is wrapped by the error of an allocation that does not fit
// in a node's memory (memory_mb).
var ErrMemoryFull = errors.New("node memory full")

// Alloc allocates n bytes of node i's memory, 64-byte aligned.
func (m *Machine) Alloc(i int, name string, n int) (mem.Region, error) {
	m.check("alloc", i)
	if n < 0 {
		return mem.Region{}, fmt.Errorf("sp: node %d: buffer %q: negative size %d", i, name, n)
	}
	s, err := m.nodes[i].mem.Alloc(name, (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("sp: %w: %v", ErrMemoryFull, err)
	}
	return mem.Region{Mem: m.nodes[i].mem, Addr: s.Base, Len: n}, nil
}

// router: the source adapter, the switch, the destination adapter.
type router struct{ m *Machine }

func (r router) Route(route []*net.Link, src, dst, class int) ([]*net.Link, error) {
	route = append(route, r.m.inject[src])
	route, err := r.m.sw.Route(route, src, dst, class)
	if err != nil {
		return route, err
	}
	return append(route, r.m.eject[dst]), nil
}

func (m *Machine) check(op string, nodes ...int) {
	for _, x := range nodes {
		if x < 0 || x >= len(m.nodes) {
			panic(fmt.Sprintf("sp: %s: node %d out of range [0, %d)", op, x, len(m.nodes)))
		}
	}
}

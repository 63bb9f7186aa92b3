// Package tcpcluster models a Linux cluster of SMP nodes whose processes
// talk TCP through the kernel: the systems of papers/mpich2-threads.txt's
// measurements, "a single SMP box" (Figure 1) and "a Myrinet-connected
// Linux cluster using the ch3:sock channel (TCP)" (Figure 4). Its verb is
// machines.Sockets: a non-blocking stream between every ordered pair of
// processes, written and read with system calls, and poll(), which puts
// the calling thread to sleep in the kernel until a connection is ready
// while the process's other threads run on.
//
// The processes of one node also share System V segments of its memory
// (machines.SharedSegments), so MPICH's shared-memory devices and ARMCI's
// shared-memory port run on one SMP box beside ch3:sock.
//
// Every message follows the kernel's path. write() is a system call that
// copies the bytes from user memory into the connection's send buffer in
// the node's memory (copy_from_user, at the node's copy rate) and sends
// them as TCP segments, each paying the kernel's transmit processing on
// the writing thread. Between nodes a segment's bytes cross the sender's
// PCI bus into the Myrinet adapter, the Myrinet links and crossbars
// (sim/net) and the receiver's adapter and PCI bus into its memory; the
// receiving node takes an interrupt and runs the receive processing (one
// segment after another on the node's kernel), which puts the bytes in the
// connection's receive buffer and wakes the threads polling. Inside a node
// the segment goes through the loopback device: the writing thread runs
// the receive processing too (Linux processes a loopback segment in the
// sender's softirq), no adapter, no interrupt. read() is a system call
// that copies from the receive buffer to user memory (copy_to_user).
//
// What is not modelled: ACK segments (their processing is counted in the
// receive processing of the data they answer), Nagle's algorithm (MPICH2
// sets TCP_NODELAY), slow start and losses (a cluster's switch drops
// nothing), the receive processing's theft of time from a user thread on
// the interrupted CPU (the node's kernel work runs beside its threads),
// and more runnable threads than CPUs.
//
// Layer: a machine: imports machines, sim, sim/mem and sim/net. Stacks
// reach it through the machines interfaces only; the registry is the one
// package that imports it by name.
package tcpcluster

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// Name is the machine's name in scenarios.
const Name = "tcpcluster"

// MaxProcs is the largest configuration (a bound on the connection
// tables, which grow with the square of the processes).
const MaxProcs = 1024

// Machine is a cluster of nodes, ProcsPerNode processes on each.
type Machine struct {
	eng    *sim.Engine
	params Params
	procs  int
	nodes  []*node
	cpus   []*mem.CPU
	sw     *net.Multistage
	net    *net.Network
	pciOut []*net.Link     // node's PCI bus into its adapter (and the adapter's send firmware)
	pciIn  []*net.Link     // the adapter into the node's memory (its receive firmware)
	conns  [][]*conn       // [from][to], made on first use
	polls  []sim.WaitQueue // each process's threads sleeping in poll()

	syscall, tx, rx, intr, wake, pollFd sim.Time
	mss, loopMSS                        int
	stats                               Stats
}

// Stats counts the kernel's work.
type Stats struct {
	Writes, Reads, Polls, Sleeps uint64 // system calls; polls that slept
	Segments, Loopback           uint64 // segments sent (all), of which through the loopback device
	Bytes                        uint64 // bytes written
}

// node is one SMP box.
type node struct {
	id  int
	mem *mem.Memory
	// rxFree is when the node's kernel has finished the receive
	// processing of the segments that arrived so far.
	rxFree sim.Time
}

// conn is the kernel's state of the connection from process from to
// process to: a send buffer in from's node, a receive buffer in to's.
type conn struct {
	from, to     int
	loop         bool
	snd, rcv     mem.Region
	sndAt        int    // where the next byte goes in snd (a ring)
	inflight     int    // bytes written and not yet in rcv
	unread       int    // bytes in rcv not yet read
	head, tail   int    // rcv ring: next byte to read, next to fill
	sent, landed uint64 // stream offsets: bytes sent, bytes placed in rcv
}

// New builds a cluster running procs processes.
func New(eng *sim.Engine, procs int, params Params) (*Machine, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	if procs < 1 || procs > MaxProcs {
		return nil, fmt.Errorf("%s: %d processes requested; 1 to %d", Name, procs, MaxProcs)
	}
	m := &Machine{eng: eng, params: params, procs: procs,
		syscall: us(params.SyscallUs), tx: us(params.TxSegmentUs), rx: us(params.RxSegmentUs),
		intr: us(params.InterruptUs), wake: us(params.WakeupUs), pollFd: us(params.PollFdUs),
		mss: params.MTUBytes - ipTCPHeader, loopMSS: params.LoopbackMTUBytes - ipTCPHeader}
	nodes := (procs + params.ProcsPerNode - 1) / params.ProcsPerNode
	var err error
	if m.sw, err = net.NewMultistage("myrinet", max(nodes, 2), params.Radix, sim.Nano(params.LinkNs), params.LinkMBps); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if m.net, err = net.New(eng, router{m}, net.Config{Header: params.FrameHeaderBytes, Packets: true}); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	for i := 0; i < nodes; i++ {
		m.nodes = append(m.nodes, &node{id: i, mem: mem.NewMemory(fmt.Sprintf("node%d", i), params.MemoryMB<<20)})
		out := net.NewLink(fmt.Sprintf("node%d.pci.out", i), us(params.NICUs), params.PCIMBps)
		in := net.NewLink(fmt.Sprintf("node%d.pci.in", i), us(params.NICUs), params.PCIMBps)
		in.Buffered = true
		m.pciOut, m.pciIn = append(m.pciOut, out), append(m.pciIn, in)
	}
	cfg := params.memConfig()
	for i := 0; i < procs; i++ {
		c, err := mem.NewCPU(eng, fmt.Sprintf("rank%d", i), m.nodes[m.NodeOf(i)].mem, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		m.cpus = append(m.cpus, c)
	}
	m.conns = make([][]*conn, procs)
	m.polls = make([]sim.WaitQueue, procs)
	return m, nil
}

// Name is "tcpcluster".
func (m *Machine) Name() string { return Name }

// Engine is the engine the machine runs in.
func (m *Machine) Engine() *sim.Engine { return m.eng }

// Procs is the number of processes.
func (m *Machine) Procs() int { return m.procs }

// Params is the machine's model.
func (m *Machine) Params() Params { return m.params }

// Stats is the kernel's work so far.
func (m *Machine) Stats() Stats { return m.stats }

// Network is the Myrinet (its statistics).
func (m *Machine) Network() *net.Network { return m.net }

// NodeOf is the node process pe runs on.
func (m *Machine) NodeOf(pe int) int { return pe / m.params.ProcsPerNode }

// CPU is process pe's processor.
func (m *Machine) CPU(pe int) *mem.CPU { return m.cpus[pe] }

// MemoryBytes is a node's memory (machines.Memory), which its processes
// share.
func (m *Machine) MemoryBytes() int { return m.params.MemoryMB << 20 }

// ErrMemoryFull is wrapped by the error of an allocation that does not fit
// in a node's memory (memory_mb).
var ErrMemoryFull = errors.New("node memory full")

// Alloc allocates n bytes of process pe's memory (in its node's), 64-byte
// aligned.
func (m *Machine) Alloc(pe int, name string, n int) (mem.Region, error) {
	if n < 0 {
		return mem.Region{}, fmt.Errorf("%s: process %d: buffer %q: negative size %d", Name, pe, name, n)
	}
	x := m.nodes[m.NodeOf(pe)]
	s, err := x.mem.Alloc(fmt.Sprintf("rank%d %s", pe, name), (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("%s: %w: %v", Name, ErrMemoryFull, err)
	}
	return mem.Region{Mem: x.mem, Addr: s.Base, Len: n}, nil
}

// SharedSegment is a System V shared-memory segment (shmget, shmat) of
// size bytes in node's memory, which the node's processes load and store
// with their own CPUs (machines.SharedSegments); the node's caches are
// coherent, so what one CPU stores the others see.
func (m *Machine) SharedSegment(node int, name string, size int) (mem.Region, error) {
	if node < 0 || node >= len(m.nodes) {
		return mem.Region{}, fmt.Errorf("%s: shared segment %q on node %d: %d nodes", Name, name, node, len(m.nodes))
	}
	x := m.nodes[node]
	s, err := x.mem.Alloc("shm."+name, size, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("%s: %w: %v", Name, ErrMemoryFull, err)
	}
	return mem.Region{Mem: x.mem, Addr: s.Base, Len: size}, nil
}

// Resume is the kernel giving a woken thread a CPU again
// (machines.Scheduler): wakeup_us of the thread's time.
func (m *Machine) Resume(p *sim.Proc, pe int) { p.Sleep(m.wake) }

// router: the source node's PCI bus and adapter, the Myrinet crossbars,
// the destination's adapter and PCI bus.
type router struct{ m *Machine }

func (r router) Route(route []*net.Link, src, dst, class int) ([]*net.Link, error) {
	route = append(route, r.m.pciOut[src])
	route, err := r.m.sw.Route(route, src, dst, class)
	if err != nil {
		return route, err
	}
	return append(route, r.m.pciIn[dst]), nil
}

var (
	_ machines.Sockets        = (*Machine)(nil)
	_ machines.Scheduler      = (*Machine)(nil)
	_ machines.Memory         = (*Machine)(nil)
	_ machines.SharedSegments = (*Machine)(nil)
)

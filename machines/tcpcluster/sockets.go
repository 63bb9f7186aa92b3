package tcpcluster

import (
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/net"
)

// conn is the connection from process from to process to, its kernel
// buffers allocated in the two nodes' memories on first use (as if
// connected at start-up: no simulated cost).
func (m *Machine) conn(from, to int) *conn {
	if from < 0 || from >= m.procs || to < 0 || to >= m.procs || from == to {
		panic(fmt.Sprintf("%s: no connection from process %d to process %d (%d processes)", Name, from, to, m.procs))
	}
	if m.conns[from] == nil {
		m.conns[from] = make([]*conn, m.procs)
	}
	c := m.conns[from][to]
	if c != nil {
		return c
	}
	c = &conn{from: from, to: to, loop: m.NodeOf(from) == m.NodeOf(to)}
	var err error
	if c.snd, err = m.kernelBuf(from, fmt.Sprintf("kernel: socket to rank%d: send buffer", to), m.params.SndBufBytes); err == nil {
		c.rcv, err = m.kernelBuf(to, fmt.Sprintf("kernel: socket from rank%d: receive buffer", from), m.params.RcvBufBytes)
	}
	if err != nil {
		m.eng.Fail(err)
	}
	m.conns[from][to] = c
	return c
}

func (m *Machine) kernelBuf(pe int, name string, n int) (mem.Region, error) {
	x := m.nodes[m.NodeOf(pe)]
	s, err := x.mem.Alloc(name, n, 64)
	if err != nil {
		return mem.Region{}, fmt.Errorf("%s: %w: %v", Name, ErrMemoryFull, err)
	}
	return mem.Region{Mem: x.mem, Addr: s.Base, Len: n}, nil
}

// room is what a write to c may take now: what the send buffer holds
// besides the bytes in flight, and what the receiver's window (its
// receive buffer less the bytes in flight and unread) allows.
func (m *Machine) room(c *conn) int {
	return max(0, min(m.params.SndBufBytes-c.inflight, m.params.RcvBufBytes-c.unread-c.inflight))
}

// SockWrite is write() on the connection from pe to process to: a system
// call that copies as many of the n bytes at src as the connection has
// room for into the kernel, segment by segment, each sent at once with its
// transmit processing (and, through the loopback device, its receive
// processing too). It returns the bytes taken: 0 when there is no room
// (EAGAIN).
func (m *Machine) SockWrite(p *sim.Proc, pe, to int, src mem.Addr, n int) int {
	c := m.conn(pe, to)
	cpu := m.cpus[pe]
	m.stats.Writes++
	p.Sleep(m.syscall)
	k := min(n, m.room(c))
	if k <= 0 {
		return 0
	}
	c.inflight += k // reserved at once: another thread writing meanwhile sees it taken
	m.stats.Bytes += uint64(k)
	mss := m.mss
	if c.loop {
		mss = m.loopMSS
	}
	for off := 0; off < k; {
		seg := min(mss, k-off)
		at := c.sndAt
		m.ringCopy(p, cpu, c.snd, at, src+mem.Addr(off), seg, true) // copy_from_user
		c.sndAt = (c.sndAt + seg) % c.snd.Len
		p.Sleep(m.tx)
		data := make([]byte, seg)
		m.ringPeek(c.snd, at, data)
		s := &segment{m: m, c: c, off: c.sent, data: data}
		c.sent += uint64(seg)
		m.stats.Segments++
		if c.loop {
			// lo: netif_rx queues the segment on this CPU, whose softirq
			// runs the receive processing before the call returns.
			m.stats.Loopback++
			p.Sleep(m.rx)
			s.land()
		} else {
			m.net.Send(net.Msg{Src: m.NodeOf(pe), Dst: m.NodeOf(to), Bytes: seg}, s)
		}
		off += seg
	}
	return k
}

// SockRead is read() on the connection from process from to pe: a system
// call that copies up to n waiting bytes to dst and returns how many (0:
// none waiting, EAGAIN).
func (m *Machine) SockRead(p *sim.Proc, pe, from int, dst mem.Addr, n int) int {
	c := m.conn(from, pe)
	m.stats.Reads++
	p.Sleep(m.syscall)
	k := min(n, c.unread)
	if k <= 0 {
		return 0
	}
	m.ringCopy(p, m.cpus[pe], c.rcv, c.head, dst, k, false) // copy_to_user
	c.head = (c.head + k) % c.rcv.Len
	c.unread -= k
	m.wakePollers(from) // the window opened
	return k
}

// ringCopy copies n bytes between user memory at a and the ring r from
// offset at (toRing: into the ring), with the CPU's copy, in two pieces
// where the ring wraps.
func (m *Machine) ringCopy(p *sim.Proc, cpu *mem.CPU, r mem.Region, at int, a mem.Addr, n int, toRing bool) {
	for n > 0 {
		k := min(n, r.Len-at)
		if toRing {
			cpu.Memcpy(p, r.Addr+mem.Addr(at), a, k)
		} else {
			cpu.Memcpy(p, a, r.Addr+mem.Addr(at), k)
		}
		a += mem.Addr(k)
		n -= k
		at = 0
	}
}

// ringPeek reads len(b) bytes of ring r from offset at (the adapter's DMA,
// or the loopback device handing the segment on: no CPU time).
func (m *Machine) ringPeek(r mem.Region, at int, b []byte) {
	for len(b) > 0 {
		k := min(len(b), r.Len-at)
		r.Mem.Read(r.Addr+mem.Addr(at), b[:k])
		b = b[k:]
		at = 0
	}
}

func (m *Machine) ringPoke(r mem.Region, at int, b []byte) {
	for len(b) > 0 {
		k := min(len(b), r.Len-at)
		r.Mem.Write(r.Addr+mem.Addr(at), b[:k])
		b = b[k:]
		at = 0
	}
}

// segment is one TCP segment in flight: its connection, its offset in the
// stream and its bytes.
type segment struct {
	m    *Machine
	c    *conn
	off  uint64
	data []byte
}

// Sent: nothing to do (the bytes were taken at the write).
func (s *segment) Sent(*net.Message) {}

// IgnoresSent: the network spends no event on Sent.
func (s *segment) IgnoresSent() {}

// Arrived: the frame's bytes are in the adapter (Delivered follows).
func (s *segment) Arrived(*net.Message, int, int) {}

// Delivered: the frame is in the receiving node's memory; the adapter
// interrupts and the node's kernel runs the receive processing after the
// segments that came before.
func (s *segment) Delivered(*net.Message) {
	m := s.m
	x := m.nodes[m.NodeOf(s.c.to)]
	x.rxFree = max(x.rxFree, m.eng.Now()) + m.intr + m.rx
	m.eng.At(x.rxFree, s.land)
}

// Failed: a Myrinet route is gone (no fault is modelled, so never).
func (s *segment) Failed(_ *net.Message, err error) {
	s.m.eng.Fail(fmt.Errorf("%s: segment from rank%d to rank%d lost: %w", Name, s.c.from, s.c.to, err))
}

// land puts the segment's bytes in the receive buffer, in stream order,
// and wakes the receiver's pollers (and the sender's: the bytes no longer
// count against its send buffer).
func (s *segment) land() {
	m, c := s.m, s.c
	if s.off != c.landed {
		m.eng.Fail(fmt.Errorf("%s: connection rank%d -> rank%d: segment at stream offset %d arrived when %d bytes had (out of order)", Name, c.from, c.to, s.off, c.landed))
		return
	}
	m.ringPoke(c.rcv, c.tail, s.data)
	n := len(s.data)
	c.tail = (c.tail + n) % c.rcv.Len
	c.landed += uint64(n)
	c.unread += n
	c.inflight -= n
	m.wakePollers(c.to)
	m.wakePollers(c.from)
}

func (m *Machine) wakePollers(pe int) { m.polls[pe].WakeAll() }

// Readable is the bytes waiting on the connection from process from to pe
// (0 on a connection nothing was ever written to).
func (m *Machine) Readable(pe, from int) int {
	if from < 0 || from >= m.procs || m.conns[from] == nil || m.conns[from][pe] == nil {
		return 0
	}
	return m.conns[from][pe].unread
}

// Writable is the room on the connection from pe to process to.
func (m *Machine) Writable(pe, to int) int { return m.room(m.conn(pe, to)) }

// ready reports whether poll() over pe's connections returns: bytes to
// read on one, or room on one to the processes in out.
func (m *Machine) ready(pe int, out []int) bool {
	for from := 0; from < m.procs; from++ {
		if from != pe && m.conns[from] != nil && m.conns[from][pe] != nil && m.conns[from][pe].unread > 0 {
			return true
		}
	}
	for _, to := range out {
		if m.room(m.conn(pe, to)) > 0 {
			return true
		}
	}
	return false
}

// Poll is poll() over every connection of pe (one per other process): a
// system call that examines each; when none is ready and block is set,
// the calling thread sleeps in the kernel until a segment lands for pe or
// room opens on a connection in out, and pays the wake-up.
func (m *Machine) Poll(p *sim.Proc, pe int, out []int, block bool) {
	m.stats.Polls++
	p.Sleep(m.syscall + sim.Time(m.procs-1)*m.pollFd)
	for block && !m.ready(pe, out) {
		m.stats.Sleeps++
		m.polls[pe].Wait(p, m.pollReason(pe, out))
		p.Sleep(m.wake)
	}
}

func (m *Machine) pollReason(pe int, out []int) string {
	s := fmt.Sprintf("poll(): rank%d sleeping in the kernel until bytes arrive", pe)
	if len(out) > 0 {
		var b strings.Builder
		for i, to := range out {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "rank%d", to)
		}
		s += " or there is room to write to " + b.String()
	}
	return s
}

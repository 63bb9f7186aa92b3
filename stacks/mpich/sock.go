package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// DeviceSock is MPICH2's ch3:sock channel: every message through a TCP
// connection to its destination, the progress engine waiting in poll()
// (papers/mpich2-threads.txt section 2: "the ch3:sock (TCP) channel in
// MPICH2 (currently the only channel in MPICH2 that supports thread
// safety)"). It needs machines.Sockets.
const DeviceSock = "ch3:sock"

// sockEagerBytes is ch3's eager limit: messages up to it travel with their
// envelope, longer ones by rendezvous. Assumed 128 KB, MPICH2 1.0's
// MPIDI_CH3_EAGER_MAX_MSG_SIZE.
const sockEagerBytes = 128 << 10

// sockDevice is ch3:sock for one process, over machines.Sockets: a
// control packet (header and inline data, the same packets as the other
// devices) is written to the destination's connection with non-blocking
// write() calls, as much as the kernel takes each time (the rest at the
// next try); on the receiving side the progress engine polls its
// connections and reads a packet's header, then its inline data, with
// read() calls, as ch3 reads a packet header before its data. Rendezvous
// data follows the ok-to-send on the same stream, behind a header saying
// where it goes, and is read straight into the receive buffer; the fin
// packet behind it completes the receive (DirectData). So the device
// allocates no data memory and has no shared pool, no lock of its own and
// no slot to spin on: a thread waiting for a packet sleeps in poll() in
// the kernel (WaitControl), with the MPI lock released
// (Rank.waitThreaded), and the process's other threads run meanwhile.
//
// Copies: the protocol layer builds a packet in its own buffer (inline
// data copied in) and copies inline data out of the received packet, so a
// short message is copied twice more in user space than by ch3, which
// writes from and reads into the user's buffer with writev and readv.
type sockDevice struct {
	m         machines.Sockets
	rank      int
	procs     int
	cpu       machines.Processor
	slotBytes int
	in        []sockIn
	out       []sockOut
	outs      []int // destinations with bytes waiting to be written (WaitControl's poll)
	polled    bool  // a poll() since the last ReadControl that found nothing
	next      int   // the connection ReadControl looks at first (round robin)
	hdrFree   []mem.Region
	waitWhy   string
}

// sockIn is the reading side of the connection from one sender.
type sockIn struct {
	stage    mem.Region // a packet that arrived in pieces, assembled (made on first need)
	have     int        // bytes of it read so far
	need     int        // its length (HeaderBytes until its header is read)
	data     mem.Addr   // rendezvous data: where the next byte goes
	dataLeft int        // rendezvous data: bytes still to read
}

// sockOut is the writing side of the connection to one receiver.
type sockOut struct {
	partial int          // bytes of the control packet at the head already written
	queue   []sockStream // rendezvous data to write before the next control packet
}

// sockStream is rendezvous data queued for the stream: its header, then
// its bytes.
type sockStream struct {
	hdr  mem.Region
	src  mem.Region
	done int // bytes of hdr and src written
}

func newSockDevices(mach machines.Machine, params Params) (machines.Local, []Device, error) {
	m, err := machines.Need[machines.Sockets](mach, "mpich "+DeviceSock, machines.VerbSockets)
	if err != nil {
		return nil, nil, err
	}
	n := m.Procs()
	devs := make([]Device, n)
	for i := range devs {
		devs[i] = &sockDevice{m: m, rank: i, procs: n, cpu: machines.ProcessorOf(m, i), slotBytes: params.slotBytes(),
			in: make([]sockIn, n), out: make([]sockOut, n),
			waitWhy: fmt.Sprintf("rank %d: waiting for a packet (%s poll())", i, DeviceSock)}
	}
	return m, devs, nil
}

func (d *sockDevice) Name() string { return DeviceSock }

// SendControl writes the packet to dest's connection, after any
// rendezvous data queued before it: as much as the kernel takes. It
// reports false while bytes of the packet remain (the caller comes back
// with the same packet, whose remaining bytes are written then).
func (d *sockDevice) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	o := &d.out[dest]
	for len(o.queue) > 0 {
		s := &o.queue[0]
		for s.done < HeaderBytes {
			k := d.m.SockWrite(p, d.rank, dest, s.hdr.Addr+mem.Addr(s.done), HeaderBytes-s.done)
			if k == 0 {
				return false, d.waiting(dest)
			}
			s.done += k
		}
		for s.done < HeaderBytes+s.src.Len {
			off := s.done - HeaderBytes
			k := d.m.SockWrite(p, d.rank, dest, s.src.Addr+mem.Addr(off), s.src.Len-off)
			if k == 0 {
				return false, d.waiting(dest)
			}
			s.done += k
		}
		d.hdrFree = append(d.hdrFree, s.hdr)
		o.queue = append(o.queue[:0], o.queue[1:]...)
	}
	for o.partial < size {
		k := d.m.SockWrite(p, d.rank, dest, pkt.Addr+mem.Addr(o.partial), size-o.partial)
		if k == 0 {
			return false, d.waiting(dest)
		}
		o.partial += k
	}
	o.partial = 0
	d.done(dest)
	return true, nil
}

// waiting notes that dest's connection has bytes waiting to be written.
func (d *sockDevice) waiting(dest int) error {
	for _, q := range d.outs {
		if q == dest {
			return nil
		}
	}
	d.outs = append(d.outs, dest)
	return nil
}

func (d *sockDevice) done(dest int) {
	if len(d.out[dest].queue) > 0 {
		return
	}
	for i, q := range d.outs {
		if q == dest {
			d.outs = append(d.outs[:i], d.outs[i+1:]...)
			return
		}
	}
}

// ReadControl reads one whole packet, if one has arrived, into pkt:
// poll() once (without sleeping) unless an earlier call's poll still
// stands, then from each connection with bytes waiting, the header and
// the inline data with read() (a packet that arrives in pieces is
// assembled in the connection's staging buffer and copied into pkt when
// whole). Rendezvous data met on the way is read into its receive buffer.
func (d *sockDevice) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	if !d.polled {
		d.m.Poll(p, d.rank, nil, false)
		d.polled = true
	}
	for j := 0; j < d.procs; j++ {
		i := (d.next + j) % d.procs
		if i == d.rank {
			continue
		}
		ok, err := d.readFrom(p, i, pkt)
		if err != nil || ok {
			d.next = (i + 1) % d.procs
			return i, ok, err
		}
	}
	d.polled = false
	return 0, false, nil
}

// readFrom reads from sender i's connection until a whole packet is in pkt
// (true) or no byte is waiting.
func (d *sockDevice) readFrom(p *sim.Proc, i int, pkt mem.Region) (bool, error) {
	st := &d.in[i]
	for d.m.Readable(d.rank, i) > 0 {
		avail := d.m.Readable(d.rank, i)
		switch {
		case st.dataLeft > 0: // rendezvous data, straight into the receive buffer
			k := d.m.SockRead(p, d.rank, i, st.data, st.dataLeft)
			st.data += mem.Addr(k)
			st.dataLeft -= k
		case st.need == 0 && avail >= HeaderBytes: // a header, into pkt
			d.m.SockRead(p, d.rank, i, pkt.Addr, HeaderBytes)
			h, need, err := d.parse(p, i, pkt)
			if err != nil {
				return false, err
			}
			if h.kind == pktStream {
				st.data, st.dataLeft = h.addr, h.n
				continue
			}
			if need == HeaderBytes {
				return true, nil
			}
			if d.m.Readable(d.rank, i) >= need-HeaderBytes {
				d.m.SockRead(p, d.rank, i, pkt.Addr+HeaderBytes, need-HeaderBytes)
				return true, nil
			}
			if err := d.staging(i); err != nil {
				return false, err
			}
			d.cpu.Memcpy(p, st.stage.Addr, pkt.Addr, HeaderBytes)
			st.have, st.need = HeaderBytes, need
		default: // a packet in pieces, into the staging buffer
			if st.need == 0 {
				if err := d.staging(i); err != nil {
					return false, err
				}
				st.need = HeaderBytes
			}
			st.have += d.m.SockRead(p, d.rank, i, st.stage.Addr+mem.Addr(st.have), st.need-st.have)
			if st.have < st.need {
				continue
			}
			if st.need == HeaderBytes && st.have == HeaderBytes {
				h, need, err := d.parse(p, i, st.stage)
				if err != nil {
					return false, err
				}
				if h.kind == pktStream {
					st.data, st.dataLeft = h.addr, h.n
					st.have, st.need = 0, 0
					continue
				}
				st.need = need
				if need > HeaderBytes {
					continue
				}
			}
			d.cpu.Memcpy(p, pkt.Addr, st.stage.Addr, st.need)
			st.have, st.need = 0, 0
			return true, nil
		}
	}
	return false, nil
}

// parse decodes a packet header read from sender i and returns the whole
// packet's length.
func (d *sockDevice) parse(p *sim.Proc, i int, b mem.Region) (header, int, error) {
	h, err := readHeader(d.cpu, p, b, d.rank, i, d.procs)
	if err != nil {
		return h, 0, err
	}
	need := HeaderBytes
	if h.kind == pktShort {
		if h.len < 0 || HeaderBytes+h.len > d.slotBytes {
			return h, 0, &CorruptionError{Rank: d.rank, From: i, Offset: 8 * wLen, At: p.Now(),
				What: fmt.Sprintf("gives a short-message length of %d bytes (a corrupted stream)", h.len)}
		}
		need += h.len
	}
	return h, need, nil
}

func (d *sockDevice) staging(i int) error {
	if d.in[i].stage.Mem != nil {
		return nil
	}
	r, err := d.m.Alloc(d.rank, fmt.Sprintf("mpich %s staging from rank %d", DeviceSock, i), d.slotBytes)
	if err != nil {
		return fmt.Errorf("mpich %s: rank %d: %w", DeviceSock, d.rank, err)
	}
	d.in[i].stage = r
	return nil
}

// WaitControl is the progress engine's blocking wait: poll() over every
// connection, sleeping in the kernel until bytes arrive (or room opens
// where bytes wait to be written).
func (d *sockDevice) WaitControl(p *sim.Proc) {
	d.m.Poll(p, d.rank, d.outs, true)
	d.polled = true
}

// WaitRoom is WaitControl: poll() wakes when room opens too.
func (d *sockDevice) WaitRoom(p *sim.Proc) { d.WaitControl(p) }

// The data half: ch3:sock sends every message with its envelope or by
// rendezvous on the stream (PutDirect), so it has no data memory.
func (d *sockDevice) AllocData(*sim.Proc, int, int, int) (mem.Region, bool, error) {
	return mem.Region{}, false, nil
}

func (d *sockDevice) DataCapacity() int { return 0 }

func (d *sockDevice) DataAt(mem.Addr, int) mem.Region { return mem.Region{} }

func (d *sockDevice) PutData(*sim.Proc, int, mem.Region, mem.Region) {}

func (d *sockDevice) GetData(*sim.Proc, mem.Region, mem.Region) {}

func (d *sockDevice) FreeData(*sim.Proc, mem.Region) error {
	return fmt.Errorf("mpich %s: rank %d: no data memory to free", DeviceSock, d.rank)
}

// PutDirect queues the rendezvous data for dest's stream behind a header
// naming the receive buffer; SendControl writes it before the fin packet
// that follows, so the receiver has read it into dst when it handles the
// fin.
func (d *sockDevice) PutDirect(p *sim.Proc, dest int, dst mem.Addr, src mem.Region) error {
	var hb mem.Region
	if n := len(d.hdrFree); n > 0 {
		hb, d.hdrFree = d.hdrFree[n-1], d.hdrFree[:n-1]
	} else {
		var err error
		if hb, err = d.m.Alloc(d.rank, "mpich "+DeviceSock+" data header", HeaderBytes); err != nil {
			return fmt.Errorf("mpich %s: rank %d: %w", DeviceSock, d.rank, err)
		}
	}
	h := header{kind: pktStream, src: d.rank, addr: dst, n: src.Len}
	for i, v := range h.words() {
		d.cpu.Store(p, hb.Addr+mem.Addr(8*i), 8, v)
	}
	d.out[dest].queue = append(d.out[dest].queue, sockStream{hdr: hb, src: src})
	return d.waiting(dest)
}

// ReceivedDirect: the data was read into the buffer, in stream order,
// before the fin packet.
func (d *sockDevice) ReceivedDirect(*sim.Proc, mem.Region) {}

var (
	_ Device     = (*sockDevice)(nil)
	_ DirectData = (*sockDevice)(nil)
	_ RoomWaiter = (*sockDevice)(nil)
)

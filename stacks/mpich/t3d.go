package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// pollCycles is the loop overhead per sender ring the receiver examines
// while scanning for packets (the uncached load of the ring's ready word is
// issued to the machine, which charges it). Assumed (4 cycles of compare
// and branch, the former stacks/t3dmpi's value): no paper measures it, and
// ch_t3d is our stand-in for the EPCC MPI of papers/aclmpl-t3d.txt
// (footnote 5), not its code.
const pollCycles = 4

// ctlBytes is the control block a process keeps for each peer, written by
// that peer's puts: [0,8) packets the peer has consumed from this process's
// ring (its credit), [8,16) eager buffers it has released.
const ctlBytes = 16

// putCopy is the library memcpy the receiver copies what remote writes
// brought with: it first invalidates the source lines, which another PE's
// puts wrote (see t3dDevice.invalidate).
type putCopy struct{ d *t3dDevice }

func (c putCopy) memcpy(p *sim.Proc, dst, src mem.Addr, n int) {
	c.d.invalidate(p, src, n)
	machines.Memcpy(c.d.m, p, c.d.rank, dst, src, n)
}

func (c putCopy) processor() machines.Processor { return c.d.cpu }

func (c putCopy) headers() *headerReader { return &c.d.hdr }

// t3dLayout is where ch_t3d's memory lies in every PE: the packet rings
// (per sender, ring_packets slots), the eager buffers (per sender) and the
// control blocks (per peer).
//
// The rings and control blocks are allocated at set-up (MPI_Init): the
// receiver's scan and spin-wait look at every sender's ring. A sender's
// eager buffer at a receiver is allocated in the receiver's memory when
// that sender first sends eager data there (AllocData): only the sender
// writes it and the receiver reads it at the address the packet names, so
// nobody needs it earlier. The real library reserves all p-1 of them at
// start-up; the simulator backs only those a run uses (at 128 PEs and the
// default 16 KiB, 2 MiB per PE), at no simulated cost (an address-table
// entry, as if reserved at start-up), in the deterministic order of first
// uses, so a two-PE ping-pong on a 128-PE partition does not hold 256 MiB.
type t3dLayout struct {
	m                                  machines.RemoteWrite
	procs, ring, slotBytes, eagerBytes int
	device                             string             // the device whose data half this is (ch_t3d, or ch_lfshmem across nodes)
	rings, ctl                         []mem.Addr         // base in each PE
	mems                               []*mem.Memory      // each PE's memory (of its control blocks)
	eager                              []map[int]mem.Addr // [receiver]: each sender's eager buffer, once used
	eagerOf                            []map[mem.Addr]int // [receiver]: the sender of each eager buffer there
}

// slot is slot k (mod ring) of sender from's ring in PE to's memory.
func (l *t3dLayout) slot(to, from int, k uint64) mem.Addr {
	return l.rings[to] + mem.Addr((from*l.ring+int(k%uint64(l.ring)))*l.slotBytes)
}

// eagerBuf is sender from's eager buffer in PE to's memory, allocated
// there on first use (mapped for from's puts: machines.MapRemote, which p,
// from's program, pays for where the machine charges mapping).
func (l *t3dLayout) eagerBuf(p *sim.Proc, to, from int) (mem.Addr, error) {
	if a, ok := l.eager[to][from]; ok {
		return a, nil
	}
	if l.eager[to] == nil {
		l.eager[to], l.eagerOf[to] = map[int]mem.Addr{}, map[mem.Addr]int{}
	}
	r, err := machines.MapRemote(l.m, p, from, to, "mpich.eager", l.eagerBytes)
	if err != nil {
		return 0, fmt.Errorf("mpich %s: PE %d: eager buffer for sender %d (eager_bytes %d): %w", l.device, to, from, l.eagerBytes, err)
	}
	l.eager[to][from], l.eagerOf[to][r.Addr] = r.Addr, from
	return r.Addr, nil
}

// eagerSender is the sender whose eager buffer in PE to's memory starts at
// a, if a is one.
func (l *t3dLayout) eagerSender(to int, a mem.Addr) (int, bool) {
	s, ok := l.eagerOf[to][a]
	return s, ok
}

// credit is the word in PE at's memory counting the packets peer has
// consumed from at; released (credit+8) counts the eager buffers peer has
// released.
func (l *t3dLayout) credit(at, peer int) mem.Addr { return l.ctl[at] + mem.Addr(peer*ctlBytes) }

// t3dDevice is ch_t3d for one PE with receive_queue per-sender, and the
// data half of ch_t3d with its other receive queues (t3dfiqueue.go, the
// default, and t3dqueue.go): an MPICH-style device of ours standing in
// for the T3D MPI baseline (EPCC's, not modelled): section 5's lock-free
// single-writer slots (p x (p-1) of them, here a short ring per ordered
// pair) placed in the receiver's memory and filled with remote writes
// (machines.RemoteWrite: SHMEM's puts on the T3D). The sender puts a
// packet's inline data into its slot at the receiver, waits for delivery
// (quiet), then puts the header whose ready word, the packet's number,
// marks the slot full. The receiver scans the next slot of every sender's
// ring with uncached loads (remote puts leave its cache stale), copies a
// packet out and puts the consumed count back into the sender's memory: the
// sender's credit. Eager data goes by put into a buffer the receiver keeps
// for each sender, released by a put of a count; rendezvous data by put
// straight into the receive buffer (DirectData).
type t3dDevice struct {
	hdr    headerReader // copyOut's
	m      machines.RemoteWrite
	rank   int
	cpu    machines.Processor
	l      *t3dLayout
	fences bool
	cached bool
	// quietOrder: the machine's remote writes may land out of order (it
	// lacks machines.OrderedWrites): a quiet orders the puts that must
	// land in order (putPacket, and the shared queue's release).
	quietOrder bool
	// stage is the library's send buffer (eager_bytes) that ch_t3d packs
	// a message's data into before putting it (see PutData); empty where
	// the device only lends its data half to another (ch_lfshmem).
	stage mem.Region
	// noInvalidate (tests only) skips the invalidation of lines before
	// copying out what remote puts wrote, to show the stale lines it
	// prevents as corrupted deliveries.
	noInvalidate bool

	sent, recvd []uint64 // packets sent to each PE, consumed from each PE (receive_queue per-sender only)
	esent, erel []uint64 // eager buffers used at each PE, released to each PE
	next        int      // the sender whose ring the scan looks at first
	seen        []uint64 // control words as last loaded by a send or seen by WaitRoom
	// watch lists the words the uncached waits read (listed on first
	// use): first each other sender's ring, by the ready word of its next
	// slot (moved on by take), then each peer's credit and released
	// counts. WaitControl watches the rings, WaitRoom all.
	watch []mem.Addr
	// watchPkts and watchAll: the words the waits through the cache
	// (ready_bit_cached) watch, listed on first use.
	watchPkts, watchAll []mem.Addr
	// The spin-wait reasons, formatted once: a wait is frequent, a report
	// naming it rare.
	waitPacket, waitRoom fmt.Stringer
}

// newT3DDevices sets up ch_t3d's per-PE state on every process of m: the
// control blocks and, with rings, the packet rings (without them, the data
// half of a device whose packets take another path: ch_t3d's
// fetch-and-increment pool or shared receive queue, ch_lfshmem's remote
// slots). Memory other processes write
// is mapped for them (machines.MapRemote).
func newT3DDevices(m machines.RemoteWrite, params Params, rings bool) ([]*t3dDevice, error) {
	n := m.Procs()
	_, ordered := m.(machines.OrderedWrites)
	l := &t3dLayout{m: m, procs: n, ring: params.RingPackets, slotBytes: params.slotBytes(), device: params.Device,
		eagerBytes: params.EagerBytes, eager: make([]map[int]mem.Addr, n), eagerOf: make([]map[mem.Addr]int, n)}
	for i := 0; i < n; i++ {
		if rings {
			r, err := machines.MapRemote(m, nil, i, i, "mpich.rings", n*l.ring*l.slotBytes)
			if err != nil {
				return nil, fmt.Errorf("mpich %s: PE %d: packet rings (ring_packets %d): %w", params.Device, i, l.ring, err)
			}
			l.rings = append(l.rings, r.Addr)
		}
		ctl, err := machines.MapRemote(m, nil, i, i, "mpich.control", n*ctlBytes)
		if err != nil {
			return nil, fmt.Errorf("mpich %s: PE %d: control blocks: %w", params.Device, i, err)
		}
		l.ctl = append(l.ctl, ctl.Addr)
		l.mems = append(l.mems, ctl.Mem)
	}
	devs := make([]*t3dDevice, n)
	for i := range devs {
		d := &t3dDevice{m: m, rank: i, cpu: machines.ProcessorOf(m, i), l: l, fences: params.Fences, cached: params.ReadyBitCached,
			quietOrder: !ordered,
			esent:      make([]uint64, n), erel: make([]uint64, n),
			seen:       make([]uint64, 2*n),
			waitPacket: sim.Reason(fmt.Sprintf("rank %d: waiting for a packet (%s rings)", i, params.Device)),
			waitRoom:   sim.Reason(fmt.Sprintf("rank %d: waiting for a free packet slot or eager buffer (%s credits)", i, params.Device))}
		if rings {
			d.sent, d.recvd = make([]uint64, n), make([]uint64, n)
		}
		if params.Device == DeviceT3D {
			st, err := m.Alloc(i, "mpich.sendbuf", l.eagerBytes)
			if err != nil {
				return nil, fmt.Errorf("mpich %s: PE %d: library send buffer (eager_bytes %d): %w", params.Device, i, l.eagerBytes, err)
			}
			d.stage = st
		}
		devs[i] = d
	}
	return devs, nil
}

func (d *t3dDevice) Name() string { return DeviceT3D }

// readyWord is the ready word of sender s's next slot in this PE's ring:
// what the receiver polls for s's next packet.
func (d *t3dDevice) readyWord(s int) mem.Addr {
	return d.l.slot(d.rank, s, d.recvd[s]) + 8*wReady
}

// watchIndex is sender s's entry in watch (the entries skip this PE).
func (d *t3dDevice) watchIndex(s int) int {
	if s > d.rank {
		return s - 1
	}
	return s
}

// watched lists the words the uncached waits watch (see watch), on first
// use: each other sender's next ready word, then each peer's counts.
func (d *t3dDevice) watched() []mem.Addr {
	if d.watch != nil {
		return d.watch
	}
	n := d.l.procs
	d.watch = make([]mem.Addr, 0, 3*(n-1))
	for s := 0; s < n; s++ {
		if s != d.rank {
			d.watch = append(d.watch, d.readyWord(s))
		}
	}
	for q := 0; q < n; q++ {
		if q != d.rank {
			d.watch = append(d.watch, d.l.credit(d.rank, q), d.l.credit(d.rank, q)+8)
		}
	}
	return d.watch
}

// saw records a control word (peer q's credit, k 0, or released count,
// k 1) as last loaded: a wait for room ends when it moves.
func (d *t3dDevice) saw(q, k int, v uint64) { d.seen[2*q+k] = v }

// watchLists lists the words the waits through the cache watch: every
// slot of every sender's ring, and the control blocks.
func (d *t3dDevice) watchLists() {
	if d.watchAll != nil {
		return
	}
	l := d.l
	for s := 0; s < l.procs; s++ {
		if s == d.rank {
			continue
		}
		for k := 0; k < l.ring; k++ {
			d.watchPkts = append(d.watchPkts, l.slot(d.rank, s, uint64(k)))
		}
	}
	d.watchAll = append(d.watchAll, d.watchPkts...)
	for q := 0; q < l.procs; q++ {
		if q != d.rank {
			d.watchAll = append(d.watchAll, l.credit(d.rank, q), l.credit(d.rank, q)+8)
		}
	}
}

// load reads a word another PE writes by put: uncached, or for teaching
// through the non-coherent cache.
func (d *t3dDevice) load(p *sim.Proc, a mem.Addr) uint64 {
	if d.cached {
		return d.cpu.Load(p, a, 8)
	}
	return d.cpu.LoadUncached(p, a, 8)
}

// invalidate drops this PE's cached lines of [a, a+n), which another PE's
// puts have written: a put does not update the receiver's cache
// (hardware.yaml t3d.hw_cache_coherence: "no hardware support for cache
// coherency"), and the memcpy that copies them out reads through the cache,
// so a line cached by an earlier copy of the same ring slot or eager buffer
// would be stale. As ACLMPL's receive does (stacks/aclmpl, invalidate), it
// invalidates line by line (Cray's shmem_udcflush_line), or flushes the
// whole cache (shmem_udcflush) when that costs less; the machine charges
// either.
func (d *t3dDevice) invalidate(p *sim.Proc, a mem.Addr, n int) {
	if d.noInvalidate {
		return
	}
	d.cpu.InvalidateRange(p, a, n)
}

// charge is the loop overhead of a scan that looked at loads rings.
func (d *t3dDevice) charge(p *sim.Proc, loads int) {
	if loads > 0 {
		d.cpu.Compute(p, float64(loads)*pollCycles)
	}
}

// quiet waits until every put is delivered (when fences are on).
func (d *t3dDevice) quiet(p *sim.Proc) {
	if d.fences {
		d.m.Quiet(p, d.rank)
	}
}

// SendControl puts the packet into the next slot of this PE's ring at
// dest, if dest has consumed enough packets for one to be free (else false:
// the caller waits for room), its ready word set to the packet's number
// (putPacket).
func (d *t3dDevice) SendControl(p *sim.Proc, pkt mem.Region, size, dest int) (bool, error) {
	credit := d.load(p, d.l.credit(d.rank, dest))
	d.saw(dest, 0, credit)
	if d.sent[dest]-credit >= uint64(d.l.ring) {
		return false, nil
	}
	slot := d.l.slot(dest, d.rank, d.sent[dest])
	d.sent[dest]++
	d.putPacket(p, dest, slot, pkt, size, d.sent[dest])
	return true, nil
}

// putPacket writes the packet (size bytes of pkt) into slot at dest with
// its ready word, ready, landing last. Where a pair's remote writes land
// in the order issued (machines.OrderedWrites: the T3D's torus): the
// inline data, quiet, then the header holding the ready word (a put
// lands whole there). Elsewhere (the SCI cluster reorders packets, even
// those of one write): the header without its ready word and the inline
// data in one put, quiet, then the ready word by itself. Without fences,
// no quiet.
func (d *t3dDevice) putPacket(p *sim.Proc, dest int, slot mem.Addr, pkt mem.Region, size int, ready uint64) {
	if d.quietOrder {
		d.m.Put(p, d.rank, dest, slot+8, pkt.Addr+8, size-8)
		d.quiet(p)
		d.m.PutWord(p, d.rank, dest, slot+8*wReady, ready)
		return
	}
	if size > HeaderBytes {
		d.m.Put(p, d.rank, dest, slot+HeaderBytes, pkt.Addr+HeaderBytes, size-HeaderBytes)
		d.quiet(p)
	}
	d.cpu.Store(p, pkt.Addr+8*wReady, 8, ready)
	d.m.Put(p, d.rank, dest, slot, pkt.Addr, HeaderBytes)
}

// ready reports whether sender s's next packet is in its slot, read
// through the cache (ready_bit_cached).
func (d *t3dDevice) ready(p *sim.Proc, s int) bool {
	return d.cpu.Load(p, d.readyWord(s), 8) == d.recvd[s]+1
}

// ReadControl scans the next slot of each sender's ring, starting after the
// sender it last read from; it copies the first full one out, and puts the
// new consumed count (the credit) into the sender's memory. The scan is
// one poll (machines.Processor.Poll): an uncached load of each sender's
// next ready word in turn, up to the first that holds the packet's number,
// then the loop's overhead for the rings it looked at; with
// ready_bit_cached, cached loads (readCached).
func (d *t3dDevice) ReadControl(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	if d.cached {
		return d.readCached(p, pkt)
	}
	n := d.l.procs
	var s, loads int
	ok := d.cpu.Poll(p, func() bool {
		loads = 0
		for i := 0; i < n; i++ {
			if s = d.next + i; s >= n {
				s -= n
			}
			if s == d.rank {
				continue
			}
			loads++
			if d.cpu.LoadUncached(p, d.readyWord(s), 8) == d.recvd[s]+1 {
				return true
			}
		}
		return false
	})
	d.charge(p, loads)
	if !ok {
		return 0, false, nil
	}
	return d.take(p, pkt, s)
}

// readCached is ReadControl with one cached load per ring
// (ready_bit_cached).
func (d *t3dDevice) readCached(p *sim.Proc, pkt mem.Region) (int, bool, error) {
	n, loads := d.l.procs, 0
	for i := 0; i < n; i++ {
		s := (d.next + i) % n
		if s == d.rank {
			continue
		}
		loads++
		if d.load(p, d.readyWord(s)) != d.recvd[s]+1 {
			continue
		}
		d.charge(p, loads)
		return d.take(p, pkt, s)
	}
	d.charge(p, loads)
	return 0, false, nil
}

// take copies sender s's packet out of its slot and puts the new credit
// into the sender's memory.
func (d *t3dDevice) take(p *sim.Proc, pkt mem.Region, s int) (int, bool, error) {
	n := d.l.procs
	d.next = (s + 1) % n
	slot := d.l.slot(d.rank, s, d.recvd[s])
	if _, err := copyOut(p, putCopy{d}, d.rank, pkt, slot, s, n, d.l.slotBytes); err != nil {
		return s, false, err
	}
	d.recvd[s]++
	if d.watch != nil {
		d.watch[d.watchIndex(s)] = d.readyWord(s)
	}
	d.m.PutWord(p, d.rank, s, d.l.credit(s, d.rank), d.recvd[s])
	return s, true, nil
}

// arrived reports whether any sender's next packet is in its slot, read
// through the cache (ready_bit_cached).
func (d *t3dDevice) arrived(p *sim.Proc) bool {
	for s := 0; s < d.l.procs; s++ {
		if s != d.rank && d.ready(p, s) {
			return true
		}
	}
	return false
}

// WaitControl spins until a packet is in one of this PE's rings: on the
// ready word of each sender's next slot, read without time (the poll that
// finds the packet is charged by ReadControl's scan, which follows), so
// the spin ends at the instant a put fills a slot; with ready_bit_cached,
// a spin through the cache on every ring slot.
func (d *t3dDevice) WaitControl(p *sim.Proc) {
	if d.cached {
		d.watchLists()
		d.cpu.SpinUntil(p, d.waitPacket, func() bool { return d.arrived(p) }, d.watchPkts...)
		return
	}
	n := d.l.procs
	w := d.watched()
	d.cpu.SpinUntil(p, d.waitPacket, func() bool {
		for s := 0; s < n; s++ {
			if s != d.rank && d.cpu.PeekUncached(d.readyWord(s), 8) == d.recvd[s]+1 {
				return true
			}
		}
		return false
	}, w[:n-1]...)
}

// WaitRoom spins until a packet arrives or a peer puts a new credit or
// eager release count into this PE's control blocks, reading them without
// time as WaitControl does. A count that changed since the send that found
// no room loaded it (it arrived while that send was deciding) ends the
// wait at once, at its first poll, which records it as seen: comparing
// with the counts at the start of the wait instead would lose that wake-up
// and spin for ever. Later polls end the wait when a count moves from what
// is recorded, which the next send (or the next wait's first poll) records.
func (d *t3dDevice) WaitRoom(p *sim.Proc) {
	if d.cached {
		d.waitRoomCached(p)
		return
	}
	n, first := d.l.procs, true
	d.cpu.SpinUntil(p, d.waitRoom, func() bool {
		changed := false
		for q := 0; q < n; q++ {
			if q == d.rank {
				continue
			}
			for k := 0; k < 2; k++ {
				v := d.cpu.PeekUncached(d.l.credit(d.rank, q)+mem.Addr(8*k), 8)
				if v == d.seen[2*q+k] {
					continue
				}
				if !first {
					return true
				}
				d.saw(q, k, v)
				changed = true
			}
		}
		if first {
			first = false
			if changed {
				return true
			}
		}
		for s := 0; s < n; s++ {
			if s != d.rank && d.cpu.PeekUncached(d.readyWord(s), 8) == d.recvd[s]+1 {
				return true
			}
		}
		return false
	}, d.watched()...)
}

// waitRoomCached is WaitRoom with ready_bit_cached: a spin through the
// cache on every ring slot and control word. Its first poll records every
// control word as seen (and ends the wait if one changed).
func (d *t3dDevice) waitRoomCached(p *sim.Proc) {
	d.watchLists()
	first := true
	d.cpu.SpinUntil(p, d.waitRoom, func() bool {
		if first {
			first = false
			changed := false
			for q := 0; q < d.l.procs; q++ {
				a := d.l.credit(d.rank, q)
				c, r := d.cpu.PeekUncached(a, 8), d.cpu.PeekUncached(a+8, 8)
				changed = changed || c != d.seen[2*q] || r != d.seen[2*q+1]
				d.saw(q, 0, c)
				d.saw(q, 1, r)
			}
			if changed {
				return true
			}
		}
		for q := 0; q < d.l.procs; q++ {
			a := d.l.credit(d.rank, q)
			if d.cpu.PeekUncached(a, 8) != d.seen[2*q] || d.cpu.PeekUncached(a+8, 8) != d.seen[2*q+1] {
				return true
			}
		}
		return d.arrived(p)
	}, d.watchAll...)
}

// AllocData returns this PE's eager buffer at dest once dest has released
// its previous use.
func (d *t3dDevice) AllocData(p *sim.Proc, dest, min, n int) (mem.Region, bool, error) {
	n = max(0, n)
	if n > d.l.eagerBytes {
		if min > d.l.eagerBytes {
			return mem.Region{}, false, fmt.Errorf("mpich %s: rank %d: %d bytes of data asked for, the eager buffer holds %d", d.l.device, d.rank, min, d.l.eagerBytes)
		}
		n = d.l.eagerBytes
	}
	rel := d.load(p, d.l.credit(d.rank, dest)+8)
	d.saw(dest, 1, rel)
	if d.esent[dest] != rel {
		return mem.Region{}, false, nil
	}
	a, err := d.l.eagerBuf(p, dest, d.rank)
	if err != nil {
		return mem.Region{}, false, err
	}
	d.esent[dest]++
	return mem.Region{Addr: a, Len: n}, true, nil
}

// DataCapacity is the size of an eager buffer.
func (d *t3dDevice) DataCapacity() int { return d.l.eagerBytes }

// DataAt is eager data in this PE's memory.
func (d *t3dDevice) DataAt(a mem.Addr, n int) mem.Region {
	return mem.Region{Mem: d.l.mems[d.rank], Addr: a, Len: n}
}

// PutData puts src into the eager buffer at dest and waits for delivery.
// ch_t3d first packs the data into the library's send buffer with the
// machine's memcpy (machines.Memcpy: 170 MB/s on the T3D) and puts from
// there: the copy "between the application memory and a buffer within the
// message passing library" that buffered sends need (papers/aclmpl-t3d.txt
// 4.2: "at least one extra data copy ... word aligned memcpy() speeds on
// the T3D are only 170MB/sec"), made by a library that, unlike CMMD and
// ACLMPL, supports "heterogeneous data types and computers" (section 3):
// the message is built in the library's buffer, where a heterogeneous
// library would convert it. The receiver's copy out of the eager buffer
// (GetData) is the second copy.
func (d *t3dDevice) PutData(p *sim.Proc, dest int, data, src mem.Region) {
	from := src.Addr
	if d.stage.Len >= src.Len && src.Len > 0 {
		machines.Memcpy(d.m, p, d.rank, d.stage.Addr, src.Addr, src.Len)
		from = d.stage.Addr
	}
	d.m.Put(p, d.rank, dest, data.Addr, from, src.Len)
	d.quiet(p)
}

// GetData copies eager data out of this PE's buffer with memcpy, after
// invalidating the lines the sender's put wrote.
func (d *t3dDevice) GetData(p *sim.Proc, dst, data mem.Region) {
	d.invalidate(p, data.Addr, data.Len)
	machines.Memcpy(d.m, p, d.rank, dst.Addr, data.Addr, data.Len)
}

// FreeData releases a sender's eager buffer: a put of the new released
// count into the sender's control block.
func (d *t3dDevice) FreeData(p *sim.Proc, data mem.Region) error {
	s, ok := d.l.eagerSender(d.rank, data.Addr)
	if !ok || s == d.rank {
		return fmt.Errorf("mpich %s: rank %d frees %#x, which is no sender's eager buffer", d.l.device, d.rank, data.Addr)
	}
	d.erel[s]++
	d.m.PutWord(p, d.rank, s, d.l.credit(s, d.rank)+8, d.erel[s])
	return nil
}

// ReceivedDirect drops the receiver's cached lines of a rendezvous receive
// buffer the sender has just put into (see invalidate).
func (d *t3dDevice) ReceivedDirect(p *sim.Proc, buf mem.Region) {
	d.invalidate(p, buf.Addr, buf.Len)
}

// PutDirect puts a rendezvous message straight into the receive buffer
// at dest and waits for its delivery.
func (d *t3dDevice) PutDirect(p *sim.Proc, dest int, dst mem.Addr, src mem.Region) error {
	d.m.Put(p, d.rank, dest, dst, src.Addr, src.Len)
	d.quiet(p)
	return nil
}

// DataPerSender: each sender has one eager buffer at each receiver.
func (d *t3dDevice) DataPerSender() bool { return true }

// putData is ch_t3d's data half (per-sender eager buffers in the
// receiver's memory, rendezvous data put straight into the receive
// buffer) for a device whose control packets take another path: ch_t3d's
// shared receive queue, ch_lfshmem's remote slots. It is no RoomWaiter:
// a sender that finds no room backs off and retries.
type putData struct{ d *t3dDevice }

func (x putData) AllocData(p *sim.Proc, dest, min, n int) (mem.Region, bool, error) {
	return x.d.AllocData(p, dest, min, n)
}
func (x putData) DataCapacity() int                   { return x.d.DataCapacity() }
func (x putData) DataAt(a mem.Addr, n int) mem.Region { return x.d.DataAt(a, n) }
func (x putData) PutData(p *sim.Proc, dest int, data, src mem.Region) {
	x.d.PutData(p, dest, data, src)
}
func (x putData) GetData(p *sim.Proc, dst, data mem.Region)   { x.d.GetData(p, dst, data) }
func (x putData) FreeData(p *sim.Proc, data mem.Region) error { return x.d.FreeData(p, data) }
func (x putData) ReceivedDirect(p *sim.Proc, buf mem.Region)  { x.d.ReceivedDirect(p, buf) }
func (x putData) PutDirect(p *sim.Proc, dest int, dst mem.Addr, src mem.Region) error {
	return x.d.PutDirect(p, dest, dst, src)
}
func (x putData) DataPerSender() bool { return true }

// waitWord spins until the word at a, which another PE writes by put,
// holds want: read without time (the load that follows is the poll that
// finds it), or through the cache with ready_bit_cached.
func (d *t3dDevice) waitWord(p *sim.Proc, why fmt.Stringer, a mem.Addr, want uint64) {
	d.cpu.SpinUntil(p, why, func() bool {
		if d.cached {
			return d.cpu.Load(p, a, 8) == want
		}
		return d.cpu.PeekUncached(a, 8) == want
	}, a)
}

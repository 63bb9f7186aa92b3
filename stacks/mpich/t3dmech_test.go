package mpich

import (
	"fmt"
	"math"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// sendTime is the time rank 0's MPI_Send of n bytes takes on a 2-PE T3D
// whose rank 1 has posted its receive, with rank 0's library send buffer
// taken away when unpacked; and the CPU statistics of both ranks after it.
func sendTime(t *testing.T, n int, unpacked bool) (sim.Time, [2]mem.Stats) {
	t.Helper()
	e := sim.NewEngine(1)
	w := newT3DWorld(t, e, 2, DefaultParamsFor(DeviceT3D))
	if unpacked {
		t3dOf(w.Rank(0).dev).stage = mem.Region{}
	}
	var took sim.Time
	var before [2]mem.Stats
	for me := 0; me < 2; me++ {
		r := w.Rank(me)
		e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
			b, _ := r.Buffer(n)
			before[me] = r.CPU().Stats()
			if me == 1 {
				if _, err := r.Recv(p, b, 0, 0); err != nil {
					t.Error(err)
				}
				return
			}
			p.Sleep(sim.Microsecond) // the receive is posted
			start := p.Now()
			if err := r.Send(p, b, 1, 0); err != nil {
				t.Error(err)
			}
			took = p.Now() - start
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	var d [2]mem.Stats
	for i := range d {
		s := w.Rank(i).CPU().Stats()
		d[i] = mem.Stats{Copies: s.Copies - before[i].Copies, CopiedBytes: s.CopiedBytes - before[i].CopiedBytes}
	}
	if got := w.Rank(0).Stats().Eager; got != 1 {
		t.Fatalf("%d bytes: %d eager packets, want 1", n, got)
	}
	return took, d
}

// TestT3DEagerSendTwoLibraryCopies: an MPI send of 1 KB on the T3D pays
// two library copies at the T3D's memcpy speed (papers/aclmpl-t3d.txt
// 4.2: 170 MB/s): the sender packs the data into its library send buffer
// before the put, the receiver copies it out of its eager buffer. Taking
// the sender's buffer away shortens MPI_Send by exactly one 1 KB memcpy
// (about 6 us).
func TestT3DEagerSendTwoLibraryCopies(t *testing.T) {
	const n = 1024
	packed, copies := sendTime(t, n, false)
	unpacked, _ := sendTime(t, n, true)
	if c := copies[0]; c.Copies != 1 || c.CopiedBytes != n {
		t.Errorf("sender: %d copies of %d bytes, want 1 of %d (the pack)", c.Copies, c.CopiedBytes, n)
	}
	// The receiver copies the data out of its eager buffer, and the
	// packet (its header) out of the sender's ring slot.
	if c := copies[1]; c.Copies != 2 || c.CopiedBytes != n+HeaderBytes {
		t.Errorf("receiver: %d copies of %d bytes, want 2 of %d (the data and the packet header)", c.Copies, c.CopiedBytes, n+HeaderBytes)
	}
	// One 1 KB memcpy on a T3D PE, measured on its own.
	e := sim.NewEngine(1)
	m, err := t3d.New(e, 1, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	src, _ := m.Alloc(0, "src", n)
	dst, _ := m.Alloc(0, "dst", n)
	var copyTime sim.Time
	e.Spawn("copy", func(p *sim.Proc) {
		m.CPU(0).Memcpy(p, dst.Addr, src.Addr, n)
		copyTime = p.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if us := copyTime.Micros(); math.Abs(us-n/170.0) > 0.1 {
		t.Errorf("1 KB memcpy %.3f us, want about %.3f (170 MB/s)", us, n/170.0)
	}
	if packed-unpacked != copyTime {
		t.Errorf("MPI_Send of 1 KB: %v packed, %v unpacked: the pack costs %v, want one memcpy, %v", packed, unpacked, packed-unpacked, copyTime)
	}
}

// iMisses runs rank 0 of a 2-PE T3D (instruction cache icacheKB) through
// reps 8-byte messages, either sending only (rank 1 only receives) or in a
// ping-pong, and returns rank 0's instruction-cache misses.
func iMisses(t *testing.T, icacheKB, reps int, pingPong bool) uint64 {
	t.Helper()
	e := sim.NewEngine(1)
	mp := t3d.DefaultParams()
	mp.ICacheKB = icacheKB
	m, err := t3d.New(e, 2, mp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(m, DefaultParamsFor(DeviceT3D))
	if err != nil {
		t.Fatal(err)
	}
	for me := 0; me < 2; me++ {
		r := w.Rank(me)
		e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
			b, _ := r.Buffer(8)
			for i := 0; i < reps; i++ {
				var err error
				switch {
				case me == 0:
					err = r.Send(p, b, 1, 0)
					if err == nil && pingPong {
						_, err = r.Recv(p, b, 1, 0)
					}
				default:
					_, err = r.Recv(p, b, 0, 0)
					if err == nil && pingPong {
						err = r.Send(p, b, 0, 0)
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return w.Rank(0).CPU().Stats().IMisses
}

// TestT3DInstructionCacheSensitivity: MPI's send and receive paths (6.8 KB
// of code each) do not fit the T3D's 8 KB instruction cache together. A
// process that only sends keeps its send path cached (its lines miss once);
// one that alternates sending and receiving refetches the lines each path
// evicted from the other, every message; with a 16 KB cache both fit and
// only the first use misses.
func TestT3DInstructionCacheSensitivity(t *testing.T) {
	const reps = 10
	codeBytes := DefaultParams().codeBytes()
	lines := uint64((codeBytes + 31) / 32) // one path's 32-byte lines
	overlap := uint64((2*codeBytes - 8192 + 31) / 32)
	if got := iMisses(t, 8, reps, false); got != lines {
		t.Errorf("sending only: %d misses, want %d (the send path, once)", got, lines)
	}
	both := uint64((2*codeBytes + 31) / 32) // the two paths, one after the other
	if got := iMisses(t, 16, reps, true); got != both {
		t.Errorf("ping-pong, 16 KB cache: %d misses, want %d (both paths, once)", got, both)
	}
	got := iMisses(t, 8, reps, true)
	if want := uint64(2*reps-1) * overlap; got < want {
		t.Errorf("ping-pong, 8 KB cache: %d misses, want at least %d (the %d shared lines, each path, each message)", got, want, overlap)
	}
}

// swapCounter is a T3D that counts remote atomic swaps.
type swapCounter struct {
	*t3d.Machine
	swaps int
}

func (m *swapCounter) Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64 {
	m.swaps++
	return m.Machine.Swap(p, pe, target, a, v)
}

// TestT3DReceiveQueueTakesNoRemoteLock: ch_t3d's default receive queue,
// a pool whose slots senders claim with the receiver's
// fetch-and-increment register (papers/aclmpl-t3d.txt 4.2), and the
// per-sender rings, each slot written by one sender (4.1: "This avoids the
// need for locks"), take no remote lock in an all-to-all, where the shared
// queue (receive_queue shared) swaps for one on every packet.
func TestT3DReceiveQueueTakesNoRemoteLock(t *testing.T) {
	if q := DefaultParamsFor(DeviceT3D).ReceiveQueue; q != QueueFetchInc {
		t.Errorf("ch_t3d's default receive_queue is %s, want %s", q, QueueFetchInc)
	}
	for _, tc := range []struct {
		queue string
		none  bool
	}{{QueueFetchInc, true}, {QueuePerSender, true}, {QueueShared, false}} {
		e := sim.NewEngine(1)
		tm, err := t3d.New(e, 8, t3d.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		m := &swapCounter{Machine: tm}
		params := DefaultParamsFor(DeviceT3D)
		params.ReceiveQueue = tc.queue
		w, err := NewWorld(m, params)
		if err != nil {
			t.Fatal(err)
		}
		for me := 0; me < 8; me++ {
			r := w.Rank(me)
			e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
				b, _ := r.Buffer(64)
				for i := 1; i < 8; i++ {
					if err := r.Send(p, b, (me+i)%8, 0); err != nil {
						t.Error(err)
					}
					if _, err := r.Recv(p, b, (me+8-i)%8, 0); err != nil {
						t.Error(err)
					}
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if (m.swaps == 0) != tc.none {
			t.Errorf("receive_queue %s: %d remote swaps in an 8-PE all-to-all", tc.queue, m.swaps)
		}
	}
}

// fiCounter is a T3D that counts the fetch-and-increment register's reads
// by other PEs and resets by its owner, per PE.
type fiCounter struct {
	*t3d.Machine
	reads, resets []int
}

func (m *fiCounter) FetchInc(p *sim.Proc, pe, target int) uint64 {
	m.reads[pe]++
	return m.Machine.FetchInc(p, pe, target)
}

func (m *fiCounter) SetFetchInc(p *sim.Proc, pe int, v uint64) {
	m.resets[pe]++
	m.Machine.SetFetchInc(p, pe, v)
}

// fiWorld is ch_t3d with receive_queue fetch-inc and a pool of depth slots
// on a pes-PE T3D whose register accesses are counted.
func fiWorld(t *testing.T, e *sim.Engine, pes, depth int, queue string) (*World, *fiCounter) {
	t.Helper()
	tm, err := t3d.New(e, pes, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	m := &fiCounter{Machine: tm, reads: make([]int, pes), resets: make([]int, pes)}
	params := DefaultParamsFor(DeviceT3D)
	params.ReceiveQueue, params.QueuePackets = queue, depth
	w, err := NewWorld(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return w, m
}

// TestT3DFetchIncQueue: ch_t3d's default receive queue (t3dfiqueue.go). A
// sender claims a slot of the receiver's pool with one read of its
// fetch-and-increment register per packet (papers/aclmpl-t3d.txt 4.2); the
// receiver reads its pool in order, one load per poll, so what it loads
// does not grow with the partition (the per-sender rings' scan does); and
// when senders exhaust the pool they get out-of-bounds values and retry,
// and the receiver resets its register each time it has drained the pool,
// every message arriving intact.
func TestT3DFetchIncQueue(t *testing.T) {
	// Ping-pong of 8-byte messages between PEs 0 and 1, reps each way.
	const reps = 20
	pingPong := func(pes int, queue string) (*World, *fiCounter) {
		e := sim.NewEngine(1)
		w, m := fiWorld(t, e, pes, 16, queue)
		for me := 0; me < 2; me++ {
			r := w.Rank(me)
			e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
				b, _ := r.Buffer(8)
				for i := 0; i < reps; i++ {
					var err error
					if me == 0 {
						if err = r.Send(p, b, 1, 0); err == nil {
							_, err = r.Recv(p, b, 1, 0)
						}
					} else if _, err = r.Recv(p, b, 0, 0); err == nil {
						err = r.Send(p, b, 0, 0)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return w, m
	}
	w2, m2 := pingPong(2, QueueFetchInc)
	for pe := 0; pe < 2; pe++ {
		st := w2.Rank(pe).dev.(*t3dFIDevice).stats
		if m2.reads[pe] != reps || st.FetchIncs != reps || st.Full != 0 {
			t.Errorf("PE %d: %d register reads (%d counted, %d out of bounds) for %d packets, want one each, none out of bounds", pe, m2.reads[pe], st.FetchIncs, st.Full, reps)
		}
		if st.Taken != reps || st.Resets != reps/16 || m2.resets[pe] != reps/16 {
			t.Errorf("PE %d: took %d packets, %d resets (%d of the register), want %d and %d", pe, st.Taken, st.Resets, m2.resets[pe], reps, reps/16)
		}
	}
	w128, _ := pingPong(128, QueueFetchInc)
	u2, u128 := w2.Rank(1).CPU().Stats().Uncached, w128.Rank(1).CPU().Stats().Uncached
	if polls := w128.Rank(1).dev.(*t3dFIDevice).stats.Polls; u2 != u128 || u128 != polls {
		t.Errorf("PE 1's uncached loads: %d on 2 PEs, %d on 128 PEs, %d polls; want one per poll, the same on both", u2, u128, polls)
	}
	r2, _ := pingPong(2, QueuePerSender)
	r128, _ := pingPong(128, QueuePerSender)
	if a, b := r2.Rank(1).CPU().Stats().Uncached, r128.Rank(1).CPU().Stats().Uncached; b < 50*a {
		t.Errorf("per-sender rings: PE 1's uncached loads %d on 2 PEs, %d on 128 PEs; want the scan of 127 rings to show", a, b)
	}

	// Overflow: three senders post msgs messages each to PE 0, whose pool
	// holds depth packets, while PE 0 computes; then PE 0 receives them.
	const depth, msgs, senders = 4, 6, 3
	e := sim.NewEngine(1)
	w, m := fiWorld(t, e, senders+1, depth, QueueFetchInc)
	for me := 0; me <= senders; me++ {
		r := w.Rank(me)
		e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
			b, _ := r.Buffer(64)
			if me == 0 {
				p.Sleep(200 * sim.Microsecond)
				for s := 1; s <= senders; s++ {
					for k := 0; k < msgs; k++ {
						if _, err := r.Recv(p, b, s, k); err != nil {
							t.Error(err)
							return
						}
						want := make([]byte, 64)
						fillT3D(want, uint64(100*s+k))
						if string(b.Bytes()) != string(want) {
							t.Errorf("message %d from PE %d corrupted", k, s)
						}
					}
				}
				return
			}
			var qs []stacks.Request
			for k := 0; k < msgs; k++ {
				bk, _ := r.Buffer(64)
				fillT3D(bk.Bytes(), uint64(100*me+k))
				q, err := r.Isend(p, bk, 0, k)
				if err != nil {
					t.Error(err)
					return
				}
				qs = append(qs, q)
			}
			for _, q := range qs {
				if _, err := q.Wait(p); err != nil {
					t.Error(err)
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := w.Rank(0).dev.(*t3dFIDevice).stats
	if st.Taken != senders*msgs || st.Resets != senders*msgs/depth || m.resets[0] != int(st.Resets) {
		t.Errorf("PE 0 took %d packets with %d resets (%d of the register), want %d and %d", st.Taken, st.Resets, m.resets[0], senders*msgs, senders*msgs/depth)
	}
	var full uint64
	for s := 1; s <= senders; s++ {
		ss := w.Rank(s).dev.(*t3dFIDevice).stats
		if ss.FetchIncs != msgs+ss.Full || m.reads[s] != int(ss.FetchIncs) {
			t.Errorf("PE %d: %d register reads (%d at the machine) for %d packets and %d out-of-bounds tries", s, ss.FetchIncs, m.reads[s], msgs, ss.Full)
		}
		full += ss.Full
	}
	if full == 0 {
		t.Error("no sender found PE 0's pool exhausted")
	}
	t.Logf("overflow: %d resets, %d out-of-bounds register reads", st.Resets, full)
}

// TestT3DFetchIncAllToAll: an all-to-all on 64 PEs in which every PE
// sends to PE 0 first, then to PE 1, and so on (nonblocking sends, then
// the receives), into pools of two packets each, so that 63 senders keep
// exhausting each receiver's pool: every message arrives intact, nothing
// deadlocks (senders reading out-of-bounds values go on reading their own
// pools while they back off), and every pool was reset many times.
func TestT3DFetchIncAllToAll(t *testing.T) {
	const pes, n = 64, 64
	e := sim.NewEngine(1)
	w, _ := fiWorld(t, e, pes, 2, QueueFetchInc)
	for me := 0; me < pes; me++ {
		r := w.Rank(me)
		e.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
			var qs []stacks.Request
			for to := 0; to < pes; to++ {
				if to == me {
					continue
				}
				b, _ := r.Buffer(n)
				fillT3D(b.Bytes(), uint64(me*pes+to))
				q, err := r.Isend(p, b, to, 0)
				if err != nil {
					t.Error(err)
					return
				}
				qs = append(qs, q)
			}
			rb, _ := r.Buffer(n)
			want := make([]byte, n)
			for from := 0; from < pes; from++ {
				if from == me {
					continue
				}
				if _, err := r.Recv(p, rb, from, 0); err != nil {
					t.Error(err)
					return
				}
				fillT3D(want, uint64(from*pes+me))
				if string(rb.Bytes()) != string(want) {
					t.Errorf("PE %d: message from PE %d corrupted", me, from)
				}
			}
			for _, q := range qs {
				if _, err := q.Wait(p); err != nil {
					t.Error(err)
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	var full, resets uint64
	for pe := 0; pe < pes; pe++ {
		st := w.Rank(pe).dev.(*t3dFIDevice).stats
		if st.Taken != pes-1 {
			t.Errorf("PE %d took %d packets, want %d", pe, st.Taken, pes-1)
		}
		full += st.Full
		resets += st.Resets
	}
	if full == 0 || resets != pes*((pes-1)/2) {
		t.Errorf("%d out-of-bounds register reads, %d resets (want %d): the pools were not exhausted", full, resets, pes*((pes-1)/2))
	}
	t.Logf("%d out-of-bounds register reads, %d resets", full, resets)
}

package aclmpl

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

var _ stacks.Comm = (*PE)(nil)

func setup(t *testing.T, pes int, seed uint64, params Params) (*sim.Engine, *t3d.Machine, *Lib) {
	t.Helper()
	eng := sim.NewEngine(seed)
	m, err := t3d.New(eng, pes, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return eng, m, l
}

func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

func buffer(t *testing.T, x *PE, n int) mem.Region {
	b, err := x.Buffer(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pingPong returns the one-way time of a one-word message between PEs a and
// b with the synchronous protocol (half a round trip, after a warm-up).
func pingPong(t *testing.T, pes, a, b int) sim.Time { return pingPongBytes(t, pes, a, b, 8) }

// pingPongBytes is pingPong with n-byte messages.
func pingPongBytes(t *testing.T, pes, a, b, n int) sim.Time {
	eng, _, l := setup(t, pes, 1, DefaultParams())
	const iters = 10
	var start, end sim.Time
	for _, me := range []int{a, b} {
		x := l.PE(me)
		other := a + b - me
		eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
			buf := buffer(t, x, max(n, 8)).Slice(0, n)
			for i := 0; i <= iters; i++ {
				if i == 1 && me == a {
					start = p.Now()
				}
				if me == a {
					must(t, x.Send(p, buf, other, 0))
					_, err := x.Recv(p, buf, other, 0)
					must(t, err)
				} else {
					_, err := x.Recv(p, buf, other, 0)
					must(t, err)
					must(t, x.Send(p, buf, other, 0))
				}
			}
			if me == a {
				end = p.Now()
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	return (end - start) / (2 * iters)
}

func must(t *testing.T, err error) {
	if err != nil {
		t.Error(err)
	}
}

// TestSyncLatencyCalibration: "4.5 microseconds for a one word message
// transmitted between direct neighbor PEs" (4.1), within 15%.
func TestSyncLatencyCalibration(t *testing.T) {
	lat := pingPong(t, 128, 0, 1)
	t.Logf("one-word synchronous latency PE0-PE1: %v", lat)
	if us := lat.Micros(); us < 4.5*0.85 || us > 4.5*1.15 {
		t.Errorf("one-word latency %.2f us, want 4.5 us within 15%%", us)
	}
	if far := pingPong(t, 128, 0, 127); far <= lat {
		t.Errorf("latency to a distant PE (%v) not above a neighbour's (%v)", far, lat)
	}
}

// TestSyncEmptyMessage: an empty synchronous message is the request and
// the completion block only (Figure 1 without the data transfer): no
// 0-byte put, so its one-way time is below a one-word message's by at
// least the put start-up and the wait for the data's acknowledgement.
func TestSyncEmptyMessage(t *testing.T) {
	word, empty := pingPong(t, 2, 0, 1), pingPongBytes(t, 2, 0, 1, 0)
	startup := sim.Time(t3d.DefaultParams().PutStartupNs * float64(sim.Nanosecond))
	t.Logf("one-way: 8 bytes %v, 0 bytes %v (put start-up %v)", word, empty, startup)
	if empty >= word-startup {
		t.Errorf("0-byte one-way time %v not below the 8-byte one (%v) by the put start-up %v: a data put is still issued", empty, word, startup)
	}
}

type msg struct{ src, dst, n, tag int }

func randomMessages(r *rand.Rand, pes, count, maxLen int) []msg {
	ms := make([]msg, count)
	for i := range ms {
		s := r.IntN(pes)
		d := r.IntN(pes - 1)
		if d >= s {
			d++
		}
		n := r.IntN(maxLen + 1)
		if r.IntN(4) == 0 {
			n = r.IntN(16)
		}
		ms[i] = msg{src: s, dst: d, n: n, tag: r.IntN(3)}
	}
	return ms
}

// TestSyncRandomMessages delivers many random messages with the
// synchronous protocol, processed in one global order (deadlock-free), and
// checks every byte.
func TestSyncRandomMessages(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		pes := []int{2, 3, 8, 16, 5}[seed-1]
		eng, _, l := setup(t, pes, seed, DefaultParams())
		ms := randomMessages(rand.New(rand.NewPCG(seed, 1)), pes, 200, 5000)
		delivered := 0
		for me := 0; me < pes; me++ {
			x := l.PE(me)
			eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
				buf := buffer(t, x, 5000)
				for k, m := range ms {
					switch me {
					case m.src:
						fill(buf.Bytes()[:m.n], seed*1000+uint64(k))
						must(t, x.Send(p, buf.Slice(0, m.n), m.dst, m.tag))
					case m.dst:
						st, err := x.Recv(p, buf, m.src, m.tag)
						must(t, err)
						want := make([]byte, m.n)
						fill(want, seed*1000+uint64(k))
						if st.Len != m.n || string(buf.Bytes()[:m.n]) != string(want) {
							t.Errorf("seed %d: message %d (%d->%d, %d bytes) corrupted: got %d bytes", seed, k, m.src, m.dst, m.n, st.Len)
						}
						delivered++
					}
				}
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if delivered != len(ms) {
			t.Errorf("seed %d: %d of %d messages delivered", seed, delivered, len(ms))
		}
	}
}

// TestAsyncRandomMessages: every PE fires all its asynchronous sends at
// once into small pools (forcing overflows, copy-outs and resets while
// senders are blocked), then receives its messages; nothing may be lost or
// corrupted.
func TestAsyncRandomMessages(t *testing.T) {
	params := Params{PoolSlots: 4, SlotBytes: 256, RetryUs: 1, InvalidateReceive: true}
	for seed := uint64(1); seed <= 5; seed++ {
		pes := []int{2, 4, 8, 16, 7}[seed-1]
		eng, _, l := setup(t, pes, seed, params)
		ms := randomMessages(rand.New(rand.NewPCG(seed, 2)), pes, 150, 1500)
		delivered := 0
		for me := 0; me < pes; me++ {
			x := l.PE(me)
			eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
				for k, m := range ms {
					if m.src == me {
						b := buffer(t, x, m.n)
						fill(b.Bytes(), seed*1000+uint64(k))
						if _, err := x.Isend(p, b, m.dst, m.tag); err != nil {
							t.Error(err)
						}
					}
				}
				buf := buffer(t, x, 1500)
				for k, m := range ms {
					if m.dst != me {
						continue
					}
					req, err := x.Irecv(p, buf, m.src, m.tag)
					must(t, err)
					st, err := req.Wait(p)
					must(t, err)
					want := make([]byte, m.n)
					fill(want, seed*1000+uint64(k))
					if st.Len != m.n || st.Source != m.src || string(buf.Bytes()[:m.n]) != string(want) {
						t.Errorf("seed %d: message %d (%d->%d tag %d, %d bytes) corrupted: status %+v", seed, k, m.src, m.dst, m.tag, m.n, st)
					}
					delivered++
				}
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if delivered != len(ms) {
			t.Errorf("seed %d: %d of %d messages delivered", seed, delivered, len(ms))
		}
		resets := 0
		for i := 0; i < pes; i++ {
			resets += l.PE(i).AsyncStats().Resets
		}
		if resets == 0 {
			t.Errorf("seed %d: no pool overflow happened; the test must exercise resets", seed)
		}
	}
}

// TestAsyncBurstOverflow: many senders burst into one receiver whose pool
// is smaller than the burst; the receiver drains with AnySource. The
// receiver's memcpy reads pool buffers through its non-coherent cache, so
// a buffer reused after a reset is seen fresh only because the receive
// invalidates its lines first: with invalidate_receive off, stale lines
// show up as corrupted messages.
func TestAsyncBurstOverflow(t *testing.T) {
	for _, invalidate := range []bool{true, false} {
		burstOverflow(t, invalidate)
	}
}

func burstOverflow(t *testing.T, invalidate bool) {
	const pes, per = 16, 6
	eng, _, l := setup(t, pes, 3, Params{PoolSlots: 8, SlotBytes: 512, RetryUs: 1, InvalidateReceive: invalidate})
	got := map[[2]int]bool{}
	corrupted := 0
	for me := 0; me < pes; me++ {
		x := l.PE(me)
		eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
			if me != 0 {
				b := buffer(t, x, 1000)
				for i := 0; i < per; i++ {
					binary.LittleEndian.PutUint64(b.Bytes(), uint64(me*100+i))
					fill(b.Bytes()[8:], uint64(me*100+i))
					must(t, x.AsyncSend(p, b, 0, i))
				}
				return
			}
			// A first non-blocking receive finds nothing yet.
			buf := buffer(t, x, 1000)
			req, _ := x.AsyncRecv(p, buf, stacks.AnySource, stacks.AnyTag)
			if done, _, _ := req.Test(p); done {
				t.Error("Test found a message before any was sent")
			}
			for k := 0; k < (pes-1)*per; k++ {
				req, _ := x.AsyncRecv(p, buf, stacks.AnySource, stacks.AnyTag)
				st, err := req.Wait(p)
				must(t, err)
				id := binary.LittleEndian.Uint64(buf.Bytes())
				want := make([]byte, 992)
				fill(want, id)
				if string(buf.Bytes()[8:]) != string(want) || int(id)/100 != st.Source || int(id)%100 != st.Tag {
					corrupted++
					if invalidate {
						t.Errorf("message %d from %d corrupted", id, st.Source)
					}
				}
				got[[2]int{st.Source, st.Tag}] = true
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if !invalidate {
		if corrupted == 0 {
			t.Error("invalidate_receive false: no message corrupted by a stale pool line")
		}
		return
	}
	if len(got) != (pes-1)*per {
		t.Errorf("%d distinct messages received, want %d", len(got), (pes-1)*per)
	}
	if s := l.PE(0).AsyncStats(); s.Resets == 0 || s.CopyOuts == 0 {
		t.Errorf("receiver stats %+v: want overflows with copy-outs", s)
	}
}

// maxOp is a user operator (element-wise maximum of uint32).
var maxOp = stacks.Op{Name: "max_uint32", ElemBytes: 4, CyclesPerElem: 5, Combine: func(acc, in []byte) {
	for i := 0; i+4 <= len(acc); i += 4 {
		if v := binary.LittleEndian.Uint32(in[i:]); v > binary.LittleEndian.Uint32(acc[i:]) {
			binary.LittleEndian.PutUint32(acc[i:], v)
		}
	}
}}

func TestGlobalOperations(t *testing.T) {
	for _, pes := range []int{1, 2, 3, 5, 8, 12, 16, 33, 128} {
		for _, kind := range []string{"bcast", "tree", "binary-swap"} {
			for _, elems := range []int{1, 7, 1024} {
				root := pes / 3
				eng, _, l := setup(t, pes, 1, DefaultParams())
				value := func(pe, i int) uint32 { return uint32((pe*7919 + i*31) % 100003) }
				for me := 0; me < pes; me++ {
					x := l.PE(me)
					eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
						buf := buffer(t, x, 4*elems)
						for i := 0; i < elems; i++ {
							binary.LittleEndian.PutUint32(buf.Bytes()[4*i:], value(me, i))
						}
						var err error
						switch kind {
						case "bcast":
							err = x.Bcast(p, buf, root)
						case "tree":
							err = x.TreeReduce(p, buf, maxOp, root)
						default:
							err = x.BinarySwapReduce(p, buf, maxOp, root)
						}
						must(t, err)
						if kind != "bcast" && me != root {
							return
						}
						for i := 0; i < elems; i++ {
							want := value(root, i)
							if kind != "bcast" {
								want = 0
								for q := 0; q < pes; q++ {
									want = max(want, value(q, i))
								}
							}
							if got := binary.LittleEndian.Uint32(buf.Bytes()[4*i:]); got != want {
								t.Errorf("%s on %d PEs, %d elements: PE %d element %d = %d, want %d", kind, pes, elems, me, i, got, want)
								return
							}
						}
					})
				}
				if err := eng.Run(); err != nil {
					t.Fatalf("%s on %d PEs: %v", kind, pes, err)
				}
			}
		}
	}
}

// TestStaleLineWithoutInvalidation: the receiving program has read its
// buffer through the cache; a second message put into it is seen (through
// the cache, cpu.Peek) only if the receive invalidates the buffer's lines.
// Without, the program reads the first message's bytes: the stale line the
// T3D's missing coherence leaves.
func TestStaleLineWithoutInvalidation(t *testing.T) {
	for _, invalidate := range []bool{true, false} {
		params := DefaultParams()
		params.InvalidateReceive = invalidate
		eng, m, l := setup(t, 2, 1, params)
		const n = 256
		var seen []byte
		want := make([][]byte, 2)
		for k := range want {
			want[k] = make([]byte, n)
			fill(want[k], uint64(k+1))
		}
		eng.Spawn("pe0", func(p *sim.Proc) {
			buf := buffer(t, l.PE(0), n)
			for k := range want {
				m.CPU(0).Poke(buf.Addr, want[k])
				if err := l.PE(0).Send(p, buf, 1, 0); err != nil {
					t.Error(err)
				}
			}
		})
		eng.Spawn("pe1", func(p *sim.Proc) {
			x, cpu := l.PE(1), m.CPU(1)
			buf := buffer(t, x, n)
			for range want {
				if _, err := x.Recv(p, buf, 0, 0); err != nil {
					t.Error(err)
				}
				for a := buf.Addr; a < buf.Addr+n; a += 8 {
					cpu.Load(p, a, 8) // the program reads its data through the cache
				}
			}
			seen = make([]byte, n)
			cpu.Peek(buf.Addr, seen)
		})
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		if got := string(seen) == string(want[1]); got != invalidate {
			t.Errorf("invalidate_receive %v: program sees the second message: %v (stale first message: %v)", invalidate, got, string(seen) == string(want[0]))
		}
	}
}

// The spins' reasons, formatted only for a report, read as they did when
// every receive and send formatted them.
func TestSpinWhyText(t *testing.T) {
	for _, c := range []struct {
		why  spinWhy
		want string
	}{
		{spinWhy{rank: 3, peer: 1, kind: waitDone}, "aclmpl PE 3: receive from PE 1 waits for DONE"},
		{spinWhy{rank: 1048575, peer: 524287, kind: waitRequest}, "aclmpl PE 1048575: send to PE 524287 waits for its request block"},
		{spinWhy{rank: 2, peer: 0, kind: waitAsyncRecv}, "aclmpl PE 2: blocking asynchronous receive from PE 0 waits for a buffer"},
		{spinWhy{rank: 2, peer: stacks.AnySource, kind: waitAsyncRecv}, "aclmpl PE 2: blocking asynchronous receive from any PE waits for a buffer"},
	} {
		if got := c.why.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.why, got, c.want)
		}
	}
}

// TestReduceSwitchesToBinarySwap: the reduce primitive runs the tree below
// binary_swap_from_elems elements and the binary swap from there (4.3),
// taking exactly the time of the algorithm it picks; 0 keeps the tree.
func TestReduceSwitchesToBinarySwap(t *testing.T) {
	const pes = 8
	run := func(params Params, elems int, reduce func(x *PE, p *sim.Proc, buf mem.Region) error) sim.Time {
		eng, _, l := setup(t, pes, 1, params)
		for me := 0; me < pes; me++ {
			x := l.PE(me)
			eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
				buf := buffer(t, x, 4*elems)
				must(t, reduce(x, p, buf))
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		return eng.Now()
	}
	prim := func(x *PE, p *sim.Proc, buf mem.Region) error { return x.Reduce(p, buf, maxOp, 0) }
	tree := func(x *PE, p *sim.Proc, buf mem.Region) error { return x.TreeReduce(p, buf, maxOp, 0) }
	swap := func(x *PE, p *sim.Proc, buf mem.Region) error { return x.BinarySwapReduce(p, buf, maxOp, 0) }
	def := DefaultParams()
	never := DefaultParams()
	never.BinarySwapFromElems = 0
	for _, tc := range []struct {
		name   string
		params Params
		elems  int
		want   func(x *PE, p *sim.Proc, buf mem.Region) error
	}{
		{"below the threshold: tree", def, def.BinarySwapFromElems - 1, tree},
		{"at the threshold: binary swap", def, def.BinarySwapFromElems, swap},
		{"above: binary swap", def, 4 * def.BinarySwapFromElems, swap},
		{"0: tree at any length", never, 4 * def.BinarySwapFromElems, tree},
	} {
		got, want := run(tc.params, tc.elems, prim), run(tc.params, tc.elems, tc.want)
		if got != want {
			t.Errorf("%s (%d elements): Reduce took %v, the algorithm it should pick %v", tc.name, tc.elems, got, want)
		}
	}
	if a, b := run(def, 4096, tree), run(def, 4096, swap); a == b {
		t.Fatalf("tree and binary swap take the same time (%v): the test cannot tell them apart", a)
	}
}

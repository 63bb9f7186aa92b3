package mpich

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

func newWorld(t testing.TB, e *sim.Engine, procs int, params Params) *World {
	t.Helper()
	m, err := sx4.New(e, procs, sx4.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// pattern fills b with the bytes of message idx from src to dst.
func pattern(b []byte, seed uint64, src, dst, idx int) {
	x := seed ^ uint64(src)<<48 ^ uint64(dst)<<32 ^ uint64(idx)
	for i := range b {
		x = x*6364136223846793005 + 1442695040888963407
		b[i] = byte(x >> 56)
	}
	if len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, uint64(idx))
	}
}

type msg struct{ size, tag int }

// TestRandomTraffic: with fences on, thousands of messages of random sizes
// (all three protocols, long ones in several pool segments) and tags, on
// both devices with both locks, across seeds: none lost, none corrupted,
// FIFO order per pair honoured (receives by source and tag, and by
// AnySource/AnyTag).
func TestRandomTraffic(t *testing.T) {
	const procs, perPair = 4, 30
	total := 0
	for _, dev := range []string{DeviceShmem, DeviceLFShmem} {
		for _, lk := range []string{LockSysV, LockTAS} {
			for seed := uint64(1); seed <= 3; seed++ {
				for _, anySource := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/seed%d/any=%v", dev, lk, seed, anySource)
					total += procs * (procs - 1) * perPair
					t.Run(name, func(t *testing.T) {
						e := sim.NewEngine(seed)
						params := DefaultParams()
						params.Device, params.Lock = dev, lk
						params.ShortBytes, params.EagerBytes = 256, 4096
						params.SharedMemoryBytes, params.SlotProcs, params.QueuePackets = 96<<10, procs, 4
						runTraffic(t, e, newWorld(t, e, procs, params), params, seed, anySource, procs, perPair)
					})
				}
			}
		}
	}
	t.Logf("%d messages", total)
}

// runTraffic runs random traffic over w (built with params in e), every
// receive posted before the sends, and checks every byte and the order.
func runTraffic(t *testing.T, e *sim.Engine, w *World, params Params, seed uint64, anySource bool, procs, perPair int) {
	rng := rand.New(rand.NewPCG(seed, 99))
	// plan[src][dst]: the messages src sends to dst, in order.
	plan := make([][][]msg, procs)
	maxSize := 0
	for s := range plan {
		plan[s] = make([][]msg, procs)
		for d := range plan[s] {
			if d == s {
				continue
			}
			for k := 0; k < perPair; k++ {
				var n int
				switch x := rng.IntN(20); {
				case x < 10:
					n = rng.IntN(params.ShortBytes)
				case x < 17:
					n = params.ShortBytes + rng.IntN(params.EagerBytes-params.ShortBytes+1)
				default:
					n = params.EagerBytes + 1 + rng.IntN(150<<10)
				}
				maxSize = max(maxSize, n)
				plan[s][d] = append(plan[s][d], msg{size: n, tag: rng.IntN(3)})
			}
		}
	}
	received := 0
	for rank := 0; rank < procs; rank++ {
		r := w.Rank(rank)
		e.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			var recvs []stacks.Request
			var rbufs []mem.Region
			var from []int // expected source (or -1)
			var idxs []int
			// Post every receive first, in each sender's order.
			if anySource {
				for s := 0; s < procs; s++ {
					if s == rank {
						continue
					}
					for range plan[s][rank] {
						b, _ := r.Buffer(maxSize)
						q, err := r.Irecv(p, b, stacks.AnySource, stacks.AnyTag)
						if err != nil {
							t.Error(err)
							return
						}
						recvs, rbufs, from, idxs = append(recvs, q), append(rbufs, b), append(from, -1), append(idxs, -1)
					}
				}
			} else {
				for k := 0; k < perPair; k++ {
					for s := 0; s < procs; s++ {
						if s == rank {
							continue
						}
						m := plan[s][rank][k]
						b, _ := r.Buffer(m.size)
						q, err := r.Irecv(p, b, s, m.tag)
						if err != nil {
							t.Error(err)
							return
						}
						recvs, rbufs, from, idxs = append(recvs, q), append(rbufs, b), append(from, s), append(idxs, k)
					}
				}
			}
			var sends []stacks.Request
			for k := 0; k < perPair; k++ {
				for d := 0; d < procs; d++ {
					if d == rank {
						continue
					}
					m := plan[rank][d][k]
					b, _ := r.Buffer(m.size)
					pattern(b.Bytes(), seed, rank, d, k)
					q, err := r.Isend(p, b, d, m.tag)
					if err != nil {
						t.Error(err)
						return
					}
					sends = append(sends, q)
				}
			}
			next := make([]int, procs) // AnySource: next index expected per source
			for i, q := range recvs {
				st, err := q.Wait(p)
				if err != nil {
					t.Errorf("rank %d: %v", rank, err)
					return
				}
				src, k := from[i], idxs[i]
				if src < 0 {
					src, k = st.Source, next[st.Source]
					next[st.Source]++
				}
				m := plan[src][rank][k]
				if st.Source != src || st.Tag != m.tag || st.Len != m.size {
					t.Errorf("rank %d: receive %d: status %+v, want source %d tag %d len %d (FIFO order broken?)", rank, i, st, src, m.tag, m.size)
					return
				}
				want := make([]byte, m.size)
				pattern(want, seed, src, rank, k)
				got := rbufs[i].Bytes()[:m.size]
				for off := range want {
					if got[off] != want[off] {
						t.Errorf("rank %d: message %d from %d corrupted at offset %d at %v", rank, k, src, off, p.Now())
						return
					}
				}
				received++
			}
			for _, q := range sends {
				if _, err := q.Wait(p); err != nil {
					t.Errorf("rank %d: send: %v", rank, err)
					return
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if want := procs * (procs - 1) * perPair; received != want {
		t.Fatalf("%d messages received, want %d (lost messages)", received, want)
	}
}

// TestProtocolSwitch: the protocol changes exactly at the configured
// thresholds, and long messages take one data packet per pool segment.
func TestProtocolSwitch(t *testing.T) {
	params := DefaultParams()
	params.ShortBytes, params.EagerBytes = 100, 1000
	for _, tc := range []struct {
		size int
		want Stats
	}{
		{0, Stats{Short: 1}},
		{99, Stats{Short: 1}},
		{100, Stats{Eager: 1}},
		{1000, Stats{Eager: 1}},
		{1001, Stats{RTS: 1, Data: 1}},
		{3500000, Stats{RTS: 1, Data: 1}},
		{4000000, Stats{RTS: 1, Data: 2}}, // the pool holds about 3.9 MB here: two segments
	} {
		e := sim.NewEngine(1)
		w := newWorld(t, e, 2, params)
		e.Spawn("sender", func(p *sim.Proc) {
			b, _ := w.Rank(0).Buffer(tc.size)
			if err := w.Rank(0).Send(p, b, 1, 5); err != nil {
				t.Error(err)
			}
		})
		e.Spawn("receiver", func(p *sim.Proc) {
			b, _ := w.Rank(1).Buffer(tc.size)
			if _, err := w.Rank(1).Recv(p, b, 0, 5); err != nil {
				t.Error(err)
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if got := w.Rank(0).Stats(); got != tc.want {
			t.Errorf("%d bytes: sender sent %+v, want %+v", tc.size, got, tc.want)
		}
		wantOK := 0
		if tc.want.RTS > 0 {
			wantOK = 1
		}
		if got := w.Rank(1).Stats().OK; got != wantOK {
			t.Errorf("%d bytes: receiver sent %d ok-to-send, want %d", tc.size, got, wantOK)
		}
	}
}

func TestBadParams(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Params)
		want string
	}{
		{func(p *Params) { p.Device = "ch_p4" }, "device"},
		{func(p *Params) { p.Lock = "mutex" }, "lock"},
		{func(p *Params) { p.EagerBytes = 10 }, "eager_bytes"},
		{func(p *Params) { p.SharedMemoryBytes = 64 << 20 }, "segment limit"},
		{func(p *Params) { p.SharedMemoryBytes = 32*32*1152 + 256 }, "no room for the data pool"},
		{func(p *Params) { p.SharedMemoryBytes = 1 << 20 }, "slot_procs: 32x32 packet slots of 1152 bytes do not fit"},
		{func(p *Params) { p.Device, p.QueuePackets = DeviceShmem, 1<<62 }, "queue_packets: 4611686018427387904 packets"},
		{func(p *Params) { p.Device, p.RingPackets = DeviceT3D, 1<<62 }, "ring_packets: must be between 1 and 1024"},
		{func(p *Params) { p.ShortBytes, p.EagerBytes = math.MaxInt, math.MaxInt }, "short_bytes: must be between 1 and"},
		{func(p *Params) { p.EagerBytes = 4 << 30 }, "eager_bytes: 4294967296 exceeds the machine's memory"},
		{func(p *Params) { p.SlotProcs = 1 }, "slot_procs: 1 is smaller than the number of processes (2)"},
	} {
		p := DefaultParams()
		tc.mod(&p)
		m, _ := sx4.New(sim.NewEngine(1), 2, sx4.DefaultParams())
		if _, err := NewWorld(m, p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error mentioning %q", err, tc.want)
		}
	}
}

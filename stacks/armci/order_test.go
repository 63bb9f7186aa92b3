package armci

import (
	"bytes"
	"testing"

	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// TestFenceWaitsForRemoteCompletion: a strided put returns at local
// completion: at that moment its data is not yet at the target (the test
// observes the old bytes); after Fence it is.
func TestFenceWaitsForRemoteCompletion(t *testing.T) {
	var atReturn, atFence bool
	run(t, 2, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
		addrs, _ := r.Malloc(p, 4096)
		if r.id == 0 {
			src, _ := r.Buffer(4096)
			for i := range src.Bytes() {
				src.Bytes()[i] = byte(i%251 + 1)
			}
			s := stacks.Strided{Src: src.Addr, SrcStride: []int{64}, Dst: addrs[1], DstStride: []int{64}, Count: []int{32, 64}}
			if err := r.PutS(p, s, 1); err != nil {
				t.Error(err)
			}
			remote := r.w.m.(*sp.Machine).Memory(1).Bytes(addrs[1], 32)
			atReturn = bytes.Equal(remote, src.Bytes()[:32])
			r.Fence(p, 1)
			atFence = bytes.Equal(remote, src.Bytes()[:32])
		}
		r.Barrier(p)
	})
	if atReturn || !atFence {
		t.Fatalf("data at the target when PutS returned: %v (want false); after Fence: %v (want true)", atReturn, atFence)
	}
}

// TestOrdering: operations to one rank complete in order: a put by active
// message (completed later, in the target's completion thread) followed by
// a per-block LAPI put of other bytes to the same place and a get: the get
// sees the second put. To different ranks no order holds: a large put to
// rank 1 issued before a small one to rank 2 arrives after it.
func TestOrdering(t *testing.T) {
	var got []byte
	var firstAt, secondAt sim.Time
	run(t, 3, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
		addrs, _ := r.Malloc(p, 1<<16)
		if r.id == 0 {
			a, _ := r.Buffer(1 << 16)
			b, _ := r.Buffer(64)
			for i := range a.Bytes() {
				a.Bytes()[i] = 0xAA
			}
			for i := range b.Bytes() {
				b.Bytes()[i] = 0xBB
			}
			// AM put of 8 blocks of 8 bytes, then a contiguous LAPI put over the first block.
			s := stacks.Strided{Src: a.Addr, SrcStride: []int{16}, Dst: addrs[1], DstStride: []int{16}, Count: []int{8, 8}}
			if err := r.PutS(p, s, 1); err != nil {
				t.Error(err)
			}
			if err := r.PutS(p, stacks.Contiguous(b.Addr, addrs[1], 8), 1); err != nil {
				t.Error(err)
			}
			back, _ := r.Buffer(8)
			if err := r.GetS(p, stacks.Contiguous(addrs[1], back.Addr, 8), 1); err != nil {
				t.Error(err)
			}
			got = append([]byte(nil), back.Bytes()...)

			// Different targets: 60 KB to rank 1, then 8 bytes to rank 2.
			m := r.w.m.(*sp.Machine)
			mon := p.Engine().Spawn("monitor", func(q *sim.Proc) {
				for firstAt == 0 || secondAt == 0 {
					q.Sleep(sim.Micro(1))
					if firstAt == 0 && m.Memory(1).Bytes(addrs[1]+60000-1, 1)[0] == 0xAA {
						firstAt = q.Now()
					}
					if secondAt == 0 && m.Memory(2).Bytes(addrs[2], 1)[0] == 0xBB {
						secondAt = q.Now()
					}
				}
			})
			_ = mon
			r.PutS(p, stacks.Contiguous(a.Addr, addrs[1], 60000), 1)
			r.PutS(p, stacks.Contiguous(b.Addr, addrs[2], 8), 2)
			r.AllFence(p)
		}
		r.Barrier(p)
	})
	if !bytes.Equal(got, bytes.Repeat([]byte{0xBB}, 8)) {
		t.Errorf("get after two puts to one rank read %x, want the second put's bb...", got)
	}
	if !(secondAt < firstAt) {
		t.Errorf("the put to rank 2 (issued second) arrived at %v, the one to rank 1 at %v: want the second first", secondAt, firstAt)
	}
}

// TestVectorRoundTrip: a gather of every third double and a scatter back
// through GetV and PutV (per-block LAPI for 2 elements, active messages
// above) are bit-exact; AccV adds.
func TestVectorRoundTrip(t *testing.T) {
	for _, n := range []int{1, 2, 3, 50, 2000} {
		var bad string
		_, m, _ := run(t, 2, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
			addrs, _ := r.Malloc(p, 3*8*n)
			if r.id == 0 {
				mm := r.w.m.(*sp.Machine)
				rem := mm.Memory(1).Bytes(addrs[1], 3*8*n)
				for i := range rem {
					rem[i] = byte(i*13 + 5)
				}
				loc, _ := r.Buffer(8 * n)
				v := stacks.GIOV{Bytes: 8}
				for i := 0; i < n; i++ {
					v.Src = append(v.Src, addrs[1]+memAddr(24*i))
					v.Dst = append(v.Dst, loc.Addr+memAddr(8*i))
				}
				if err := r.GetV(p, []stacks.GIOV{v}, 1); err != nil {
					t.Error(err)
				}
				for i := 0; i < n; i++ {
					if !bytes.Equal(loc.Bytes()[8*i:8*i+8], rem[24*i:24*i+8]) {
						bad = "GetV differs"
					}
				}
				// Scatter them one element further on.
				w := stacks.GIOV{Bytes: 8}
				for i := 0; i < n; i++ {
					w.Src = append(w.Src, loc.Addr+memAddr(8*i))
					w.Dst = append(w.Dst, addrs[1]+memAddr(24*i+8))
				}
				if err := r.PutV(p, []stacks.GIOV{w}, 1); err != nil {
					t.Error(err)
				}
				r.Fence(p, 1)
				for i := 0; i < n; i++ {
					if !bytes.Equal(rem[24*i+8:24*i+16], rem[24*i:24*i+8]) {
						bad = "PutV differs"
					}
				}
			}
			r.Barrier(p)
		})
		if bad != "" {
			t.Errorf("%d elements: %s", n, bad)
		}
		if n >= 50 && m.Stats().AMs < 2 {
			t.Errorf("%d elements: %d active messages, want the AM protocol", n, m.Stats().AMs)
		}
	}
}

// TestShortPut: a small strided put (8 blocks of 8 bytes) and its Fence
// complete sooner when the data rides in the user header and the header
// handler stores it than through the completion thread (by at least its
// hand-off, completion_us), and both store the same bytes.
func TestShortPut(t *testing.T) {
	times := map[int]sim.Time{}
	for _, short := range []int{900, 0} {
		par := DefaultParams()
		par.ShortPutBytes = short
		var got []byte
		runWith(t, 2, sp.DefaultParams(), par, func(p *sim.Proc, r *Rank) {
			addrs, _ := r.Malloc(p, 256)
			if r.id == 0 {
				src, _ := r.Buffer(128)
				for i := range src.Bytes() {
					src.Bytes()[i] = byte(i + 1)
				}
				t0 := p.Now()
				s := stacks.Strided{Src: src.Addr, SrcStride: []int{16}, Dst: addrs[1], DstStride: []int{32}, Count: []int{8, 8}}
				if err := r.PutS(p, s, 1); err != nil {
					t.Error(err)
				}
				r.Fence(p, 1)
				times[short] = p.Now() - t0
				got = append([]byte(nil), r.w.m.(*sp.Machine).Memory(1).Bytes(addrs[1], 256)...)
			}
			r.Barrier(p)
		})
		for k := 0; k < 8; k++ {
			for i := 0; i < 8; i++ {
				if got[32*k+i] != byte(16*k+i+1) {
					t.Fatalf("short_put_bytes %d: block %d byte %d = %d", short, k, i, got[32*k+i])
				}
			}
		}
	}
	if times[900]+sim.Micro(sp.DefaultParams().CompletionUs) > times[0] {
		t.Errorf("short put and fence %v, through the completion thread %v: want the short one faster by the hand-off", times[900], times[0])
	}
	t.Logf("short %v, long %v", times[900], times[0])
}

package armci

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// world opens ARMCI on an SP of n nodes and runs body on every rank.
func run(t *testing.T, n int, mpar sp.Params, body func(p *sim.Proc, r *Rank)) (*sim.Engine, *sp.Machine, []*Rank) {
	t.Helper()
	return runWith(t, n, mpar, DefaultParams(), body)
}

// runWith is run with ARMCI's params.
func runWith(t *testing.T, n int, mpar sp.Params, apar Params, body func(p *sim.Proc, r *Rank)) (*sim.Engine, *sp.Machine, []*Rank) {
	t.Helper()
	e := sim.NewEngine(1)
	m, err := sp.New(e, n, mpar)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(m, apar, openMPICH)
	if err != nil {
		t.Fatal(err)
	}
	var ranks []*Rank
	for _, x := range w.Ranks {
		r := x.(*Rank)
		ranks = append(ranks, r)
		e.Spawn(fmt.Sprintf("rank%d", r.id), func(p *sim.Proc) { body(p, r) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return e, m, ranks
}

// section is a random strided section of levels 1-3 with odd sizes, its
// source and destination strides at least the extents below them.
func section(rng *rand.Rand, elem int) (count, sstride, dstride []int, sbytes, dbytes int) {
	lv := 1 + rng.IntN(3)
	count = []int{elem * (1 + rng.IntN(9)) * (1 + 2*rng.IntN(3))}
	for i := 0; i < lv; i++ {
		count = append(count, 1+rng.IntN(7))
	}
	se, de := count[0], count[0]
	for i := 0; i < lv; i++ {
		ss := se + elem*rng.IntN(5)
		ds := de + elem*rng.IntN(5)
		sstride, dstride = append(sstride, ss), append(dstride, ds)
		se, de = ss*count[i+1], ds*count[i+1]
	}
	return count, sstride, dstride, se, de
}

// ref copies the section between Go slices (the expected result).
func ref(dst, src []byte, count, sstride, dstride []int, f func(d, s []byte)) {
	segs, _ := stridedSegs(stacks.Strided{SrcStride: sstride, DstStride: dstride, Count: count})
	for _, g := range segs {
		f(dst[g.dst:int(g.dst)+g.n], src[g.src:int(g.src)+g.n])
	}
}

// TestStridedRoundTrip: random sections put to a remote rank and got back
// arrive bit-exactly, through every protocol (per-block LAPI, active
// messages, chunked); the remote memory outside the section is untouched.
func TestStridedRoundTrip(t *testing.T) {
	const trials = 40
	rng := rand.New(rand.NewPCG(7, 9))
	type tc struct {
		count, ss, ds []int
		sb, db        int
	}
	var cases []tc
	for i := 0; i < trials; i++ {
		c, ss, ds, sb, db := section(rng, 1)
		cases = append(cases, tc{c, ss, ds, sb, db})
	}
	cases = append(cases, tc{[]int{16, 100}, []int{80}, []int{16}, 80 * 100, 1600}, tc{[]int{4096, 100}, []int{4096}, []int{8192}, 4096 * 100, 8192 * 100})
	var failures []string
	run(t, 3, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
		remote, err := r.Malloc(p, 1<<20)
		if err != nil {
			t.Error(err)
			return
		}
		if r.id != 0 {
			r.Barrier(p)
			return
		}
		src, _ := r.Buffer(1 << 20)
		back, _ := r.Buffer(1 << 20)
		for i, c := range cases {
			proc := 1 + i%2
			fill := src.Bytes()
			for j := range fill {
				fill[j] = byte(rng.Uint32())
			}
			rm := r.w.m.(*sp.Machine).Memory(proc).Bytes(remote[proc], c.db)
			before := append([]byte(nil), rm...)
			want := append([]byte(nil), before...)
			ref(want, fill, c.count, c.ss, c.ds, func(d, s []byte) { copy(d, s) })
			if err := r.PutS(p, stacks.Strided{Src: src.Addr, SrcStride: c.ss, Dst: remote[proc], DstStride: c.ds, Count: c.count}, proc); err != nil {
				t.Error(err)
				return
			}
			r.Fence(p, proc)
			if !bytes.Equal(rm, want) {
				failures = append(failures, fmt.Sprintf("case %d put %v: remote differs", i, c.count))
			}
			// Get it back with the strides swapped.
			clear(back.Bytes())
			if err := r.GetS(p, stacks.Strided{Src: remote[proc], SrcStride: c.ds, Dst: back.Addr, DstStride: c.ss, Count: c.count}, proc); err != nil {
				t.Error(err)
				return
			}
			wantBack := make([]byte, c.sb)
			ref(wantBack, fill, c.count, c.ss, c.ss, func(d, s []byte) { copy(d, s) })
			if !bytes.Equal(back.Bytes()[:c.sb], wantBack) {
				failures = append(failures, fmt.Sprintf("case %d get %v: differs", i, c.count))
			}
		}
		r.Barrier(p)
	})
	for _, f := range failures {
		t.Error(f)
	}
}

// TestAccumulateManyNodes: every rank accumulates into rank 0's array at
// once, in every type; the result is the exact sum (no lost update).
func TestAccumulateManyNodes(t *testing.T) {
	const n, elems, rounds = 6, 300, 3
	for _, typ := range []stacks.AccType{stacks.AccInt, stacks.AccDbl, stacks.AccCplx, stacks.AccDcpl} {
		var x []byte
		_, m, _ := run(t, n, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
			sz := elems * typ.Size()
			addrs, err := r.Malloc(p, sz)
			if err != nil {
				t.Error(err)
				return
			}
			y, _ := r.Buffer(sz)
			put := func(i int, v float64) {
				b := y.Bytes()[i*typ.Size():]
				switch typ {
				case stacks.AccInt:
					binary.LittleEndian.PutUint32(b, uint32(int32(v)))
				case stacks.AccDbl:
					binary.LittleEndian.PutUint64(b, mathBits64(v))
				case stacks.AccCplx:
					binary.LittleEndian.PutUint32(b, mathBits32(v))
					binary.LittleEndian.PutUint32(b[4:], mathBits32(-v))
				case stacks.AccDcpl:
					binary.LittleEndian.PutUint64(b, mathBits64(v))
					binary.LittleEndian.PutUint64(b[8:], mathBits64(-v))
				}
			}
			for i := 0; i < elems; i++ {
				put(i, float64(r.id+1+i%5))
			}
			for k := 0; k < rounds; k++ {
				// Odd blocks of 7 elements, stride 9: the AM protocol.
				s := stacks.Strided{Src: y.Addr, SrcStride: []int{9 * typ.Size()}, Dst: addrs[0], DstStride: []int{9 * typ.Size()}, Count: []int{7 * typ.Size(), elems / 9}}
				if err := r.AccS(p, typ, 2, s, 0); err != nil {
					t.Error(err)
				}
				// And one contiguous accumulate of the whole.
				if err := r.AccS(p, typ, 1, stacks.Contiguous(y.Addr, addrs[0], sz), 0); err != nil {
					t.Error(err)
				}
			}
			r.AllFence(p)
			r.Barrier(p)
			if r.id == 0 {
				x = append([]byte(nil), r.CPU().Memory().Bytes(addrs[0], sz)...)
			}
		})
		_ = m
		for i := 0; i < elems; i++ {
			var sum float64
			for id := 0; id < n; id++ {
				v := float64(id + 1 + i%5)
				w := 1.0
				if i%9 < 7 && i < (elems/9)*9 {
					w = 3
				}
				sum += rounds * w * v
			}
			got := readElem(typ, x[i*typ.Size():])
			if got != sum {
				t.Fatalf("%v: element %d = %v, want %v", typ, i, got, sum)
			}
		}
	}
}

func readElem(t stacks.AccType, b []byte) float64 {
	switch t {
	case stacks.AccInt:
		return float64(int32(binary.LittleEndian.Uint32(b)))
	case stacks.AccDbl, stacks.AccDcpl:
		return float64frombits(binary.LittleEndian.Uint64(b))
	default:
		return float64(float32frombits(binary.LittleEndian.Uint32(b)))
	}
}

// TestRmwDistinct: every rank's fetch-and-increments on one counter get
// distinct values, together 0..N-1; a swap returns the previous value.
func TestRmwDistinct(t *testing.T) {
	const n, k = 5, 7
	seen := map[int64]int{}
	var final int64
	run(t, n, sp.DefaultParams(), func(p *sim.Proc, r *Rank) {
		addrs, _ := r.Malloc(p, 8)
		for i := 0; i < k; i++ {
			v, err := r.Rmw(p, stacks.FetchAndAdd, 2, addrs[2], 1)
			if err != nil {
				t.Error(err)
			}
			seen[v]++
		}
		r.Barrier(p)
		if r.id == 0 {
			old, _ := r.Rmw(p, stacks.Swap, 2, addrs[2], -5)
			final = old
		}
	})
	if len(seen) != n*k || final != n*k {
		t.Fatalf("%d distinct values of %d, final %d", len(seen), n*k, final)
	}
	for v := int64(0); v < n*k; v++ {
		if seen[v] != 1 {
			t.Fatalf("value %d seen %d times", v, seen[v])
		}
	}
}

var _ = mem.Addr(0)

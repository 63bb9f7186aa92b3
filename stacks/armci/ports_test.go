package armci

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// ports are the machines ARMCI runs on: the same program runs unchanged on
// each.
var ports = []struct {
	name  string
	build func(e *sim.Engine, n int) (machines.Machine, error)
}{
	{"sp", func(e *sim.Engine, n int) (machines.Machine, error) { return sp.New(e, n, sp.DefaultParams()) }},
	{"t3d", func(e *sim.Engine, n int) (machines.Machine, error) { return t3d.New(e, n, t3d.DefaultParams()) }},
	{"sx4", func(e *sim.Engine, n int) (machines.Machine, error) { return sx4.New(e, n, sx4.DefaultParams()) }},
}

// runPort runs body on every rank of ARMCI on a port's machine.
func runPort(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), n int, body func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy)) {
	t.Helper()
	runPortWith(t, build, n, DefaultParams(), body)
}

// runPortWith is runPort with ARMCI's params.
func runPortWith(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), n int, par Params, body func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy)) {
	t.Helper()
	runPortSeeded(t, build, n, par, 1, body)
}

// runPortSeeded is runPortWith on an engine seeded with seed.
func runPortSeeded(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), n int, par Params, seed uint64, body func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy)) {
	t.Helper()
	e := sim.NewEngine(seed)
	m, err := build(e, n)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(m, par, openMPICH)
	if err != nil {
		t.Fatal(err)
	}
	all, err := stacks.As[stacks.RemoteCopy](w, "test", "remote copy")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range all {
		e.Spawn(fmt.Sprintf("rank%d", i), func(p *sim.Proc) { body(p, r, all) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestPortsRoundTrip: on every port, random strided sections (levels 1-3,
// odd sizes) and I/O vectors put, got back and accumulated are bit-exact
// (the remote bytes outside the section untouched).
func TestPortsRoundTrip(t *testing.T) {
	for _, port := range ports {
		t.Run(port.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var bad []string
			runPort(t, port.build, 3, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
				remote, err := r.Malloc(p, 1<<18)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Rank() == 0 {
					src, _ := r.Buffer(1 << 18)
					back, _ := r.Buffer(1 << 18)
					for i := 0; i < 20; i++ {
						proc := 1 + i%2
						c, ss, ds, sb, db := section(rng, 4)
						fill := src.Bytes()
						for j := range fill[:sb] {
							fill[j] = byte(rng.Uint32())
						}
						rm := all[proc].CPU().Memory().Bytes(remote[proc], db)
						want := append([]byte(nil), rm...)
						ref(want, fill, c, ss, ds, func(d, s []byte) { copy(d, s) })
						s := stacks.Strided{Src: src.Addr, SrcStride: ss, Dst: remote[proc], DstStride: ds, Count: c}
						if err := r.PutS(p, s, proc); err != nil {
							t.Error(err)
							return
						}
						r.Fence(p, proc)
						if !bytes.Equal(rm, want) {
							bad = append(bad, fmt.Sprintf("put %d %v", i, c))
						}
						// Accumulate the same section twice as int: x + 2y.
						ref(want, fill, c, ss, ds, func(d, s []byte) { accumulate(stacks.AccInt, 2, d, s) })
						if err := r.AccS(p, stacks.AccInt, 2, s, proc); err != nil {
							t.Error(err)
							return
						}
						r.Fence(p, proc)
						if !bytes.Equal(rm, want) {
							bad = append(bad, fmt.Sprintf("acc %d %v", i, c))
						}
						clear(back.Bytes()[:sb])
						if err := r.GetS(p, stacks.Strided{Src: remote[proc], SrcStride: ds, Dst: back.Addr, DstStride: ss, Count: c}, proc); err != nil {
							t.Error(err)
							return
						}
						wantBack := make([]byte, sb)
						ref(wantBack, want, c, ds, ss, func(d, s []byte) { copy(d, s) })
						if !bytes.Equal(back.Bytes()[:sb], wantBack) {
							bad = append(bad, fmt.Sprintf("get %d %v", i, c))
						}
						// A vector: every other 12-byte block of the remote, gathered.
						v := stacks.GIOV{Bytes: 12}
						for k := 0; k < 1+i*7; k++ {
							v.Src = append(v.Src, remote[proc]+memAddr(24*k))
							v.Dst = append(v.Dst, back.Addr+memAddr(12*k))
						}
						if err := r.GetV(p, []stacks.GIOV{v}, proc); err != nil {
							t.Error(err)
							return
						}
						for k := range v.Src {
							if !bytes.Equal(back.Bytes()[12*k:12*k+12], all[proc].CPU().Memory().Bytes(remote[proc]+memAddr(24*k), 12)) {
								bad = append(bad, fmt.Sprintf("getv %d block %d", i, k))
								break
							}
						}
						// Scatter them back one block further (PutV), then add them
						// there again as ints (AccV): each block ends as 3 times the
						// gathered one.
						pv := stacks.GIOV{Bytes: 12}
						for k := range v.Src {
							pv.Src = append(pv.Src, back.Addr+memAddr(12*k))
							pv.Dst = append(pv.Dst, remote[proc]+memAddr(24*k+12))
						}
						if err := r.PutV(p, []stacks.GIOV{pv}, proc); err != nil {
							t.Error(err)
							return
						}
						if err := r.AccV(p, stacks.AccInt, 2, []stacks.GIOV{pv}, proc); err != nil {
							t.Error(err)
							return
						}
						r.Fence(p, proc)
						for k := range v.Src {
							want := append([]byte(nil), back.Bytes()[12*k:12*k+12]...)
							accumulate(stacks.AccInt, 2, want, back.Bytes()[12*k:12*k+12])
							if !bytes.Equal(want, all[proc].CPU().Memory().Bytes(remote[proc]+memAddr(24*k+12), 12)) {
								bad = append(bad, fmt.Sprintf("putv+accv %d block %d", i, k))
								break
							}
						}
					}
				}
				r.Barrier(p)
			})
			for _, b := range bad {
				t.Error(b)
			}
		})
	}
}

// TestPortsContention: on every port, every rank accumulates into rank 0
// and fetch-and-increments one counter at once: the sum is exact and the
// counter values distinct.
func TestPortsContention(t *testing.T) {
	const n, elems, rounds = 6, 100, 4
	for _, port := range ports {
		t.Run(port.name, func(t *testing.T) {
			seen := map[int64]bool{}
			var x []byte
			runPort(t, port.build, n, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
				arr, _ := r.Malloc(p, 8*elems)
				ctr, _ := r.Malloc(p, 8)
				y, _ := r.Buffer(8 * elems)
				for i := 0; i < elems; i++ {
					binary.LittleEndian.PutUint64(y.Bytes()[8*i:], mathBits64(float64(r.Rank()+i)))
				}
				for k := 0; k < rounds; k++ {
					if err := r.AccS(p, stacks.AccDbl, 1, stacks.Contiguous(y.Addr, arr[0], 8*elems), 0); err != nil {
						t.Error(err)
					}
					v, err := r.Rmw(p, stacks.FetchAndAdd, 0, ctr[0], 1)
					if err != nil {
						t.Error(err)
					}
					if seen[v] {
						t.Errorf("value %d handed out twice", v)
					}
					seen[v] = true
				}
				r.AllFence(p)
				r.Barrier(p)
				if r.Rank() == 0 {
					x = append([]byte(nil), r.CPU().Memory().Bytes(arr[0], 8*elems)...)
				}
			})
			if len(seen) != n*rounds {
				t.Errorf("%d distinct counter values, want %d", len(seen), n*rounds)
			}
			for i := 0; i < elems; i++ {
				want := 0.0
				for id := 0; id < n; id++ {
					want += rounds * float64(id+i)
				}
				if got := float64frombits(binary.LittleEndian.Uint64(x[8*i:])); got != want {
					t.Fatalf("element %d = %v, want %v (a lost update)", i, got, want)
				}
			}
		})
	}
}

// TestMissingPort: a machine with neither LAPI nor SHMEM names both.
func TestMissingPort(t *testing.T) {
	_, err := Open(bare{}, DefaultParams(), openMPICH)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("LAPI")) || !bytes.Contains([]byte(err.Error()), []byte("swap")) {
		t.Fatalf("got %v", err)
	}
}

type bare struct{}

func (bare) Name() string        { return "bare" }
func (bare) Engine() *sim.Engine { return nil }
func (bare) Procs() int          { return 2 }

package armci

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/challenge"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// ports are the machines ARMCI runs on, each with the ranks the tests run
// (0: their own), and the port Open chooses there: the same program runs
// unchanged on each.
var ports = []struct {
	name  string
	build func(e *sim.Engine, n int) (machines.Machine, error)
	n     int
	port  string
}{
	{"sp", func(e *sim.Engine, n int) (machines.Machine, error) { return sp.New(e, n, sp.DefaultParams()) }, 0, portSP},
	{"t3d", func(e *sim.Engine, n int) (machines.Machine, error) { return t3d.New(e, n, t3d.DefaultParams()) }, 0, portSHMEM},
	{"sx4", func(e *sim.Engine, n int) (machines.Machine, error) { return sx4.New(e, n, sx4.DefaultParams()) }, 0, portShared},
	// The Power Challenge: the shared-memory port on snooping caches
	// (plain loads, LL/SC lock).
	{"challenge", func(e *sim.Engine, n int) (machines.Machine, error) {
		return challenge.New(e, n, challenge.DefaultParams())
	}, 0, portShared},
	// The T3D without its barrier network: the SHMEM port's barrier of
	// remote writes, with the swap lock.
	{"t3d-no-barrier", t3dNoBarrier, 0, portSHMEM},
	// The SCI cluster, one process per node: the SHMEM port with the
	// ticket lock on the adapter's fetch-and-increment and the barrier of
	// remote writes.
	{"sci", sciBuild, 0, portSHMEM},
	// Two processes per node on several nodes: the SHMEM port, some
	// targets on the caller's node (through its own adapter).
	{"sci-smp", sciReorder(200, 2), 0, portSHMEM},
	// Two processes on one node: the shared-memory port.
	{"sci-one-node", sciReorder(200, 2), 2, portShared},
}

// The ports, as portOf names them.
const (
	portSP     = "SP (LAPI)"
	portShared = "shared memory"
	portSHMEM  = "SHMEM"
)

// portOf names the port of an opened world.
func portOf(w *stacks.World) string {
	switch w.Ranks[0].(type) {
	case *Rank:
		return portSP
	case *shmRank:
		return portShared
	case *shmemRank:
		return portSHMEM
	}
	return fmt.Sprintf("%T", w.Ranks[0])
}

// sciBuild is an SCI cluster of one process per node.
func sciBuild(e *sim.Engine, n int) (machines.Machine, error) {
	return sci.New(e, n, sci.DefaultParams())
}

// shmemNoBarrier is the verbs of the T3D but its barrier network.
type shmemNoBarrier interface {
	machines.RemoteWrite
	machines.RemoteRead
	machines.Swap
}

// t3dNoBarrier is a T3D whose barrier network ARMCI does not see.
func t3dNoBarrier(e *sim.Engine, n int) (machines.Machine, error) {
	m, err := t3d.New(e, n, t3d.DefaultParams())
	if err != nil {
		return nil, err
	}
	return struct{ shmemNoBarrier }{m}, nil
}

// ranksOr is n, or def when n is 0.
func ranksOr(n, def int) int {
	if n == 0 {
		return def
	}
	return n
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
			n := ranksOr(port.n, 3)
			runPort(t, port.build, n, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
				remote, err := r.Malloc(p, 1<<18)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Rank() == 0 {
					src, _ := r.Buffer(1 << 18)
					back, _ := r.Buffer(1 << 18)
					for i := 0; i < 20; i++ {
						proc := 1 + i%(n-1)
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
	const elems, rounds = 100, 4
	for _, port := range ports {
		t.Run(port.name, func(t *testing.T) {
			n := ranksOr(port.n, 6)
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

// TestPortChoice: on each machine Open takes the first port whose verbs
// are there (LAPI; shared segments with every process on one node;
// remote write and read with a swap or a remote fetch-and-increment), or
// returns a *machines.MissingCapability naming what each port lacks.
func TestPortChoice(t *testing.T) {
	// sciNodes is an SCI cluster of 4 processes on 2 nodes.
	sciNodes := func(e *sim.Engine) machines.Machine {
		m, err := sciReorder(200, 2)(e, 4)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	sciVerbs := func(e *sim.Engine) *sci.Machine { return sciNodes(e).(*sci.Machine) }
	cases := []struct {
		name  string
		build func(e *sim.Engine) machines.Machine
		par   Params
		port  string   // the port chosen, or "" for an error
		want  []string // in the error
	}{
		{name: "bare", build: func(*sim.Engine) machines.Machine { return bare{} },
			want: []string{"machine bare", "the SP port's active-messages; the shared-memory port's shared-segments; the SHMEM port's remote-write, remote-read, swap or remote-fetch-inc"}},
		{name: "local only", build: func(e *sim.Engine) machines.Machine { return struct{ machines.Local }{sciVerbs(e)} },
			want: []string{"the SP port's active-messages; the shared-memory port's shared-segments; the SHMEM port's remote-write, remote-read, swap or remote-fetch-inc"}},
		{name: "segments on two nodes", build: func(e *sim.Engine) machines.Machine { return struct{ machines.SharedSegments }{sciVerbs(e)} },
			want: []string{"the shared-memory port's shared-segments with every process on one node (they are on 2 nodes); the SHMEM port's remote-write, remote-read, swap or remote-fetch-inc"}},
		{name: "no atomic", build: func(e *sim.Engine) machines.Machine { return struct{ rwrd }{sciVerbs(e)} },
			want: []string{"the SHMEM port's swap or remote-fetch-inc"}},
		{name: "one node without semaphores", build: func(e *sim.Engine) machines.Machine { m, _ := sciReorder(200, 2)(e, 2); return m },
			par: Params{Lock: LockSysV}, want: []string{"lock: sysv", "semaphores"}},
		{name: "sp", build: func(e *sim.Engine) machines.Machine { m, _ := sp.New(e, 2, sp.DefaultParams()); return m }, port: portSP},
		{name: "sx4", build: func(e *sim.Engine) machines.Machine { m, _ := sx4Build(e, 2); return m }, port: portShared},
		{name: "sx4 sysv", build: func(e *sim.Engine) machines.Machine { m, _ := sx4Build(e, 2); return m }, par: Params{Lock: LockSysV}, port: portShared},
		{name: "t3d", build: func(e *sim.Engine) machines.Machine { m, _ := t3dBuild(e, 2); return m }, port: portSHMEM},
		{name: "sci", build: func(e *sim.Engine) machines.Machine { m, _ := sciBuild(e, 2); return m }, port: portSHMEM},
		{name: "sci two per node", build: sciNodes, port: portSHMEM},
		{name: "sci one node", build: func(e *sim.Engine) machines.Machine { m, _ := sciReorder(200, 2)(e, 2); return m }, port: portShared},
		{name: "sci one process", build: func(e *sim.Engine) machines.Machine { m, _ := sciBuild(e, 1); return m }, port: portShared},
		{name: "sci sysv lock", build: func(e *sim.Engine) machines.Machine { m, _ := sciBuild(e, 2); return m }, par: Params{Lock: LockSysV},
			want: []string{"the SHMEM port has its own barrier and locks"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			par := DefaultParams()
			if c.par.Lock != "" {
				par.Lock = c.par.Lock
			}
			w, err := Open(c.build(sim.NewEngine(1)), par, openMPICH)
			if c.port != "" {
				if err != nil {
					t.Fatalf("Open: %v, want the %s port", err, c.port)
				}
				if got := portOf(w); got != c.port {
					t.Fatalf("port %s, want %s", got, c.port)
				}
				return
			}
			if err == nil {
				t.Fatalf("Open chose the %s port, want an error", portOf(w))
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			var mc *machines.MissingCapability
			if par.Lock == LockTAS && !errors.As(err, &mc) {
				t.Errorf("error %v is not a *machines.MissingCapability", err)
			}
		})
	}
}

// TestPortsChosen: every machine of ports gets the port the table says.
func TestPortsChosen(t *testing.T) {
	for _, port := range ports {
		m, err := port.build(sim.NewEngine(1), ranksOr(port.n, 3))
		if err != nil {
			t.Fatal(err)
		}
		w, err := Open(m, DefaultParams(), openMPICH)
		if err != nil {
			t.Fatalf("%s: %v", port.name, err)
		}
		if got := portOf(w); got != port.port {
			t.Errorf("%s: port %s, want %s", port.name, got, port.port)
		}
	}
}

// rwrd is remote write and read without an atomic.
type rwrd interface {
	machines.RemoteWrite
	machines.RemoteRead
}

type bare struct{}

func (bare) Name() string        { return "bare" }
func (bare) Engine() *sim.Engine { return nil }
func (bare) Procs() int          { return 2 }

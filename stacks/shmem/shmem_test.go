package shmem

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/challenge"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

var _ stacks.OneSided = (*PE)(nil)

// machinesUnderTest build each machine raw SHMEM opens on, with its
// defaults, and say whether its ranks offer swap.
var machinesUnderTest = []struct {
	name  string
	build func(eng *sim.Engine, procs int) (machines.Machine, error)
	swap  bool
}{
	{"t3d", func(eng *sim.Engine, n int) (machines.Machine, error) { return t3d.New(eng, n, t3d.DefaultParams()) }, true},
	{"sci", func(eng *sim.Engine, n int) (machines.Machine, error) { return sci.New(eng, n, sci.DefaultParams()) }, false},
	{"sp", func(eng *sim.Engine, n int) (machines.Machine, error) { return sp.New(eng, n, sp.DefaultParams()) }, true},
	// The SX-4: puts and gets as vector moves into and out of each
	// process's symmetric heap in System V segments, fetch-and-increment
	// under a test-and-set lock.
	{"sx4", func(eng *sim.Engine, n int) (machines.Machine, error) { return sx4.New(eng, n, sx4.DefaultParams()) }, false},
}

// TestOneSided: on every machine with remote writes and reads, a put lands
// at the symmetric address of each target after quiet, a get reads it
// back, fetch-and-increment hands out 0, 1, 2 to three PEs (the T3D's
// register, a counter word elsewhere), a swap (where the machine has one)
// returns the word it replaces; the ranks offer no message passing.
func TestOneSided(t *testing.T) {
	for _, mc := range machinesUnderTest {
		t.Run(mc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			m, err := mc.build(eng, 4)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Open(m, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if stacks.Offers[stacks.Comm](w) || !stacks.Offers[stacks.OneSided](w) || stacks.Offers[stacks.Swapper](w) != mc.swap {
				t.Fatalf("raw SHMEM ranks: want one-sided, swap %v, no message passing", mc.swap)
			}
			pes, _ := stacks.As[stacks.OneSided](w, "test", "one-sided")
			const n = 100
			var src0, sym0 mem.Addr // PE 0's send buffer, the symmetric buffer
			for i, x := range pes {
				sym, err := x.Symmetric(n)
				if err != nil {
					t.Fatal(err)
				}
				src, err := x.Buffer(n)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					src0, sym0 = src.Addr, sym.Addr
				} else if _, heap := m.(machines.SymmetricHeap); sym.Addr != sym0 && !heap {
					t.Fatalf("PE %d: symmetric buffer at %#x, PE 0's at %#x", i, sym.Addr, sym0)
				}
			}
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(7*i + 3)
			}
			pes[0].CPU().Poke(src0, data)
			got := make([]uint64, 4)
			back := make([][]byte, 4)
			var old [2]uint64
			eng.Spawn("pe0", func(p *sim.Proc) {
				x := pes[0]
				x.Put(p, 1, 0, 0, 0) // a put of 0 bytes
				for to := 1; to < 4; to++ {
					x.Put(p, to, sym0, src0, n)
				}
				x.PutWord(p, 3, sym0+n-8, 0xfeed)
				x.Quiet(p)
				dst, _ := x.Buffer(n)
				for from := 1; from < 4; from++ {
					x.Get(p, from, dst.Addr, sym0, n)
					back[from] = make([]byte, n)
					x.CPU().Peek(dst.Addr, back[from])
				}
				if sw, ok := x.(stacks.Swapper); ok {
					old[0] = sw.Swap(p, 2, sym0, 7)
					old[1] = sw.Swap(p, 2, sym0, 9)
				}
			})
			for i := 1; i < 4; i++ {
				eng.Spawn("pe", func(p *sim.Proc) { got[i] = pes[i].FetchInc(p, 0) + 100 })
			}
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			for from := 1; from < 4; from++ {
				want := append([]byte(nil), data...)
				if from == 3 {
					want[n-8], want[n-7] = 0xed, 0xfe
					clear(want[n-6:])
				}
				if string(back[from]) != string(want) {
					t.Errorf("get from PE %d of the put bytes: %v, want %v", from, back[from], want)
				}
			}
			seen := map[uint64]bool{}
			for _, v := range got[1:] {
				seen[v] = true
			}
			if !seen[100] || !seen[101] || !seen[102] {
				t.Errorf("fetch-and-increment results %v, want 0, 1, 2 (+100)", got[1:])
			}
			if mc.swap && old != [2]uint64{binary.LittleEndian.Uint64(data), 7} {
				t.Errorf("swaps returned %#x, want the word put there, then 7", old)
			}
			if d, ok := m.(machines.Delivered); ok && (d.Received(2) != n || d.Received(3) != n+8) {
				t.Errorf("delivered %d and %d bytes, want %d and %d", d.Received(2), d.Received(3), n, n+8)
			}
		})
	}
}

// Raw SHMEM names the verb a machine lacks: a
// fetch-and-increment on a machine with remote writes and reads only; and
// refuses PEs that share a node's memory (symmetric memory could not be
// symmetric).
func TestOpenRefuses(t *testing.T) {
	type putGetOnly struct{ Machine }
	eng := sim.NewEngine(1)
	tm, err := t3d.New(eng, 2, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sp2 := sci.DefaultParams()
	sp2.ProcsPerNode = 2
	shared, err := sci.New(eng, 4, sp2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    machines.Machine
		verb string // the missing verb named, or "" for another error
		want string
	}{
		{"no fetch-inc", putGetOnly{tm}, machines.VerbRemoteFetchInc.Name, machines.VerbFetchIncReg.Name},
		{"shared node", shared, "", "share node 0"},
	} {
		_, err := Open(tc.m, DefaultParams())
		var mc *machines.MissingCapability
		switch {
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		case tc.verb != "" && (!errors.As(err, &mc) || !strings.Contains(mc.Capability, tc.verb)):
			t.Errorf("%s: %v, want a missing capability naming %s", tc.name, err, tc.verb)
		}
	}
}

// On the Power Challenge (no one-sided puts) Open names what is missing.
func TestMissingCapability(t *testing.T) {
	m, err := challenge.New(sim.NewEngine(1), 2, challenge.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(m, DefaultParams())
	var mc *machines.MissingCapability
	if !errors.As(err, &mc) || mc.Machine != "challenge" || !strings.Contains(mc.Capability, machines.VerbRemoteWrite.Name) {
		t.Fatalf("got %v, want a missing remote-write of challenge", err)
	}
}

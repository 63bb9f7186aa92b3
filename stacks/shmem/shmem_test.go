package shmem

import (
	"errors"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

var _ stacks.OneSided = (*PE)(nil)

// TestOneSided: on the T3D, a put lands at the symmetric address of the
// target after quiet, a get reads it back, fetch-and-increment hands out
// 0, 1, 2 to three PEs; the ranks offer no message passing, and swap
// (the T3D's, machines/t3d/swap.go).
func TestOneSided(t *testing.T) {
	eng := sim.NewEngine(1)
	m, err := t3d.New(eng, 4, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(m, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if stacks.Offers[stacks.Comm](w) || !stacks.Offers[stacks.OneSided](w) || !stacks.Offers[stacks.Swapper](w) {
		t.Fatal("raw SHMEM ranks: want one-sided and swap, no message passing")
	}
	pes, _ := stacks.As[stacks.OneSided](w, "test", "one-sided")
	var src0, sym0 mem.Addr // PE 0's send buffer, the symmetric buffer
	got := make([]uint64, 4)
	for i, x := range pes {
		src, err := x.Buffer(8)
		if err != nil {
			t.Fatal(err)
		}
		sym, err := x.Symmetric(8)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			src0, sym0 = src.Addr, sym.Addr
		} else if sym.Addr != sym0 {
			t.Fatalf("PE %d: symmetric buffer at %#x, PE 0's at %#x", i, sym.Addr, sym0)
		}
		x.CPU().Poke(src.Addr, []byte{byte(10 + i), 0, 0, 0, 0, 0, 0, 0})
	}
	eng.Spawn("pe0", func(p *sim.Proc) {
		x := pes[0]
		x.Put(p, 1, 0, 0, 0) // a put of 0 bytes costs the start-up only
		for to := 1; to < 4; to++ {
			x.Put(p, to, sym0, src0, 8)
		}
		x.Quiet(p)
		back, _ := x.Buffer(8)
		x.Get(p, 3, back.Addr, sym0, 8)
		b := make([]byte, 8)
		x.CPU().Peek(back.Addr, b)
		got[0] = uint64(b[0])
	})
	for i := 1; i < 4; i++ {
		eng.Spawn("pe", func(p *sim.Proc) { got[i] = pes[i].FetchInc(p, 0) + 100 })
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if got[0] != 10 {
		t.Errorf("get of the put word: %d, want 10", got[0])
	}
	seen := map[uint64]bool{}
	for _, v := range got[1:] {
		seen[v] = true
	}
	if !seen[100] || !seen[101] || !seen[102] {
		t.Errorf("fetch-and-increment results %v, want 0, 1, 2 (+100)", got[1:])
	}
	if m.Received(2) != 8 || m.Received(3) != 8 {
		t.Errorf("delivered %d and %d bytes, want 8 each", m.Received(2), m.Received(3))
	}
}

// On the SX-4 (no one-sided puts) Open names what is missing.
func TestMissingCapability(t *testing.T) {
	m, err := sx4.New(sim.NewEngine(1), 2, sx4.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(m, DefaultParams())
	var mc *machines.MissingCapability
	if !errors.As(err, &mc) || mc.Machine != "sx4" {
		t.Fatalf("got %v, want a missing capability of sx4", err)
	}
}

// swapT3D is a T3D with a remote swap (the T3D has none: a test machine),
// done as an untimed read and write of the target's memory.
type swapT3D struct{ *t3d.Machine }

func (m swapT3D) Swap(p *sim.Proc, pe, target int, a mem.Addr, v uint64) uint64 {
	var b [8]byte
	m.Memory(target).Read(a, b[:])
	old := uint64(0)
	for i := range b {
		old |= uint64(b[i]) << (8 * i)
		b[i] = byte(v >> (8 * i))
	}
	m.Memory(target).Write(a, b[:])
	return old
}

// On a machine with machines.Swap, the ranks offer stacks.Swapper and
// forward to it.
func TestSwap(t *testing.T) {
	eng := sim.NewEngine(1)
	tm, err := t3d.New(eng, 2, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(swapT3D{tm}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	sw, err := stacks.As[stacks.Swapper](w, "test", "swap")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := w.Ranks[1].(stacks.OneSided).Symmetric(8)
	var old [2]uint64
	eng.Spawn("pe0", func(p *sim.Proc) {
		old[0] = sw[0].Swap(p, 1, r.Addr, 7)
		old[1] = sw[0].Swap(p, 1, r.Addr, 9)
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if old != [2]uint64{0, 7} {
		t.Errorf("swaps returned %v, want [0 7]", old)
	}
}

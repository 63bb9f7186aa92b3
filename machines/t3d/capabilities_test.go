package t3d

import (
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
)

// The T3D offers every capability the stacks and the harness use; these
// fail to compile if a method's signature drifts.
var (
	_ machines.Memory           = (*Machine)(nil)
	_ machines.RemoteWrite      = (*Machine)(nil)
	_ machines.RemoteRead       = (*Machine)(nil)
	_ machines.FetchIncRegister = (*Machine)(nil)
	_ machines.Barrier          = (*Machine)(nil)
	_ machines.Swap             = (*Machine)(nil)
	_ machines.Delivered        = (*Machine)(nil)
)

// TestSwap: a remote swap returns the old word and stores the new one; two
// PEs swapping into one word each see a distinct previous value.
func TestSwap(t *testing.T) {
	e := sim.NewEngine(1)
	m, err := New(e, 4, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, _ := m.Alloc(3, "word", 8)
	m.Memory(3).Store64(w.Addr, 7)
	got := map[uint64]bool{}
	var took sim.Time
	for pe := 0; pe < 3; pe++ {
		e.Spawn("pe", func(p *sim.Proc) {
			t0 := p.Now()
			got[m.Swap(p, pe, 3, w.Addr, uint64(100+pe))] = true
			took = max(took, p.Now()-t0)
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	final := m.Memory(3).Load64(w.Addr)
	got[final] = true
	if len(got) != 4 || !got[7] {
		t.Fatalf("values seen %v (final %d): want 7 and the three stored, each once", got, final)
	}
	t.Logf("slowest swap %v", took)
}

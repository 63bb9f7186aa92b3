package mpich

import (
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
)

// TestT3DFigure2: Figure 2 on two T3D PEs (threads time-sharing each PE)
// completes under multiple.
func TestT3DFigure2(t *testing.T) {
	e := sim.NewEngine(1)
	m, err := t3d.New(e, 2, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(m, DefaultParamsFor(DeviceT3D))
	if err != nil {
		t.Fatal(err)
	}
	for rank := 0; rank < 2; rank++ {
		r, other := w.Rank(rank), 1-rank
		e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			r.InitThread(p, LevelMultiple)
			sb, _ := r.Buffer(4096)
			rb, _ := r.Buffer(4096)
			fill(r, sb, 1, rank, other, 0)
			r.SpawnThread(e, "t1", func(p *sim.Proc) {
				if err := r.Send(p, sb, other, 3); err != nil {
					e.Fail(err)
				}
			})
			if _, err := r.Recv(p, rb, other, 3); err != nil {
				e.Fail(err)
				return
			}
			if err := check(r, rb, 4096, 1, other, rank, 0); err != nil {
				e.Fail(err)
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

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
	e, w := t3dWorld2(t)
	for rank := 0; rank < 2; rank++ {
		r, other := w.Rank(rank), 1-rank
		e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			r.InitThread(p, LevelMultiple)
			sb, _ := r.Buffer(4096)
			rb, _ := r.Buffer(4096)
			fill(r, sb, 1, rank, other, 0)
			r.SpawnThread(p, "t1", func(p *sim.Proc) {
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

// TestT3DThreadsSymmetric: two threads of a T3D PE computing at once take
// the sum of their work plus the context switches, each switch costing
// the machine's thread_switch_cycles, and each delays the other (the
// time-sharing is symmetric).
func TestT3DThreadsSymmetric(t *testing.T) {
	for _, cycles := range []float64{t3d.DefaultParams().ThreadSwitchCycles, 0, 1000} {
		t.Run(fmt.Sprint(cycles), func(t *testing.T) {
			mp := t3d.DefaultParams()
			mp.ThreadSwitchCycles = cycles
			e, w := t3dWorld2With(t, mp)
			r := w.Rank(0)
			const work = 10 * sim.Microsecond
			var end [2]sim.Time
			e.Spawn("rank0.t0", func(p *sim.Proc) {
				r.SpawnThread(p, "t1", func(p *sim.Proc) {
					for range 4 {
						p.Sleep(work / 4)
					}
					end[1] = p.Now()
				})
				for range 4 {
					p.Sleep(work / 4)
				}
				end[0] = p.Now()
			})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			sw := r.CPU().Clock().Cycles(cycles)
			st := r.th.core.Stats()
			if cycles > 0 && st.Switches == 0 || max(end[0], end[1]) != 2*work+sim.Time(st.Switches)*sw {
				t.Fatalf("threads ended at %v and %v with %d switches of %v, want the sum of their work (2 x %v) plus the switches", end[0], end[1], st.Switches, sw, work)
			}
			for i, x := range end {
				if x <= work+sw {
					t.Errorf("thread %d ended at %v: not delayed by the other's work", i, x)
				}
			}
		})
	}
}

// t3dWorld2 is an engine and an MPICH world over ch_t3d on two T3D PEs.
func t3dWorld2(t *testing.T) (*sim.Engine, *World) {
	t.Helper()
	return t3dWorld2With(t, t3d.DefaultParams())
}

// t3dWorld2With is t3dWorld2 on a T3D of params mp.
func t3dWorld2With(t *testing.T, mp t3d.Params) (*sim.Engine, *World) {
	t.Helper()
	e := sim.NewEngine(1)
	m, err := t3d.New(e, 2, mp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(m, DefaultParamsFor(DeviceT3D))
	if err != nil {
		t.Fatal(err)
	}
	return e, w
}

package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// rfTrace draws a traced run's reads-from edges: each instruction is
// marked on its thread's timeline (a load with the stores it may have
// read from, see Test.traceMark) and each load, spin or atomic that read a
// value some store of another or the same thread wrote to that location,
// and which that store had already issued, gets a flow arrow from the
// store's mark to the load's (sim.Proc.Flow), which Perfetto draws.
// Nil when the engine does not trace: every method is then a no-op.
type rfTrace struct {
	eng    *sim.Engine
	t      Test
	procs  []*sim.Proc
	writes []rfWrite
}

// rfWrite is a store issued in the run.
type rfWrite struct {
	th, loc int
	val     uint64
	at      sim.Time
	text    string
}

func newRFTrace(eng *sim.Engine, t Test) *rfTrace {
	if eng.Hooks().Tracer == nil {
		return nil
	}
	return &rfTrace{eng: eng, t: t, procs: make([]*sim.Proc, len(t.Threads))}
}

// done records that thread th (running as p) has just performed in, with
// registers regs.
func (r *rfTrace) done(p *sim.Proc, th int, in Instr, regs []uint64) {
	if r == nil {
		return
	}
	r.procs[th] = p
	p.Mark(r.t.traceMark(th, in, regs))
	switch in.Kind {
	case Store, Swap:
		v := in.Val
		if in.FromReg {
			v = regs[in.Src]
		}
		r.writes = append(r.writes, rfWrite{th: th, loc: in.Loc, val: v, at: r.eng.Now(), text: r.t.instrString(in)})
	}
	if in.Kind != Load && in.Kind != Spin && !in.atomic() || in.NoReg {
		return
	}
	v := regs[in.Reg]
	for _, w := range r.writes {
		if w.loc == in.Loc && w.val == v && !(w.th == th && in.Kind == Swap && w.at == r.eng.Now()) {
			p.Flow(r.procs[w.th], w.at, fmt.Sprintf("rf: P%d's %s -> P%d's %s", w.th, w.text, th, r.t.instrString(in)))
		}
	}
}

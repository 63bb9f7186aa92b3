package litmus

import "github.com/msgsim/msgsim/sim"

// The NMCA model: not multi-copy atomic, loads satisfied early.
//
// Each thread has its own view of memory. A store is seen at once by its
// own thread (store forwarding) and takes its place in the coherence order
// of its location when it executes; it then reaches every other thread
// separately, in any order: stores from one thread to one other thread
// keep their order per location (coherence), nothing else is ordered, and
// a thread that already sees a store later in coherence order ignores an
// older one arriving late. So two readers may see two independent stores in
// opposite orders (IRIW) and a store a thread has read need not have
// reached a third thread before that thread's own later store (WRC): the
// memory is not multi-copy atomic. A thread may also execute an instruction
// before earlier ones of its own program, unless one of them is a barrier,
// an atomic or a spin, accesses the same location, or a register dependency
// links them: so a load may be satisfied early, and a store may become
// visible before an earlier load of another location reads (LB).
//
// Barriers: smp_mb/MFENCE (Fence) and smp_wmb/SFENCE (FenceW) wait, before
// any later instruction runs, until every store the thread sees (its own
// and others', hence cumulative, like POWER's sync) has reached every
// thread; smp_rmb/LFENCE (FenceR) only keeps the program order of the
// instructions around it. An atomic waits for every store to its location
// to reach every thread, then reads and writes the coherence-latest value
// and is seen by every thread at once. This is a small operational model
// in the spirit of the POWER and ARMv7 storage subsystem of Sarkar et al.,
// "Understanding POWER multiprocessors" (PLDI 2011), without its
// dependency and speculation detail.

// ordered reports whether instruction k of a thread must wait for an
// earlier instruction j that has not run yet.
func ordered(j, k Instr) bool {
	barrier := func(in Instr) bool {
		switch in.Kind {
		case Fence, FenceW, FenceR, Spin, Swap, Add, CAS:
			return true
		}
		return false
	}
	switch {
	case barrier(j) || barrier(k):
		return true
	case j.accesses() && k.accesses() && j.Loc == k.Loc:
		return true
	case j.writesReg() && k.readsReg(j.Reg):
		return true // k uses the value j produces, or its guard depends on it (a control dependency)
	case k.writesReg() && (j.readsReg(k.Reg) || j.writesReg() && j.Reg == k.Reg):
		return true // k would overwrite a register j still reads or writes
	}
	return false
}

// propagated reports whether every store thread th sees has reached every
// thread: for each location, every view is at least as recent as th's.
func propagated(s *xstate, th int) bool {
	for l, c := range s.cache[th] {
		for r := range s.cache {
			if s.cache[r][l].idx < c.idx {
				return false
			}
		}
	}
	return true
}

func (m opModel) nmcaSuccessors(t Test, s *xstate, st *steps) ([]*xstate, []sim.Alt) {
	var out []*xstate
	var alts []sim.Alt
	// A store in flight reaches its target, unless an older one from the
	// same thread to the same target and location is still in flight.
	for i, p := range s.queue {
		blocked := false
		for _, o := range s.queue[:i] {
			if o.from == p.from && o.to == p.to && o.loc == p.loc {
				blocked = true
				break
			}
		}
		if blocked {
			continue
		}
		n := s.clone()
		n.queue = append(n.queue[:i:i], s.queue[i+1:]...)
		if v := &n.cache[p.to][p.loc]; v.idx < p.idx {
			*v = cell{ok: true, idx: p.idx, val: p.val}
		}
		out = append(out, n)
		if st != nil {
			alts = append(alts, st.reach1(p.from, p.to, p.loc))
		}
	}
	for th, prog := range t.Threads {
	instrs:
		for k, in := range prog {
			if s.done[th]&(1<<k) != 0 {
				continue
			}
			for j := 0; j < k; j++ {
				if s.done[th]&(1<<j) == 0 && ordered(prog[j], in) {
					continue instrs
				}
			}
			if n := m.nmcaExec(t, s, th, in); n != nil {
				n.done[th] |= 1 << k
				out = append(out, n)
				if st != nil {
					alts = append(alts, st.exec1(th, k))
				}
			}
		}
	}
	return out, alts
}

// nmcaExec runs instruction in of thread th, or returns nil if it must
// wait.
func (m opModel) nmcaExec(t Test, s *xstate, th int, in Instr) *xstate {
	view := s.cache[th]
	if !in.holds(s.regs) {
		return s.clone() // its guard does not hold: the instruction does nothing
	}
	switch in.Kind {
	case Fence, FenceW:
		if !propagated(s, th) {
			return nil
		}
		return s.clone()
	case Spin:
		if view[in.Loc].val != in.Val {
			return nil
		}
	case Swap, Add, CAS:
		for _, p := range s.queue {
			if p.loc == in.Loc {
				return nil
			}
		}
	}
	n := s.clone()
	switch in.Kind {
	case Load, Spin:
		n.regs[in.Reg] = view[in.Loc].val
	case Move:
		n.regs[in.Reg] = value(s, in)
	case Store:
		n.coh[in.Loc]++
		idx, v := n.coh[in.Loc], value(s, in)
		n.mem[in.Loc] = v
		n.cache[th][in.Loc] = cell{ok: true, idx: idx, val: v}
		for r := range t.Threads {
			if r != th {
				n.queue = append(n.queue, pending{from: th, to: r, loc: in.Loc, idx: idx, val: v})
			}
		}
	case Swap, Add, CAS:
		old := n.mem[in.Loc]
		nv := rmwValue(s, in, old)
		n.coh[in.Loc]++
		n.mem[in.Loc] = nv
		for r := range t.Threads {
			n.cache[r][in.Loc] = cell{ok: true, idx: n.coh[in.Loc], val: nv}
		}
		if !in.NoReg {
			n.regs[in.Reg] = old
		}
	}
	return n
}

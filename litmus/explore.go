package litmus

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/sim"
	simexplore "github.com/msgsim/msgsim/sim/explore"
	"github.com/msgsim/msgsim/sim/mem"
)

// NMCA is the name of the built-in model that is not multi-copy atomic and
// lets loads be satisfied early (see the package doc and nmca.go).
const NMCA = "nmca"

// MaxExploredStates bounds an exhaustive exploration, so that a big test
// ends in an error naming the bound rather than in exhausted memory.
const MaxExploredStates = 2_000_000

// opModel is the operational model the explorer steps: a mem.Config CPU
// model (store buffers, caches) or NMCA.
type opModel struct {
	nmca bool
	cfg  mem.Config
	warm bool
	// cached: the cache is enabled and not coherent, so which copy it holds
	// matters (a coherent cache is transparent to the outcome).
	cached bool
}

func newOpModel(model string, cfg mem.Config, warm bool) opModel {
	if model == NMCA {
		return opModel{nmca: true}
	}
	return opModel{cfg: cfg, warm: warm, cached: cfg.Cache.Enabled && !cfg.Cache.Coherent}
}

// sbEnt is a buffered store.
type sbEnt struct {
	loc int
	val uint64
}

// cell is a cached copy (cpu models) or a thread's view of a location
// (NMCA: the coherence index of the store it sees, 0 for the initial value).
type cell struct {
	ok  bool
	idx int
	val uint64
}

// pending is a store on its way from thread from to thread to (NMCA).
type pending struct {
	from, to, loc, idx int
	val                uint64
}

// xstate is one state of the operational model.
type xstate struct {
	pc    []int    // cpu models: next instruction of each thread
	done  []uint64 // NMCA: bit i set when instruction i of the thread ran
	regs  []uint64
	mem   []uint64  // cpu models: memory; NMCA: latest value in coherence order
	coh   []int     // NMCA: stores so far to each location
	sb    [][]sbEnt // cpu models: store buffer of each thread
	cache [][]cell  // cpu models: cached copies; NMCA: each thread's view
	queue []pending // NMCA: propagations in flight, oldest first
}

func (s *xstate) clone() *xstate {
	c := &xstate{pc: slices.Clone(s.pc), done: slices.Clone(s.done), regs: slices.Clone(s.regs),
		mem: slices.Clone(s.mem), coh: slices.Clone(s.coh), queue: slices.Clone(s.queue)}
	c.sb = make([][]sbEnt, len(s.sb))
	for i := range s.sb {
		c.sb[i] = slices.Clone(s.sb[i])
	}
	c.cache = make([][]cell, len(s.cache))
	for i := range s.cache {
		c.cache[i] = slices.Clone(s.cache[i])
	}
	return c
}

// key encodes the state for hashing.
func (s *xstate) key(b []byte) []byte {
	b = b[:0]
	for _, v := range s.pc {
		b = append(b, byte(v))
	}
	for _, v := range s.done {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range s.regs {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range s.mem {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range s.coh {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, q := range s.sb {
		b = append(b, 0xff)
		for _, e := range q {
			b = append(b, byte(e.loc))
			b = binary.AppendUvarint(b, e.val)
		}
	}
	for _, cs := range s.cache {
		for _, c := range cs {
			if c.ok {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(c.idx))
			b = binary.AppendUvarint(b, c.val)
		}
	}
	for _, p := range s.queue {
		b = append(b, 0xfe, byte(p.from), byte(p.to), byte(p.loc))
		b = binary.AppendUvarint(b, uint64(p.idx))
		b = binary.AppendUvarint(b, p.val)
	}
	return b
}

// initial is the state before any instruction runs.
func (m opModel) initial(t Test) *xstate {
	n := len(t.Threads)
	s := &xstate{regs: make([]uint64, len(t.Regs)), mem: slices.Clone(t.LocInit)}
	for i, r := range t.Regs {
		s.regs[i] = r.Init
	}
	s.cache = make([][]cell, n)
	if m.nmca {
		s.done = make([]uint64, n)
		s.coh = make([]int, len(t.Locs))
		for i := range s.cache {
			s.cache[i] = make([]cell, len(t.Locs))
			for l := range t.Locs {
				s.cache[i][l] = cell{ok: true, val: t.LocInit[l]}
			}
		}
		return s
	}
	s.pc = make([]int, n)
	s.sb = make([][]sbEnt, n)
	if m.cached {
		for i, prog := range t.Threads {
			s.cache[i] = make([]cell, len(t.Locs))
			if m.warm {
				for _, l := range t.locsOf(prog) {
					s.cache[i][l] = cell{ok: true, val: t.LocInit[l]}
				}
			}
		}
	}
	return s
}

// value is the value an instruction stores, swaps, adds or moves.
func value(s *xstate, in Instr) uint64 {
	if in.FromReg {
		return s.regs[in.Src]
	}
	return in.Val
}

// rmwValue is what atomic in writes over old.
func rmwValue(s *xstate, in Instr, old uint64) uint64 {
	v := value(s, in)
	switch in.Kind {
	case Add:
		return old + v
	case CAS:
		exp := in.Exp
		if in.ExpFromReg {
			exp = s.regs[in.ExpSrc]
		}
		if old != exp {
			return old
		}
	}
	return v
}

// steps names the steps of the operational model as sim.Alt: which thread
// runs which instruction, which buffered store drains, which store in
// flight reaches which thread. The labels are made once per test.
type steps struct {
	exec  [][]string // [thread][instruction]
	drain [][]string // [thread][location]
	reach [][][]string
}

func newSteps(t Test) *steps {
	n := len(t.Threads)
	st := &steps{exec: make([][]string, n), drain: make([][]string, n), reach: make([][][]string, n)}
	for th, prog := range t.Threads {
		for _, in := range prog {
			st.exec[th] = append(st.exec[th], fmt.Sprintf("P%d: %s", th, t.instrString(in)))
		}
		st.reach[th] = make([][]string, n)
		for _, l := range t.Locs {
			st.drain[th] = append(st.drain[th], fmt.Sprintf("P%d: its buffered store to %s drains", th, l))
			for to := range n {
				st.reach[th][to] = append(st.reach[th][to], fmt.Sprintf("P%d's store to %s reaches P%d", th, l, to))
			}
		}
	}
	return st
}

// Alt IDs: a step kind, a thread and an instruction or location (and the
// target thread of a store in flight), distinct among the steps on offer.
const (
	stepExec = iota
	stepDrain
	stepReach
)

func (st *steps) exec1(th, k int) sim.Alt {
	return sim.Alt{ID: stepID(stepExec, th, 0, k), Label: st.exec[th][k]}
}

func (st *steps) drain1(th, loc int) sim.Alt {
	return sim.Alt{ID: stepID(stepDrain, th, 0, loc), Label: st.drain[th][loc]}
}

func (st *steps) reach1(from, to, loc int) sim.Alt {
	return sim.Alt{ID: stepID(stepReach, from, to, loc), Label: st.reach[from][to][loc]}
}

func stepID(kind, th, to, x int) int { return ((kind<<8|th)<<8|to)<<16 | x }

// successors returns every state one step from s (nil: s is terminal) and,
// if st is not nil, the step to each.
func (m opModel) successors(t Test, s *xstate, st *steps) ([]*xstate, []sim.Alt) {
	if m.nmca {
		return m.nmcaSuccessors(t, s, st)
	}
	var out []*xstate
	var alts []sim.Alt
	for th, prog := range t.Threads {
		// The store buffer drains an entry: the oldest (fifo) or any with no
		// older entry to the same location (reordered; one line per location).
		for i, e := range s.sb[th] {
			if i > 0 && m.cfg.StoreBuffer.Order != mem.OrderReordered {
				break
			}
			if slices.ContainsFunc(s.sb[th][:i], func(o sbEnt) bool { return o.loc == e.loc }) {
				continue
			}
			n := s.clone()
			n.sb[th] = slices.Delete(n.sb[th], i, i+1)
			m.writeThrough(n, th, e.loc, e.val)
			out = append(out, n)
			if st != nil {
				alts = append(alts, st.drain1(th, e.loc))
			}
		}
		if s.pc[th] == len(prog) {
			continue
		}
		if n := m.exec(t, s, th, prog[s.pc[th]]); n != nil {
			out = append(out, n)
			if st != nil {
				alts = append(alts, st.exec1(th, s.pc[th]))
			}
		}
	}
	return out, alts
}

func (m opModel) writeThrough(s *xstate, th, loc int, v uint64) {
	s.mem[loc] = v
	if m.cached && s.cache[th][loc].ok {
		s.cache[th][loc].val = v
	}
}

// read is a load as mem.CPU performs it: through the cache (filling it),
// then the thread's own buffered stores if it forwards.
func (m opModel) read(s *xstate, th, loc int) uint64 {
	v := s.mem[loc]
	if m.cached {
		if c := s.cache[th][loc]; c.ok {
			v = c.val
		} else {
			s.cache[th][loc] = cell{ok: true, val: v}
		}
	}
	if m.cfg.StoreBuffer.Forwarding {
		for _, e := range s.sb[th] {
			if e.loc == loc {
				v = e.val
			}
		}
	}
	return v
}

// exec runs thread th's next instruction in, or returns nil if it cannot
// run now (a fence or atomic waiting for the store buffer, a full buffer, a
// spin that would read the same value again).
func (m opModel) exec(t Test, s *xstate, th int, in Instr) *xstate {
	empty := len(s.sb[th]) == 0
	n := s.clone()
	if !in.holds(s.regs) {
		n.pc[th]++ // its guard does not hold: the instruction does nothing
		return n
	}
	switch in.Kind {
	case Store:
		switch {
		case m.cfg.StoreBuffer.Depth == 0:
			m.writeThrough(n, th, in.Loc, value(s, in))
		case len(s.sb[th]) < m.cfg.StoreBuffer.Depth:
			n.sb[th] = append(n.sb[th], sbEnt{in.Loc, value(s, in)})
		default:
			return nil
		}
	case Load:
		n.regs[in.Reg] = m.read(n, th, in.Loc)
	case Spin:
		v := m.read(n, th, in.Loc)
		if v != in.Val {
			if m.cached && !s.cache[th][in.Loc].ok {
				return n // the poll filled the cache: a new state, still spinning
			}
			return nil
		}
		n.regs[in.Reg] = v
	case Fence, FenceW:
		if !empty {
			return nil
		}
		if in.Kind == Fence && m.cached {
			clear(n.cache[th])
		}
	case FenceR:
		if m.cached {
			clear(n.cache[th])
		}
	case Move:
		n.regs[in.Reg] = value(s, in)
	case Swap, Add, CAS:
		if !empty {
			return nil
		}
		old := n.mem[in.Loc]
		nv := rmwValue(s, in, old)
		m.writeThrough(n, th, in.Loc, nv)
		if !in.NoReg {
			n.regs[in.Reg] = old
		}
	}
	n.pc[th]++
	return n
}

// finished reports whether every thread ran its program and every store
// reached memory.
func (m opModel) finished(t Test, s *xstate) bool {
	for th, prog := range t.Threads {
		if m.nmca {
			if s.done[th] != 1<<len(prog)-1 {
				return false
			}
			continue
		}
		if s.pc[th] != len(prog) || len(s.sb[th]) > 0 {
			return false
		}
	}
	return !m.nmca || len(s.queue) == 0
}

// stuck describes a terminal state that is not finished: a
// *sim.LivelockError if some thread spins for ever (untimed: At is 0),
// naming each thread that cannot proceed and why.
func (m opModel) stuck(t Test, s *xstate) error {
	var waiting []sim.Waiter
	spinning := false
	for th, prog := range t.Threads {
		for i, in := range prog {
			if m.nmca && s.done[th]&(1<<i) == 0 || !m.nmca && s.pc[th] == i {
				why := ""
				if !m.nmca && m.cached && in.Kind == Spin && s.cache[th][in.Loc].ok && s.cache[th][in.Loc].val != s.mem[in.Loc] {
					why = fmt.Sprintf(" (its non-coherent cache holds %s=%d, memory %d: a stale copy)", t.Locs[in.Loc], s.cache[th][in.Loc].val, s.mem[in.Loc])
				}
				spinning = spinning || in.Kind == Spin
				waiting = append(waiting, sim.Waiter{Proc: fmt.Sprintf("P%d", th), Reason: "at " + t.instrString(in) + why, Spinning: in.Kind == Spin})
				break
			}
		}
	}
	if spinning {
		return &sim.LivelockError{Waiting: waiting}
	}
	var parts []string
	for _, w := range waiting {
		parts = append(parts, w.Proc+" "+w.Reason)
	}
	return fmt.Errorf("no thread can proceed: %s", strings.Join(parts, ", "))
}

// Explore enumerates every final state test t can reach on the model
// (every interleaving of the threads' instructions, every order in which
// store buffers drain, every cached copy that matters; with NMCA also
// every order in which each store reaches each other thread and every
// early load), visiting each state once (states are hashed). The Outcome
// lists each reachable final state once (Count 1); Positive and Negative
// count final states. Terminal states in which some thread cannot finish
// (a spin that never sees its value) are counted in Failed.
func Explore(t Test, model string, cfg mem.Config, warm bool) (*Outcome, error) {
	return explore(t, model, cfg, warm, MaxExploredStates)
}

func explore(t Test, model string, cfg mem.Config, warm bool, maxStates int) (*Outcome, error) {
	if t.Cond.Prop == nil {
		return nil, fmt.Errorf("litmus %s: no final condition", t.Name)
	}
	if model != NMCA {
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("litmus: model %s: %w", model, err)
		}
	}
	e := &explorer{
		t: t, model: model,
		m:        newOpModel(model, cfg, warm),
		o:        &Outcome{Test: t, Model: model, Exhaustive: true, Opts: Options{Warm: warm}},
		r:        newRunner(t, cfg, Options{}),
		digits:   t.CodeDigits(),
		st:       newSteps(t),
		terminal: map[string]bool{},
		finals:   map[string]*State{},
		enabled:  map[string][]sim.Alt{},
	}
	// Every step of the model is a choice sim.Explore makes among the
	// enabled ones; the model's state is the fingerprint, so each state is
	// explored once. No bound on deviations, no sleep sets: the search is
	// exhaustive and hashing already merges the orders of independent
	// steps.
	x := simexplore.Run(simexplore.Options{Bound: -1, MaxStates: maxStates}, e.run)
	switch {
	case x.Nondet != nil:
		return nil, fmt.Errorf("litmus %s on %s: %w", t.Name, model, x.Nondet)
	case x.StateLimit:
		return nil, fmt.Errorf("litmus %s on %s: more than %d states to explore; use sampling", t.Name, model, maxStates)
	}
	o := e.o
	o.Search = x
	o.Explored = x.States
	for _, s := range e.finals {
		o.States = append(o.States, *s)
		if s.Cond {
			o.Positive++
		} else {
			o.Negative++
		}
	}
	slices.SortFunc(o.States, func(a, b State) int { return strings.Compare(a.Text, b.Text) })
	return o, nil
}

// explorer is the exhaustive search of a test's final states on an
// operational model.
type explorer struct {
	t        Test
	model    string
	m        opModel
	o        *Outcome
	r        *runner
	digits   int
	st       *steps
	terminal map[string]bool // terminal states reached (by several paths)
	finals   map[string]*State
	buf      []byte
	// trail is the path of the previous run, each state with its
	// successors and the step taken: a run replays the prefix the
	// explorer asks for from here instead of stepping the model again,
	// and steps it past the point where it takes another choice. The
	// steps enabled in each state reached are kept (enabled), so that a
	// state reached again (which the explorer prunes) is not stepped
	// again only to name its steps.
	trail   []frame
	enabled map[string][]sim.Alt
}

// frame is a state of the trail.
type frame struct {
	s    *xstate
	next []*xstate // nil until needed
	alts []sim.Alt
	k    int
}

// run is one run of the search: from the initial state, the steps the
// explorer picks, then the terminal state recorded.
func (e *explorer) run(p *simexplore.Path) error {
	s := e.m.initial(e.t)
	p.Fingerprint = func() uint64 {
		e.buf = s.key(e.buf)
		h := fnv.New64a()
		h.Write(e.buf)
		return h.Sum64()
	}
	same := true // on the previous run's path
	for i := 0; ; i++ {
		if !same || i == len(e.trail) {
			same = false
			e.buf = s.key(e.buf)
			fr := frame{s: s}
			var ok bool
			if fr.alts, ok = e.enabled[string(e.buf)]; !ok {
				fr.next, fr.alts = e.m.successors(e.t, s, e.st)
				e.enabled[string(e.buf)] = fr.alts
			}
			e.trail = append(e.trail[:i], fr)
		}
		fr := &e.trail[i]
		if len(fr.alts) == 0 {
			break
		}
		k := p.Pick(fr.alts)
		if k < 0 {
			return nil // explored before
		}
		if same && k != fr.k {
			same = false
			e.trail = e.trail[:i+1]
		}
		if fr.next == nil {
			fr.next, _ = e.m.successors(e.t, s, nil)
		}
		fr.k = k
		s = fr.next[k]
	}
	e.record(s)
	return nil
}

// record counts terminal state s once: a thread that cannot finish is a
// failure, else its final state (if the test's filter keeps it).
func (e *explorer) record(s *xstate) {
	t := e.t
	e.buf = s.key(e.buf)
	if e.terminal[string(e.buf)] {
		return
	}
	e.terminal[string(e.buf)] = true
	if !e.m.finished(t, s) {
		e.o.Failed++
		if e.o.FirstFailure == nil {
			e.o.FirstFailure = fmt.Errorf("litmus %s on %s: %w", t.Name, e.model, e.m.stuck(t, s))
		}
		return
	}
	if !t.kept(s.regs, s.mem) {
		return
	}
	text := e.r.stateText(s.regs, s.mem)
	if e.finals[text] == nil {
		code, err := t.stateCode(s.regs, s.mem, e.digits)
		if err != nil {
			code = -1 // too wide for a number: Run reports it; the text is the state
		}
		e.finals[text] = &State{Text: text, Code: code, Count: 1, Cond: t.Cond.Prop.Eval(s.regs, s.mem)}
	}
}

// walk runs one random path of the operational model from the initial
// state to a terminal state, each step chosen uniformly among the enabled
// ones: how the NMCA model is sampled.
func (m opModel) walk(t Test, rng *rand.Rand) (regs, locs []uint64, err error) {
	s := m.initial(t)
	for steps := 0; ; steps++ {
		next, _ := m.successors(t, s, nil)
		if len(next) == 0 {
			if !m.finished(t, s) {
				return nil, nil, m.stuck(t, s)
			}
			return s.regs, s.mem, nil
		}
		s = next[rng.IntN(len(next))]
	}
}

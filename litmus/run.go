package litmus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/msgsim/msgsim/sim"
	simexplore "github.com/msgsim/msgsim/sim/explore"
	"github.com/msgsim/msgsim/sim/mem"
)

// Options control a batch of runs.
type Options struct {
	Runs int    // number of runs
	Seed uint64 // seeds the run seeds
	// StartJitterCycles: each thread starts after a random delay in [0, this)
	// CPU cycles (picosecond resolution).
	StartJitterCycles float64
	// OpJitterCycles: a random delay before every instruction, in [0,
	// this/2^k) cycles, where each run draws k in [0, opScales) once.
	OpJitterCycles float64
	// DrainJitterCycles, if positive, replaces the model's
	// store_buffer.drain_jitter_cycles: each store-buffer drain takes a
	// random extra [0, this) cycles, so that outcomes needing one store to
	// drain late (R on tso, S on pso) show up in sampling. 0 keeps the
	// model's (fixed drains on the built-ins).
	DrainJitterCycles float64
	// Warm: every thread loads the locations it accesses before the start,
	// so they are cached (as after litmus7's previous iterations).
	Warm bool
	// Place, on a machine, puts thread i on processor or node Place[i]
	// (a PE of the T3D, a node of the SCI cluster or the SP, a CPU of the
	// SX-4); nil puts thread i on i. See ParsePlace.
	Place []int
	// NewEngine creates each run's engine (nil: sim.NewEngine with
	// DefaultLimits). Runners pass workloads.Spec.NewEngine so that limits
	// and observers apply.
	NewEngine func(seed uint64) *sim.Engine
	// Progress, if not nil, is called with the number of runs done after
	// every ProgressEvery runs (simrun litmus prints a line from it).
	Progress func(done int)
}

// ProgressEvery is how many runs go between two calls of Options.Progress.
const ProgressEvery = 1024

// DefaultRuns is the number of runs of simrun litmus and of the workload
// when none is given.
const DefaultRuns = 10000

// DefaultLimits bound each run's engine when the caller sets no limit: a
// run of a built-in test takes a few dozen events (TestSpeed), so this
// only stops a runaway model. It is a count of events, never wall time: a
// run that hits it is an outcome of the test (runEngine), which must be
// the same on a loaded machine as on an idle one.
func DefaultLimits() sim.Limits {
	return sim.Limits{MaxEvents: 1_000_000}
}

// WithDefaultLimits fills the zero fields of l from DefaultLimits.
func WithDefaultLimits(l sim.Limits) sim.Limits {
	d := DefaultLimits()
	if l.MaxEvents == 0 {
		l.MaxEvents = d.MaxEvents
	}
	return l
}

// DefaultOptions are the options of simrun litmus and of the workload for
// test t on the CPU model cfg: DefaultRuns runs, seed 1, warm caches, and
// jitters from DefaultJitterCycles. On a model with a store buffer whose
// drains take a fixed time, each drain also takes a random extra time of
// the same span: with fixed drains a store never drains late relative to
// the other thread's, and outcomes that need it (R on tso, S on pso) never
// show, although the model allows them.
func DefaultOptions(t Test, cfg mem.Config) Options {
	j := DefaultJitterCycles(t, cfg)
	o := Options{Runs: DefaultRuns, Seed: 1, StartJitterCycles: j, OpJitterCycles: j, Warm: true}
	if cfg.StoreBuffer.Depth > 0 && cfg.StoreBuffer.DrainJitterCycles == 0 {
		o.DrainJitterCycles = j
	}
	return o
}

// DefaultJitterCycles is the default start and instruction jitter span of
// test t on model cfg: twice the longest of the time the model takes to
// drain, one after another, every store of t (store_buffer.drain_cycles
// per store, at most store_buffer.depth stores per thread), the time the
// threads' programs take one after another at most (programCycles), and a
// load or a store. With a span shorter than the drain time a thread's next instruction
// never comes after another thread's stores are visible, so SC outcomes
// such as SB's r0=1 /\ r1=1 on tso never show (WRC's chain through a middle
// thread needs the drains of both its stores); with a span shorter than
// the programs, threads never run one wholly after another, so the SC
// outcomes of fenced or atomic programs (WRC's chain from thread to
// thread) never show. Each run also draws a fraction
// of the instruction span (see opScales), so tight races in which stores
// are still buffered stay frequent.
func DefaultJitterCycles(t Test, cfg mem.Config) float64 {
	stores, prog := 0, 0.0
	for _, p := range t.Threads {
		n := 0
		for _, in := range p {
			if in.Kind == Store {
				n++
			}
		}
		stores += min(n, cfg.StoreBuffer.Depth)
		prog += programCycles(p, cfg)
	}
	drain := cfg.StoreBuffer.DrainCycles * float64(stores)
	op := max(cfg.Costs.LoadCycles, cfg.Costs.StoreCycles)
	return 2 * max(drain, prog, 2*op)
}

// programCycles bounds the time thread program p takes on model cfg with
// no waiting for other threads: each instruction at its cost, a load as a
// miss, a fence or an atomic with its own cost, a full store-buffer drain
// and, on a non-coherent cache, a flush.
func programCycles(p []Instr, cfg mem.Config) float64 {
	c := cfg.Costs
	drain := cfg.StoreBuffer.DrainCycles * float64(cfg.StoreBuffer.Depth)
	flush := 0.0
	if cfg.Cache.Enabled && !cfg.Cache.Coherent {
		flush = c.FlushCycles
	}
	total := 0.0
	for _, in := range p {
		switch {
		case in.Kind == Load || in.Kind == Spin:
			total += max(c.LoadCycles, c.MissCycles, c.UncachedLoadCycles)
		case in.Kind == Store:
			total += c.StoreCycles
		case in.Kind == Fence || in.Kind == FenceW || in.Kind == FenceR:
			total += c.FenceCycles + drain + flush
		case in.atomic():
			total += c.AtomicCycles + drain + flush
		}
	}
	return total
}

// State is one final state and how many runs ended in it.
type State struct {
	Text string // e.g. "1:r0=1; 1:r1=0;"
	// Code is the state as a number: the values of the registers (then,
	// for tests with FinalMem, of the observed locations), each in Test.CodeDigits
	// decimal digits, e.g. 10 for r0=1, r1=0. Distinct states have
	// distinct codes; -1 if the values do not fit in an int64 this way.
	Code  int
	Count int
	Cond  bool // the state satisfies the test's condition
}

// Outcome is the result of a batch of runs of one test on one model.
type Outcome struct {
	Test     Test
	Model    string
	Opts     Options
	States   []State // sorted by Text
	Positive int     // completed runs satisfying the condition
	Negative int     // completed runs not satisfying it
	Failed   int     // runs that ended in a deadlock, livelock or limit
	Filtered int     // completed runs whose final state the test's filter drops
	// FirstFailure is the first failed run's error (wrapping the engine's
	// *sim.LivelockError, *sim.DeadlockError or *sim.LimitError).
	FirstFailure error
	Events       uint64   // engine events, summed over runs
	SimTime      sim.Time // simulated time, summed over runs
	// Exhaustive: the outcome of Explore (every reachable final state once;
	// Positive and Negative count states, not runs).
	Exhaustive bool
	Explored   int // states visited by Explore
	// Search is what sim/explore, which Explore runs on the operational
	// model, found: its choice points are the states explored.
	Search simexplore.Result
}

// Observation is litmus7's verdict on the condition: Never, Sometimes or
// Always (over the completed runs), or None when no run completed (every
// one deadlocked, livelocked or hit a limit): nothing was observed, which
// is not "Never".
func (o *Outcome) Observation() string {
	switch {
	case o.Positive+o.Negative == 0 && o.Failed > 0:
		return "None"
	case o.Positive == 0:
		return "Never"
	case o.Negative == 0:
		return "Always"
	}
	return "Sometimes"
}

// Observed reports whether the condition (the forbidden outcome) was seen.
func (o *Outcome) Observed() bool { return o.Positive > 0 }

// RunTest runs test t opts.Runs times on the CPU model cfg (named model in
// the output). Runs that deadlock or livelock are counted in Failed; RunTest
// itself fails only on bad arguments.
func RunTest(t Test, model string, cfg mem.Config, opts Options) (*Outcome, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("litmus: runs must be positive, got %d", opts.Runs)
	}
	for _, j := range []float64{opts.StartJitterCycles, opts.OpJitterCycles, opts.DrainJitterCycles} {
		if !(j >= 0) || math.IsInf(j, 0) {
			return nil, fmt.Errorf("litmus: jitters must be finite numbers ≥ 0, got %g", j)
		}
	}
	if opts.DrainJitterCycles > 0 {
		cfg.StoreBuffer.DrainJitterCycles = opts.DrainJitterCycles
	}
	if err := cfg.Validate(); err != nil && model != NMCA {
		return nil, fmt.Errorf("litmus: model %s: %w", model, err)
	}
	if opts.NewEngine == nil {
		opts.NewEngine = func(seed uint64) *sim.Engine {
			e := sim.NewEngine(seed)
			e.SetLimits(DefaultLimits())
			return e
		}
	}
	if t.Cond.Prop == nil {
		return nil, fmt.Errorf("litmus %s: no final condition", t.Name)
	}
	r := newRunner(t, cfg, opts)
	once := r.run
	if model == NMCA { // an operational model without timing: a random path
		m := newOpModel(model, cfg, opts.Warm)
		once = func(seed uint64) ([]uint64, []uint64, error) { return m.walk(t, opts.NewEngine(seed).Rand()) }
	}
	return batch(t, model, opts, r, once)
}

// batch runs once opts.Runs times with seeds drawn from opts.Seed and
// counts the final states.
func batch(t Test, model string, opts Options, r *runner, once func(seed uint64) (regs, locs []uint64, err error)) (*Outcome, error) {
	o := &Outcome{Test: t, Model: model, Opts: opts}
	counts := map[string]*State{}
	digits := t.CodeDigits()
	seeds := sim.NewEngine(opts.Seed).Rand()
	for i := 0; i < opts.Runs; i++ {
		if opts.Progress != nil && i > 0 && i%ProgressEvery == 0 {
			opts.Progress(i)
		}
		seed := seeds.Uint64()
		regs, locs, err := once(seed)
		if err != nil {
			o.Failed++
			if o.FirstFailure == nil {
				o.FirstFailure = fmt.Errorf("litmus %s on %s, run %d (seed %d): %w", t.Name, model, i, seed, err)
			}
			if opts.Progress != nil {
				opts.Progress(i + 1)
			}
			continue
		}
		if !t.kept(regs, locs) {
			o.Filtered++
			if opts.Progress != nil {
				opts.Progress(i + 1)
			}
			continue
		}
		ok := t.Cond.Prop.Eval(regs, locs)
		if ok {
			o.Positive++
		} else {
			o.Negative++
		}
		key := r.stateText(regs, locs)
		s := counts[key]
		if s == nil {
			code, err := t.stateCode(regs, locs, digits)
			if err != nil {
				code = -1 // too wide for a number: Run reports it; the text is the state
			}
			s = &State{Text: key, Cond: ok, Code: code}
			counts[key] = s
		}
		s.Count++
		if opts.Progress != nil {
			opts.Progress(i + 1)
		}
	}
	o.Events, o.SimTime = r.events, r.simTime
	for _, s := range counts {
		o.States = append(o.States, *s)
	}
	slices.SortFunc(o.States, func(a, b State) int { return strings.Compare(a.Text, b.Text) })
	return o, nil
}

// stateCode encodes a final state as a number: the values of regs (then
// of the locations of locs that t observes), each in width decimal digits.
// It fails rather than clamp a value that does not fit, so that two states
// never share a code.
func (t Test) stateCode(regs, locs []uint64, width int) (int, error) {
	radix := uint64(1)
	for range width {
		radix *= 10
	}
	c := uint64(0)
	add := func(v uint64) error {
		if width > 18 || v >= radix || c > (math.MaxInt64-v)/radix {
			return fmt.Errorf("litmus: value %d does not fit the state code's %d digit(s)", v, width)
		}
		c = c*radix + v
		return nil
	}
	for _, v := range regs {
		if err := add(v); err != nil {
			return 0, err
		}
	}
	for l, v := range locs {
		if !t.observed(l) {
			continue
		}
		if err := add(v); err != nil {
			return 0, err
		}
	}
	return int(c), nil
}

// CodeDigits is the number of decimal digits of each register (or
// location) in a state code of t: enough for the largest value t stores,
// since a location only ever holds 0 or a value stored to it (1 for every
// built-in test but 2+2W's 2).
func (t Test) CodeDigits() int {
	top, adds := uint64(0), uint64(0)
	for _, prog := range t.Threads {
		for _, in := range prog {
			switch in.Kind {
			case Store, Spin, Move, Swap:
				top = max(top, in.Val)
			case Add:
				adds += in.Val
			}
		}
	}
	for _, v := range t.LocInit {
		top = max(top, v)
	}
	for _, r := range t.Regs {
		top = max(top, r.Init)
	}
	if top+adds < top { // wrapped: a 20-digit code
		return 20
	}
	return len(strconv.FormatUint(top+adds, 10))
}

// StateName is the x_name of the state codes: "state_" followed by the
// registers (and locations) whose values are the code's digits (groups of
// CodeDigits digits), e.g. "state_r0r1" or "state_xy".
func (t Test) StateName() string {
	n := "state_"
	for i := range t.Registers() {
		n += fmt.Sprintf("r%d", i)
	}
	for l, name := range t.Locs {
		if t.observed(l) {
			n += name
		}
	}
	return n
}

// opScales is the number of op-jitter spans a run draws from (the full
// span divided by 1, 2, 4 or 8).
const opScales = 4

// staggerOdds: one run in staggerOdds runs its threads one after another,
// in a random order (startDelays).
const staggerOdds = 4

// startDelays draws each thread's delay after the common start: a random
// delay in [0, StartJitterCycles) each, or, in one run of staggerOdds, a
// random order of the threads in which each starts a whole start span
// plus an instruction span per instruction of the longest program after
// the one before, so that it runs when the one before has finished and
// its stores have drained. The threads' interleavings reach the states in
// which whole programs run one after another (WRC's chain from thread to
// thread) in a few runs, not one in a thousand.
func (r *runner) startDelays(eng *sim.Engine, jitter func(float64) sim.Time) []sim.Time {
	d := make([]sim.Time, len(r.t.Threads))
	if eng.Rand().IntN(staggerOdds) != 0 {
		for i := range d {
			d[i] = jitter(r.opts.StartJitterCycles)
		}
		return d
	}
	longest := 0
	for _, prog := range r.t.Threads {
		longest = max(longest, len(prog))
	}
	gap := r.cfg.Clock().Cycles(r.opts.StartJitterCycles + float64(longest)*r.opts.OpJitterCycles)
	for rank, i := range eng.Rand().Perm(len(d)) {
		d[i] = sim.Time(rank) * gap
	}
	return d
}

// runner runs one test repeatedly.
type runner struct {
	t       Test
	cfg     mem.Config
	opts    Options
	th      []int // thread of each register
	line    int   // bytes between locations: one cache line each
	events  uint64
	simTime sim.Time
	regs    []uint64
	sb      strings.Builder
}

func newRunner(t Test, cfg mem.Config, opts Options) *runner {
	line := 64
	if cfg.Cache.Enabled {
		line = max(line, cfg.Cache.LineBytes)
	}
	return &runner{t: t, cfg: cfg, opts: opts, th: t.regThread(), line: line, regs: make([]uint64, t.Registers())}
}

// run performs one run with a fresh engine and returns the final registers
// and memory.
func (r *runner) run(seed uint64) (regs, locs []uint64, err error) {
	eng := r.opts.NewEngine(seed)
	m := mem.NewMemory("shared", 0)
	seg, err := m.Alloc("locations", len(r.t.Locs)*r.line, r.line)
	if err != nil {
		return nil, nil, err
	}
	addr := func(loc int) mem.Addr { return seg.Addr(loc * r.line) }
	for i, reg := range r.t.Regs {
		r.regs[i] = reg.Init
	}
	for i, v := range r.t.LocInit {
		if v != 0 {
			m.Store64(addr(i), v)
		}
	}
	clock := r.cfg.Clock()
	// Every thread starts its program at the same instant, after the
	// longest possible warm-up, plus its own random delay.
	start := clock.Cycles(float64(len(r.t.Locs)) * max(r.cfg.Costs.MissCycles, r.cfg.Costs.LoadCycles))
	// This run's instruction-jitter span: the full span, or a half, a
	// quarter or an eighth of it, so that some runs race tightly (a store
	// still buffered when the other thread reads) and others leave every
	// store time to drain.
	opSpan := r.opts.OpJitterCycles / float64(int(1)<<eng.Rand().IntN(opScales))
	jitter := func(cycles float64) sim.Time {
		span := int64(clock.Cycles(cycles))
		if span <= 0 {
			return 0
		}
		return sim.Time(eng.Rand().Int64N(span))
	}
	delay := r.startDelays(eng, jitter)
	rf := newRFTrace(eng, r.t)
	for i, prog := range r.t.Threads {
		cpu, err := mem.NewCPU(eng, fmt.Sprintf("P%d", i), m, r.cfg)
		if err != nil {
			return nil, nil, err
		}
		eng.Spawn(fmt.Sprintf("P%d", i), func(p *sim.Proc) {
			if r.opts.Warm {
				r.warm(p, cpu, prog, addr)
			}
			p.Sleep(start - p.Now() + delay[i])
			for _, in := range prog {
				p.Sleep(jitter(opSpan))
				ran := in.holds(r.regs)
				r.exec(p, cpu, in, addr(in.Loc))
				if ran {
					rf.done(p, i, in, r.regs)
				}
			}
		})
	}
	if err := r.runEngine(eng); err != nil {
		return nil, nil, err
	}
	locs = make([]uint64, len(r.t.Locs))
	for i := range locs {
		locs[i] = m.Load64(addr(i))
	}
	return r.regs, locs, nil
}

// runEngine runs eng and counts its events and simulated time. A livelock,
// deadlock or limit is an outcome of the test (returned as it is); any
// other engine error is unexpected.
func (r *runner) runEngine(eng *sim.Engine) error {
	err := eng.Run()
	r.events += eng.Events()
	r.simTime += eng.Now()
	if err == nil {
		return nil
	}
	var ll *sim.LivelockError
	var dl *sim.DeadlockError
	var lim *sim.LimitError
	if !errors.As(err, &ll) && !errors.As(err, &dl) && !errors.As(err, &lim) {
		return fmt.Errorf("unexpected engine error: %w", err)
	}
	return err
}

// warm loads each location the program accesses, so that it is cached.
func (r *runner) warm(p *sim.Proc, cpu *mem.CPU, prog []Instr, addr func(int) mem.Addr) {
	seen := make([]bool, len(r.t.Locs))
	for _, in := range prog {
		if in.accesses() && !seen[in.Loc] {
			seen[in.Loc] = true
			cpu.Load(p, addr(in.Loc), 8)
		}
	}
}

// exec performs one instruction on cpu.
func (r *runner) exec(p *sim.Proc, cpu *mem.CPU, in Instr, a mem.Addr) {
	if !in.holds(r.regs) {
		return // its guard does not hold: the instruction does nothing
	}
	switch in.Kind {
	case Store:
		cpu.Store(p, a, 8, r.value(in))
	case Load:
		r.regs[in.Reg] = cpu.Load(p, a, 8)
	case Fence:
		cpu.Fence(p)
		if c := r.cfg.Cache; c.Enabled && !c.Coherent {
			cpu.FlushCache(p) // see the package doc: ordering alone cannot refresh a stale copy
		}
	case FenceW:
		cpu.Fence(p) // stores drain in order before later ones
	case FenceR:
		if c := r.cfg.Cache; c.Enabled && !c.Coherent {
			cpu.FlushCache(p) // later loads must not read copies older than earlier ones
		}
	case Move:
		r.regs[in.Reg] = r.value(in)
	case Swap:
		old := cpu.Swap(p, a, r.value(in))
		if !in.NoReg {
			r.regs[in.Reg] = old
		}
	case Add:
		old := cpu.FetchAdd(p, a, r.value(in))
		if !in.NoReg {
			r.regs[in.Reg] = old
		}
	case CAS:
		exp := in.Exp
		if in.ExpFromReg {
			exp = r.regs[in.ExpSrc]
		}
		old := cpu.CompareAndSwap(p, a, exp, r.value(in))
		if !in.NoReg {
			r.regs[in.Reg] = old
		}
	case Spin:
		reason := fmt.Sprintf("waiting for %s=%d", r.t.Locs[in.Loc], in.Val)
		cpu.SpinUntil(p, sim.Reason(reason), func() bool {
			r.regs[in.Reg] = cpu.Load(p, a, 8)
			return r.regs[in.Reg] == in.Val
		}, a)
	}
}

// stateText formats a final state as litmus7 does: "1:r0=1; 1:r1=0;".
func (r *runner) stateText(regs, locs []uint64) string {
	b := &r.sb
	b.Reset()
	for i, v := range regs {
		fmt.Fprintf(b, "%s=%d; ", r.t.RegName(i), v)
	}
	for i, v := range locs {
		if r.t.observed(i) {
			fmt.Fprintf(b, "%s=%d; ", r.t.Locs[i], v)
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// value is the value in stores, swaps, adds or moves: Val or register Src.
func (r *runner) value(in Instr) uint64 {
	if in.FromReg {
		return r.regs[in.Src]
	}
	return in.Val
}

// traceMark names what instruction in of thread th just did, for traces:
// a load or spin also says which store it read from (reads-from, found by
// value: the stores of that value to that location, or the initial state).
func (t Test) traceMark(th int, in Instr, regs []uint64) string {
	what := t.instrString(in)
	if in.Kind != Load && in.Kind != Spin && !in.atomic() || in.NoReg {
		return fmt.Sprintf("P%d: %s", th, what)
	}
	v := regs[in.Reg]
	var from []string
	if t.LocInit[in.Loc] == v {
		from = append(from, "the initial state")
	}
	for w, prog := range t.Threads {
		for _, st := range prog {
			if st.Kind == Store && st.Loc == in.Loc && !st.FromReg && st.Val == v {
				from = append(from, fmt.Sprintf("P%d's %s", w, t.instrString(st)))
			}
		}
	}
	if len(from) == 0 {
		from = append(from, "a store of a register or an atomic")
	}
	return fmt.Sprintf("P%d: %s read %d (rf from %s)", th, what, v, strings.Join(from, " or "))
}

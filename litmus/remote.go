package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The runner of the machines whose locations each live in one home memory
// (RunMachine): a thread reaches a location of its own home with its
// processor's loads and stores, and any other with the machine's remote
// operations.

// remoteMachine is what runRemote needs of a machine: its name, clock,
// the locations' homes, when threads start, and how to build one run's
// machine.
type remoteMachine struct {
	name     string
	clockMHz float64
	homes    []int    // location l lives in home homes[l]
	start    sim.Time // when threads start (after the warm-up loads)
	build    func(eng *sim.Engine) (remoteRun, error)
}

// remoteRun is one run's machine.
type remoteRun struct {
	alloc func(h int, name string, n int) (mem.Region, error) // n bytes in home h
	// thread prepares thread th on processor pe before it is spawned and
	// returns what binds its operations once its process runs.
	thread func(th, pe int) (func(p *sim.Proc) remoteThread, error)
}

// remoteThread is a thread's operations, bound to its process.
type remoteThread struct {
	own     int                               // the thread's home: its locations are local
	cpu     *mem.CPU                          // the thread's processor
	get     func(h int, a mem.Addr) uint64    // load a word of home h != own
	put     func(h int, a mem.Addr, v uint64) // store a word of home h != own
	fence   func(k Kind)                      // Fence, FenceW or FenceR
	spinWhy string                            // appended to a local spin's wait reason
}

// runRemote runs test t opts.Runs times on machine rm.
func runRemote(t Test, opts Options, rm remoteMachine) (*Outcome, error) {
	if opts.NewEngine == nil {
		opts.NewEngine = func(seed uint64) *sim.Engine {
			e := sim.NewEngine(seed)
			e.SetLimits(DefaultLimits())
			return e
		}
	}
	r := newRunner(t, mem.Config{}, opts)
	clock := sim.ClockMHz(rm.clockMHz)
	homes := rm.homes
	once := func(seed uint64) ([]uint64, []uint64, error) {
		eng := opts.NewEngine(seed)
		m, err := rm.build(eng)
		if err != nil {
			return nil, nil, err
		}
		addr := make([]mem.Addr, len(t.Locs))
		at := make([]*mem.Memory, len(t.Locs))
		for l, h := range homes {
			reg, err := m.alloc(h, t.Locs[l], 8)
			if err != nil {
				return nil, nil, err
			}
			addr[l], at[l] = reg.Addr, reg.Mem
			at[l].Store64(reg.Addr, t.LocInit[l])
		}
		x := &remoteOnce{t: t, opts: opts, eng: eng, clock: clock, homes: homes, addr: addr, start: rm.start}
		x.regs = make([]uint64, len(t.Regs))
		for i, reg := range t.Regs {
			x.regs[i] = reg.Init
		}
		x.opSpan = opts.OpJitterCycles / float64(int(1)<<eng.Rand().IntN(opScales))
		x.rf = newRFTrace(eng, t)
		for th, prog := range t.Threads {
			bind, err := m.thread(th, placeOf(opts.Place, th))
			if err != nil {
				return nil, nil, err
			}
			eng.Spawn(fmt.Sprintf("P%d", th), func(p *sim.Proc) { x.thread(p, th, prog, bind(p)) })
		}
		if err := r.runEngine(eng); err != nil {
			return nil, nil, err
		}
		locs := make([]uint64, len(t.Locs))
		for l := range homes {
			locs[l] = at[l].Load64(addr[l])
		}
		return x.regs, locs, nil
	}
	return batch(t, rm.name, opts, r, once)
}

// remoteOnce is one run of a test on a machine of remote writes.
type remoteOnce struct {
	t      Test
	opts   Options
	eng    *sim.Engine
	clock  sim.Clock
	homes  []int      // each location's node
	addr   []mem.Addr // each location's address in its home's memory
	regs   []uint64
	start  sim.Time
	opSpan float64 // the run's jitter before each instruction, in cycles
	rf     *rfTrace
}

// jitter is a random delay of up to cycles CPU cycles.
func (x *remoteOnce) jitter(cycles float64) sim.Time {
	if span := int64(x.clock.Cycles(cycles)); span > 0 {
		return sim.Time(x.eng.Rand().Int64N(span))
	}
	return 0
}

// thread runs program prog of thread th as process p (bound to o): its
// local locations warmed, then each instruction after a jitter, a remote
// location reached through o's verbs.
func (x *remoteOnce) thread(p *sim.Proc, th int, prog []Instr, o remoteThread) {
	t, homes, addr, regs := x.t, x.homes, x.addr, x.regs
	cpu := o.cpu
	load := func(in Instr) uint64 {
		if h := homes[in.Loc]; h != o.own {
			return o.get(h, addr[in.Loc])
		}
		return cpu.Load(p, addr[in.Loc], 8)
	}
	if x.opts.Warm {
		for _, l := range t.locsOf(prog) {
			if homes[l] == o.own {
				cpu.Load(p, addr[l], 8)
			}
		}
	}
	p.Sleep(max(x.start-p.Now(), 0) + x.jitter(x.opts.StartJitterCycles))
	for _, in := range prog {
		p.Sleep(x.jitter(x.opSpan))
		if !in.holds(regs) {
			continue // its guard does not hold
		}
		val := in.Val
		if in.FromReg {
			val = regs[in.Src]
		}
		switch in.Kind {
		case Store:
			if h := homes[in.Loc]; h != o.own {
				o.put(h, addr[in.Loc], val)
			} else {
				cpu.Store(p, addr[in.Loc], 8, val)
			}
		case Load:
			regs[in.Reg] = load(in)
		case Move:
			regs[in.Reg] = val
		case Fence, FenceW, FenceR:
			o.fence(in.Kind)
		case Spin:
			if homes[in.Loc] == o.own {
				cpu.SpinUntil(p, sim.Reason(fmt.Sprintf("waiting for %s=%d", t.Locs[in.Loc], in.Val)+o.spinWhy), func() bool {
					regs[in.Reg] = cpu.Load(p, addr[in.Loc], 8)
					return regs[in.Reg] == in.Val
				}, addr[in.Loc])
			} else {
				for regs[in.Reg] = load(in); regs[in.Reg] != in.Val; regs[in.Reg] = load(in) {
				}
			}
		}
		x.rf.done(p, th, in, regs)
	}
}

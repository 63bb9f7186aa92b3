package litmus

import (
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Builder builds a machine of procs processes in eng: how a runner of this
// package gets a concrete machine (built by the caller, e.g. from a
// registry entry and its params) without importing it.
type Builder func(eng *sim.Engine, procs int) (machines.Machine, error)

// Machine is a simulated machine as litmus tests run on it: its name, its
// Builder, and the machine's own choices (machines.LitmusTraits), which On
// reads from an instance. Any machine offering the verbs below runs tests
// with the zero traits; a machine tunes them by implementing Tuned, and
// may implement Fencer and SpinNoter for what it does at a run.
//
// On a machine with one-sided remote writes (machines.RemoteWrite), thread
// i runs as process Options.Place[i] (default i) and each location lives in
// the memory of one node (its home; a node is machines.NodeOf: the
// processes of a node with shared segments share its memory, elsewhere each
// process is its own node). A thread reaches a location of its own node
// with its processor's loads and stores, and one of another node with the
// generic verbs: a store is a remote write of one word (PutWord: it returns
// once the word has left, and lands later), a load a remote read into a
// scratch word (Get: it returns with the data; machines.RemoteRead is
// needed only when a thread loads a location homed elsewhere). A full or
// write barrier (smp_mb, MFENCE, smp_wmb, SFENCE) waits until every remote
// write of the thread has landed (Quiet); a full or read barrier (smp_mb,
// MFENCE, smp_rmb, LFENCE) then flushes the processor's cache where it is
// not coherent, since remote writes do not update it. Atomics are not
// mapped. Such a machine is timed, with a network: RunMachine samples it.
//
// A machine without remote writes whose processes all share one node's
// memory (machines.SharedSegments, one node) runs a test as its own
// processor model: OneNode gives its CPUs' mem.Config, which RunTest and
// Explore run like a built-in model (the SX-4).
type Machine struct {
	Name  string  // the machine's name, in errors and outcomes (e.g. "t3d")
	Build Builder // builds the machine with its params
	// The machine's choices: Head labels the first line of simrun's
	// output (default: Name); the others are used as package machines
	// documents them.
	machines.LitmusTraits
}

// Tuned is a machine (an instance its Builder returns) that makes its own
// choices for litmus tests: the machines' packages implement it without
// importing this one.
type Tuned interface {
	LitmusTraits() machines.LitmusTraits
}

// Fencer is a machine whose litmus barriers are its own: a barrier by
// process pe that orders its writes (writes), its reads (reads) or both,
// puts the remote writes it issued since its last barrier. Without it a
// barrier that orders writes is Quiet, and one that orders reads then
// flushes a non-coherent cache.
type Fencer interface {
	LitmusFence(p *sim.Proc, pe int, writes, reads bool, puts int)
}

// SpinNoter is a machine that explains a spin on node's memory that
// cannot end: its note is appended to the spin's wait reason.
type SpinNoter interface {
	LitmusSpinWhy(node int) string
}

// On is the litmus machine name built by build: the generic mapping on the
// verbs it offers, with the traits of an instance of two processes if the
// machine is Tuned.
func On(name string, build Builder) (Machine, error) {
	mc := Machine{Name: name, Build: build}
	m, err := mc.probe(2)
	if err != nil {
		return mc, fmt.Errorf("litmus on %s: %w", name, err)
	}
	if t, ok := m.(Tuned); ok {
		mc.LitmusTraits = t.LitmusTraits()
	}
	return mc, nil
}

// unit is what a home is called on m.
func (mc Machine) unit(m machines.Machine) string {
	if mc.Unit != "" {
		return mc.Unit
	}
	if _, ok := m.(machines.SharedSegments); ok {
		return "node"
	}
	return "PE"
}

// probe builds an instance of procs processes to look at.
func (mc Machine) probe(procs int) (machines.Machine, error) {
	if mc.Build == nil {
		return nil, fmt.Errorf("litmus on %s: no machine builder", mc.Name)
	}
	return mc.Build(sim.NewEngine(1), procs)
}

// Units are the names of a home and of what a thread runs on, seen on an
// instance of procs processes ("CPU" on a one-node machine).
func (mc Machine) Units(procs int) (unit, thread string, err error) {
	m, err := mc.probe(procs)
	if err != nil {
		return "", "", err
	}
	if !remoteWrites(m) && oneNode(m) && mc.Unit == "" {
		unit = "CPU"
	} else {
		unit = mc.unit(m)
	}
	thread = mc.ThreadUnit
	if thread == "" {
		thread = unit
	}
	return unit, thread, nil
}

// remoteWrites reports whether litmus tests run on m's remote writes: m
// has them (machines.RemoteWrite), and they are not copies within the one
// node's memory its processes share (machines.SymmetricHeap on one node:
// the SX-4's, whose tests run on its processor model).
func remoteWrites(m machines.Machine) bool {
	if _, ok := m.(machines.RemoteWrite); !ok {
		return false
	}
	_, heap := m.(machines.SymmetricHeap)
	return !(heap && oneNode(m))
}

// oneNode reports whether m's processes all share node 0's memory.
func oneNode(m machines.Machine) bool {
	s, ok := m.(machines.SharedSegments)
	if !ok {
		return false
	}
	for pe := range m.Procs() {
		if s.NodeOf(pe) != 0 {
			return false
		}
	}
	return true
}

// Remote reports whether tests run on mc as on a machine of homes and
// remote writes (RunMachine) rather than as its processor model (OneNode).
func (mc Machine) Remote(procs int) (bool, error) {
	m, err := mc.probe(procs)
	if err != nil {
		return false, err
	}
	if remoteWrites(m) {
		return true, nil
	}
	if oneNode(m) {
		return false, nil
	}
	_, err = machines.Require[machines.RemoteWrite](m, "litmus", machines.VerbRemoteWrite.Name+": "+machines.VerbRemoteWrite.What+", or the shared segments of one node (machines.SharedSegments)")
	return false, err
}

// OneNode is the processor model of a one-node machine with threads
// processors (their CPUs' mem.Config): RunTest and Explore run a test on
// it as on a built-in model.
func (mc Machine) OneNode(threads int) (mem.Config, error) {
	m, err := mc.probe(threads)
	if err != nil {
		return mem.Config{}, err
	}
	if !oneNode(m) {
		return mem.Config{}, fmt.Errorf("litmus on %s: not one node whose processes share its memory (machines.SharedSegments)", mc.Name)
	}
	return m.(machines.SharedSegments).CPU(0).Config(), nil
}

// Homes puts each location on the node of the thread DefaultT3DHomes
// chooses (the first that loads it, the consumer, or else the first that
// stores it), with the threads placed by place (nil: thread i on i).
func (mc Machine) Homes(t Test, place []int) ([]int, error) {
	procs, err := CheckPlace(t, place, mc.Name, "process", 0)
	if err != nil {
		return nil, err
	}
	m, err := mc.probe(procs)
	if err != nil {
		return nil, err
	}
	homes := DefaultHomes(t, place)
	for l, pe := range homes {
		homes[l] = machines.NodeOf(m, pe)
	}
	return homes, nil
}

// JitterCycles is the default start jitter span on mc, in CPU cycles
// (Machine.StartJitterCycles).
func (mc Machine) JitterCycles() (float64, error) {
	if mc.StartJitterCycles != nil {
		return mc.StartJitterCycles()
	}
	return PutJitterCycles(mc.Build, mc.Name)
}

// OpJitter is the default instruction jitter span on mc given the start
// jitter's (Machine.OpJitterCycles).
func (mc Machine) OpJitter(start float64) (float64, error) {
	if mc.OpJitterCycles == nil {
		return start, nil
	}
	m, err := mc.probe(2)
	if err != nil {
		return 0, err
	}
	l, err := machines.Need[machines.Local](m, "litmus on "+mc.Name, machines.VerbLocal)
	if err != nil {
		return 0, err
	}
	return mc.OpJitterCycles(start, l.CPU(0).Config()), nil
}

// PutJitterCycles is twice the time, measured on a machine built by build,
// for a remote write of one word from process 0 to a process of another
// node to land (PutWord then Quiet), in process 0's CPU cycles.
func PutJitterCycles(build Builder, name string) (float64, error) {
	user := "litmus jitter on " + name
	for procs := 2; procs <= 64; procs++ {
		eng := sim.NewEngine(1)
		mm, err := build(eng, procs)
		if err != nil {
			return 0, err
		}
		m, err := machines.Need[machines.RemoteWrite](mm, user, machines.VerbRemoteWrite)
		if err != nil {
			return 0, err
		}
		to := procs - 1
		if machines.NodeOf(m, to) == machines.NodeOf(m, 0) {
			continue // a bigger instance puts a process on another node
		}
		r, err := machines.MapRemote(m, nil, 0, to, "word", 8)
		if err != nil {
			return 0, err
		}
		eng.Spawn("pe0", func(p *sim.Proc) {
			m.PutWord(p, 0, to, r.Addr, 1)
			m.Quiet(p, 0)
		})
		if err := eng.Run(); err != nil {
			return 0, err
		}
		return 2 * eng.Now().Seconds() * m.CPU(0).Config().ClockMHz * 1e6, nil
	}
	return 0, fmt.Errorf("%s: no two of 64 processes on different nodes", user)
}

// DefaultT3DHomes gives each location the thread that first loads it as
// its home (code on a machine of one-sided writes puts data to its
// consumer, the write being the fast operation), or, if no thread loads
// it, the first that stores it.
func DefaultT3DHomes(t Test) []int {
	homes := make([]int, len(t.Locs))
	for l := range homes {
		homes[l] = -1
		for _, kinds := range [][]Kind{{Load, Spin}, {Store}} {
			for th, prog := range t.Threads {
				for _, in := range prog {
					if homes[l] < 0 && in.Loc == l && in.accesses() && (in.Kind == kinds[0] || len(kinds) > 1 && in.Kind == kinds[1]) {
						homes[l] = th
					}
				}
			}
		}
		homes[l] = max(homes[l], 0)
	}
	return homes
}

// DefaultHomes puts each location on the processor of the thread
// DefaultT3DHomes chooses, with the threads placed by place (nil: thread i
// on i). Machine.Homes maps it to nodes.
func DefaultHomes(t Test, place []int) []int {
	homes := DefaultT3DHomes(t)
	for l, th := range homes {
		homes[l] = placeOf(place, th)
	}
	return homes
}

// checkNoAtomics refuses a test with an atomic instruction on machine
// name, saying why.
func checkNoAtomics(t Test, name, why string) error {
	for th, prog := range t.Threads {
		for _, in := range prog {
			if in.atomic() {
				return fmt.Errorf("litmus %s on %s: P%d: %s: %s", t.Name, name, th, t.instrString(in), why)
			}
		}
	}
	return nil
}

// RunMachine runs test t opts.Runs times on mc, a machine with remote
// writes: thread i as process opts.Place[i] (default i), location l in the
// memory of node homes[l] (Machine.Homes is the default). The jitters of
// opts are in the CPUs' clock cycles (Machine.JitterCycles and OpJitter
// are good defaults).
func RunMachine(t Test, mc Machine, homes []int, opts Options) (*Outcome, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("litmus: runs must be positive, got %d", opts.Runs)
	}
	user := fmt.Sprintf("litmus %s", t.Name)
	probe, err := mc.probe(max(len(t.Threads), 1))
	if err != nil {
		return nil, fmt.Errorf("litmus %s on %s: %w", t.Name, mc.Name, err)
	}
	unit := mc.unit(probe)
	thread := mc.ThreadUnit
	if thread == "" {
		thread = unit
	}
	procs, err := CheckPlace(t, opts.Place, mc.Name, thread, 0)
	if err != nil {
		return nil, err
	}
	if probe, err = mc.probe(procs); err != nil {
		return nil, fmt.Errorf("litmus %s on %s: %w", t.Name, mc.Name, err)
	}
	m, err := machines.Need[machines.RemoteWrite](probe, user, machines.VerbRemoteWrite)
	if err != nil {
		return nil, fmt.Errorf("litmus %s on %s: %w", t.Name, mc.Name, err)
	}
	nodes := machines.NodeOf(m, procs-1) + 1
	if err := checkHomes(t, mc.Name, unit, homes, nodes); err != nil {
		return nil, err
	}
	why := mc.NoAtomics
	if why == "" {
		why = "atomics on memory words are not mapped to the machine's verbs"
	}
	if err := checkNoAtomics(t, mc.Name, why); err != nil {
		return nil, err
	}
	if t.Cond.Prop == nil {
		return nil, fmt.Errorf("litmus %s: no final condition", t.Name)
	}
	owner, err := owners(t, mc.Name, unit, m, procs, homes)
	if err != nil {
		return nil, err
	}
	reads := remoteReads(t, m, opts.Place, homes)
	if slices.Contains(reads, true) {
		if _, err := machines.Need[machines.RemoteRead](m, fmt.Sprintf("%s (a load of a location on another %s; --home may put it at the reader)", user, unit), machines.VerbRemoteRead); err != nil {
			return nil, fmt.Errorf("litmus %s on %s: %w", t.Name, mc.Name, err)
		}
	}
	cpu := m.CPU(0).Config()
	start := mc.Start
	if start == nil {
		start = defaultStart
	}
	return runRemote(t, opts, remoteMachine{
		name:     mc.Name,
		clockMHz: cpu.ClockMHz,
		homes:    homes,
		start:    start(len(t.Locs), cpu),
		build:    mc.build(procs, user, owner, reads),
	})
}

// owners returns, for each node, a process of it (the remote verbs name
// processes): the lowest numbered; a location at a node that runs no
// process is an error.
func owners(t Test, machine, unit string, m machines.RemoteWrite, procs int, homes []int) ([]int, error) {
	nodes := machines.NodeOf(m, procs-1) + 1
	owner := make([]int, nodes)
	for i := range owner {
		owner[i] = -1
	}
	for pe := procs - 1; pe >= 0; pe-- {
		owner[machines.NodeOf(m, pe)] = pe
	}
	for l, h := range homes {
		if owner[h] < 0 {
			return nil, fmt.Errorf("litmus %s on %s: location %s on %s %d, which runs no process", t.Name, machine, t.Locs[l], unit, h)
		}
	}
	return owner, nil
}

// remoteReads tells, for each thread, whether it loads a location of
// another node.
func remoteReads(t Test, m machines.RemoteWrite, place []int, homes []int) []bool {
	reads := make([]bool, len(t.Threads))
	for th, prog := range t.Threads {
		own := machines.NodeOf(m, placeOf(place, th))
		for _, in := range prog {
			if (in.Kind == Load || in.Kind == Spin) && homes[in.Loc] != own {
				reads[th] = true
			}
		}
	}
	return reads
}

// defaultStart is the start of the threads of a test of locs locations on
// a machine that sets no Start: four loads of each location at the CPU's
// slowest load cost.
func defaultStart(locs int, cpu mem.Config) sim.Time {
	c := cpu.Costs
	return cpu.Clock().Cycles(float64(locs) * 4 * max(c.LoadCycles, c.MissCycles, c.UncachedLoadCycles, 1))
}

// fenceOn is a barrier of kind k by process pe on m, puts the remote
// writes it issued since its last barrier: m's own (Fencer), or else one
// that orders writes (all but FenceR) waits for the remote writes (Quiet)
// and one that orders reads (all but FenceW) flushes a non-coherent cache,
// which remote writes do not update.
func fenceOn(m machines.RemoteWrite, p *sim.Proc, pe int, k Kind, puts int) {
	writes, reads := k != FenceR, k != FenceW
	if f, ok := m.(Fencer); ok {
		f.LitmusFence(p, pe, writes, reads, puts)
		return
	}
	if writes {
		m.Quiet(p, pe)
	}
	if c := m.CPU(pe); reads && c.Config().Cache.Enabled && !c.Config().Cache.Coherent {
		c.FlushCache(p) // remote writes do not update a non-coherent cache
	}
}

// build returns the builder of a run of procs processes on mc: the
// locations at their owners, each thread's remote loads, stores and
// fences.
func (mc Machine) build(procs int, user string, owner []int, reads []bool) func(eng *sim.Engine) (remoteRun, error) {
	return func(eng *sim.Engine) (remoteRun, error) {
		mm, err := mc.Build(eng, procs)
		if err != nil {
			return remoteRun{}, err
		}
		m, err := machines.Need[machines.RemoteWrite](mm, user, machines.VerbRemoteWrite)
		if err != nil {
			return remoteRun{}, err
		}
		rd, _ := m.(machines.RemoteRead)
		return remoteRun{
			alloc: func(h int, name string, n int) (mem.Region, error) {
				return machines.MapRemote(m, nil, owner[h], owner[h], name, n)
			},
			thread: func(th, pe int) (func(p *sim.Proc) remoteThread, error) {
				var scratch mem.Region
				if reads[th] {
					if scratch, err = m.Alloc(pe, fmt.Sprintf("P%d get buffer", th), 8); err != nil {
						return nil, err
					}
				}
				cpu, own := m.CPU(pe), machines.NodeOf(m, pe)
				why := ""
				if n, ok := m.(SpinNoter); ok {
					why = n.LitmusSpinWhy(own)
				}
				return func(p *sim.Proc) remoteThread {
					puts := 0 // remote writes since the last barrier
					return remoteThread{
						own: own,
						cpu: cpu,
						get: func(h int, a mem.Addr) uint64 {
							rd.Get(p, pe, owner[h], scratch.Addr, a, 8)
							return scratch.Mem.Load64(scratch.Addr)
						},
						put: func(h int, a mem.Addr, v uint64) {
							m.PutWord(p, pe, owner[h], a, v)
							puts++
						},
						fence: func(k Kind) {
							fenceOn(m, p, pe, k, puts)
							if k != FenceR {
								puts = 0
							}
						},
						spinWhy: why,
					}
				}, nil
			},
		}, nil
	}
}

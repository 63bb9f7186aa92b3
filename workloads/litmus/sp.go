package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/lapi"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The IBM SP as a litmus machine (machines/sp, LAPI: papers/armci-sp.txt
// 2.4, 2.5): thread i runs as the LAPI task of node Place[i] (node i by
// default), each location lives in the memory of one node (its home: by
// default the node of the first thread that loads it, the consumer, as on
// the T3D), and a thread reaches a location the way a LAPI program does:
// one of its own node with the processor's loads and stores, one of
// another node with LAPI_Put (the store: the value is copied out of a
// scratch word and the call returns; the data lands whenever the message
// is dispatched at the target) or LAPI_Get then LAPI_Waitcntr on its
// origin counter (the load: a round trip through the target's
// dispatcher). A full or write barrier (smp_mb, MFENCE, smp_wmb, SFENCE)
// is LAPI_Fence: wait on the completion counter every put of the thread
// increments until all its puts are done at their targets ("LAPI_Fence
// ... enforces order on LAPI calls": the LAPI Programming Guide; ARMCI's
// own fence is the same wait, armci-sp.txt 2.3). smp_rmb has nothing to
// do (a load waits for its data). Atomics are not mapped (LAPI_Rmw is
// not in the machine model).
//
// LAPI guarantees no order between messages, and the switch may deliver
// the packets of two messages out of order (sp switch_jitter_us): so MP
// with both locations at the reader is observable, as are SB and 2+2W,
// and none of their fenced versions. Every location has one home memory,
// written only by its node's dispatcher or program, and a load waits for
// its data: LB, IRIW and WRC stay forbidden. In polling mode (sp progress
// polling), a thread that spins on its own memory never enters LAPI, so
// nothing lands on its node: the engine reports the hang.

// SPMachine is what RunSP and SPJitterCycles need of a machine: LAPI
// (machines/lapi) and each node's memory.
type SPMachine interface {
	lapi.LAPI
	Memory(i int) *mem.Memory
}

// SPConfig is what the SP runners read of the machine's params.
type SPConfig struct {
	ClockMHz       float64 // the nodes' clock (sp clock_mhz)
	SwitchJitterUs float64 // the switch's largest extra packet delay (sp switch_jitter_us)
	Polling        bool    // LAPI in polling mode (sp progress polling)
}

// spCapability names what SPMachine needs, for MissingCapability.
const spCapability = "LAPI put, get, counters and per-node memory (litmus.SPMachine)"

// buildSP builds a machine with build and asserts it is an SPMachine.
func buildSP(build Builder, eng *sim.Engine, procs int, user string) (SPMachine, error) {
	m, err := build(eng, procs)
	if err != nil {
		return nil, err
	}
	return machines.Require[SPMachine](m, user, spCapability)
}

// SPJitterCycles is the default start jitter span on the SP: twice the
// time, measured on the machine, for a one-word LAPI_Put to another node
// to complete (LAPI_Put, then a wait on its completion counter), in CPU
// cycles, so that a reader may come before, while or after a put lands.
func SPJitterCycles(build Builder, cfg SPConfig) (float64, error) {
	eng := sim.NewEngine(1)
	m, err := buildSP(build, eng, 2, "litmus SPJitterCycles")
	if err != nil {
		return 0, err
	}
	src, err := m.Alloc(0, "word", 8)
	if err != nil {
		return 0, err
	}
	dst, err := m.Alloc(1, "word", 8)
	if err != nil {
		return 0, err
	}
	tgt := m.NewCounter(1)
	eng.Spawn("node0", func(p *sim.Proc) {
		c := m.NewCounter(0)
		m.PutCounted(p, 0, 1, dst.Addr, src.Addr, 8, tgt, nil, c)
		m.Waitcntr(p, 0, c, 1)
	})
	// The target waits in LAPI (which polls), so that the put lands in
	// polling mode too.
	eng.Spawn("node1", func(p *sim.Proc) { m.Waitcntr(p, 1, tgt, 1) })
	if err := eng.Run(); err != nil {
		return 0, err
	}
	return 2 * eng.Now().Seconds() * cfg.ClockMHz * 1e6, nil
}

// SPOpJitterCycles is the default instruction jitter span on the SP: the
// switch's jitter in CPU cycles (as SCIOpJitterCycles), or, on a quiet
// switch, a put's software cost's order (20 us), so that instructions of
// different threads interleave.
func SPOpJitterCycles(cfg SPConfig) float64 {
	return max(cfg.SwitchJitterUs, 20) * cfg.ClockMHz
}

// DefaultHomes puts each location on the processor or node of the thread
// DefaultT3DHomes chooses (the first that loads it, or stores it), with
// the threads placed by place (nil: thread i on i).
func DefaultHomes(t Test, place []int) []int {
	homes := DefaultT3DHomes(t)
	for l, th := range homes {
		homes[l] = placeOf(place, th)
	}
	return homes
}

// RunSP runs test t opts.Runs times on an SP partition built by build,
// thread i on node opts.Place[i] (default i), location l in the memory of
// node homes[l]. The jitters of opts are in the nodes' clock cycles
// (SPJitterCycles, SPOpJitterCycles).
func RunSP(t Test, build Builder, cfg SPConfig, homes []int, opts Options) (*Outcome, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("litmus: runs must be positive, got %d", opts.Runs)
	}
	nodes, err := CheckPlace(t, opts.Place, "sp", "node", 0)
	if err != nil {
		return nil, err
	}
	if err := checkHomes(t, "sp", "node", homes, nodes); err != nil {
		return nil, err
	}
	if err := checkNoAtomics(t, "sp", "atomics on memory words are not modelled on the SP (LAPI_Rmw is not in the machine model)"); err != nil {
		return nil, err
	}
	if t.Cond.Prop == nil {
		return nil, fmt.Errorf("litmus %s: no final condition", t.Name)
	}
	user := fmt.Sprintf("litmus %s", t.Name)
	if _, err := buildSP(build, sim.NewEngine(1), nodes, user); err != nil {
		return nil, fmt.Errorf("litmus %s on sp: %w", t.Name, err)
	}
	clock := sim.ClockMHz(cfg.ClockMHz)
	return runRemote(t, opts, remoteMachine{
		name:     "sp",
		clockMHz: cfg.ClockMHz,
		homes:    homes,
		start:    clock.Cycles(float64(len(t.Locs)) * 10), // after the warm-up loads
		build: func(eng *sim.Engine) (remoteRun, error) {
			m, err := buildSP(build, eng, nodes, user)
			if err != nil {
				return remoteRun{}, err
			}
			return remoteRun{
				alloc:  m.Alloc,
				memory: m.Memory,
				thread: func(th, own int) (func(p *sim.Proc) remoteThread, error) {
					scratch, err := m.Alloc(own, fmt.Sprintf("P%d scratch", th), 8)
					if err != nil {
						return nil, err
					}
					cpu, local := m.CPU(own), m.Memory(own)
					why := ""
					if cfg.Polling {
						why = " (LAPI in polling mode: this spin makes no LAPI call, so nothing that arrives at node " + fmt.Sprint(own) + " is dispatched)"
					}
					return func(p *sim.Proc) remoteThread {
						org, cmpl := m.NewCounter(own), m.NewCounter(own)
						puts := 0 // puts not yet waited for by a fence
						return remoteThread{
							own: own,
							cpu: cpu,
							get: func(h int, a mem.Addr) uint64 {
								m.GetCounted(p, own, h, scratch.Addr, a, 8, nil, org)
								m.Waitcntr(p, own, org, 1)
								return local.Load64(scratch.Addr)
							},
							put: func(h int, a mem.Addr, v uint64) {
								local.Store64(scratch.Addr, v)
								m.PutCounted(p, own, h, a, scratch.Addr, 8, nil, nil, cmpl)
								puts++
							},
							fence: func(k Kind) {
								if k != FenceR { // a load waits for its data: a read barrier has nothing to wait for
									// LAPI_Fence: every put of the thread done at its target.
									m.Waitcntr(p, own, cmpl, puts)
									puts = 0
								}
							},
							spinWhy: why,
						}
					}, nil
				},
			}, nil
		},
	})
}

package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/lapi"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// SP is the IBM SP as a litmus machine (machines/sp, LAPI:
// papers/armci-sp.txt 2.4, 2.5), built by build with params of which cfg
// holds what the runner reads: thread i runs as the LAPI task of node
// Place[i] (node i by default), each location lives in the memory of one
// node (its home: by default the node of the first thread that loads it,
// the consumer, as on the T3D), and a thread reaches a location the way a
// LAPI program does: one of its own node with the processor's loads and
// stores, one of another node with LAPI_Put (the store: the call returns
// once the word is copied out; the data lands whenever the message is
// dispatched at the target) or LAPI_Get then LAPI_Waitcntr on its origin
// counter (the load: a round trip through the target's dispatcher): the
// SP's remote write and read verbs. A full or write barrier (smp_mb,
// MFENCE, smp_wmb, SFENCE) is LAPI_Fence: wait on the completion counter
// every put of the thread increments until all its puts are done at their
// targets ("LAPI_Fence ... enforces order on LAPI calls": the LAPI
// Programming Guide; ARMCI's own fence is the same wait, armci-sp.txt 2.3),
// the SP's Quiet; with no put outstanding it is still a LAPI call, in which
// the waiting program polls (LAPI_Waitcntr). smp_rmb has nothing to do (a
// load waits for its data). Atomics are not mapped (LAPI_Rmw is not in the
// litmus mapping).
//
// LAPI guarantees no order between messages, and the switch may deliver
// the packets of two messages out of order (sp switch_jitter_us): so MP
// with both locations at the reader is observable, as are SB and 2+2W,
// and none of their fenced versions. Every location has one home memory,
// written only by its node's dispatcher or program, and a load waits for
// its data: LB, IRIW and WRC stay forbidden. In polling mode (sp progress
// polling), a thread that spins on its own memory never enters LAPI, so
// nothing lands on its node: the engine reports the hang.
func SP(build Builder, cfg SPConfig) Machine {
	mode := "interrupt"
	if cfg.Polling {
		mode = "polling"
	}
	return Machine{
		Name:      "sp",
		Build:     build,
		Head:      fmt.Sprintf("SP, LAPI in %s mode, switch_jitter_us %g", mode, cfg.SwitchJitterUs),
		Unit:      "node",
		NoAtomics: "atomics on memory words are not modelled on the SP (LAPI_Rmw is not in the machine model)",
		Start: func(t Test, cpu mem.Config) sim.Time {
			return cpu.Clock().Cycles(float64(len(t.Locs)) * 10) // after the warm-up loads
		},
		StartJitterCycles: func() (float64, error) { return SPJitterCycles(build) },
		OpJitterCycles:    func(_ float64, cpu mem.Config) float64 { return SPOpJitterCycles(cfg, cpu.ClockMHz) },
		Fence: func(m machines.RemoteWrite, p *sim.Proc, pe int, k Kind, puts int) {
			if k == FenceR {
				return // a load waits for its data: a read barrier has nothing to wait for
			}
			if l, ok := m.(lapi.ActiveMessages); ok && puts == 0 {
				l.Waitcntr(p, pe, l.NewCounter(pe), 0) // LAPI_Fence with nothing to wait for: a LAPI call all the same
				return
			}
			m.Quiet(p, pe)
		},
		SpinWhy: func(node int) string {
			if !cfg.Polling {
				return ""
			}
			return " (LAPI in polling mode: this spin makes no LAPI call, so nothing that arrives at node " + fmt.Sprint(node) + " is dispatched)"
		},
	}
}

// SPConfig is what the SP runner reads of the machine's params.
type SPConfig struct {
	SwitchJitterUs float64 // the switch's largest extra packet delay (sp switch_jitter_us)
	Polling        bool    // LAPI in polling mode (sp progress polling)
}

// spCapability names what SPJitterCycles needs, for MissingCapability.
const spCapability = "LAPI put, get, counters and per-node memory (machines/lapi.ActiveMessages)"

// SPJitterCycles is the default start jitter span on the SP: twice the
// time, measured on the machine, for a one-word LAPI_Put to another node
// to complete (LAPI_Put, then a wait on its completion counter), in CPU
// cycles, so that a reader may come before, while or after a put lands.
// The target waits in LAPI (which polls), so that the put lands in polling
// mode too.
func SPJitterCycles(build Builder) (float64, error) {
	eng := sim.NewEngine(1)
	mm, err := build(eng, 2)
	if err != nil {
		return 0, err
	}
	m, err := machines.Require[lapi.ActiveMessages](mm, "litmus SPJitterCycles", spCapability)
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
	eng.Spawn("node1", func(p *sim.Proc) { m.Waitcntr(p, 1, tgt, 1) })
	if err := eng.Run(); err != nil {
		return 0, err
	}
	return 2 * eng.Now().Seconds() * m.CPU(0).Config().ClockMHz * 1e6, nil
}

// SPOpJitterCycles is the default instruction jitter span on the SP: the
// switch's jitter in CPU cycles of clockMHz (as SCIOpJitterCycles), or, on
// a quiet switch, a put's software cost's order (20 us), so that
// instructions of different threads interleave.
func SPOpJitterCycles(cfg SPConfig, clockMHz float64) float64 {
	return max(cfg.SwitchJitterUs, 20) * clockMHz
}

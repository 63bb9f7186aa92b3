package sp

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// LitmusTraits are the SP's choices for litmus tests (package litmus; LAPI:
// papers/armci-sp.txt 2.4, 2.5): thread i runs as the LAPI task of node
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
// the packets of two messages out of order (switch_jitter_us): so MP with
// both locations at the reader is observable, as are SB and 2+2W, and none
// of their fenced versions. Every location has one home memory, written
// only by its node's dispatcher or program, and a load waits for its data:
// LB, IRIW and WRC stay forbidden. In polling mode (progress polling), a
// thread that spins on its own memory never enters LAPI, so nothing lands
// on its node: the engine reports the hang.
func (m *Machine) LitmusTraits() machines.LitmusTraits {
	p := m.params
	mode := "interrupt"
	if p.Progress == "polling" {
		mode = "polling"
	}
	return machines.LitmusTraits{
		Summary: "thread i on node i of an IBM SP, each location in one node's memory (--home): remote stores are LAPI_Puts, which LAPI does not order and the switch may reorder (--switch-jitter-us), remote loads LAPI_Get + LAPI_Waitcntr; smp_mb is LAPI_Fence; shows MP, SB, 2+2W, MP+spin across nodes, not their fenced versions (nor LB, IRIW, WRC); on a quiet switch (--switch-jitter-us 0) only SB",
		Flags: []machines.LitmusFlag{
			{Name: "progress", Param: "progress", Usage: "with --machine sp: how LAPI handles incoming messages, interrupt or polling (a node's program polls only inside LAPI calls)"},
			// A packet queued behind one full packet of other traffic at
			// an adapter (1088 bytes at adapter_mbps 34: 32 us), rounded
			// up: what litmus runs default to.
			{Name: "switch-jitter-us", Param: "switch_jitter_us", Default: "40", Usage: "with --machine sp: the largest extra delay of a packet in the SP switch (switch_jitter_us: other traffic on the packet's route); 0 is a quiet switch, which delivers in order"},
		},
		Head:      fmt.Sprintf("SP, LAPI in %s mode, switch_jitter_us %g", mode, p.SwitchJitterUs),
		Unit:      "node",
		MaxUnits:  MaxNodes,
		NoAtomics: "atomics on memory words are not modelled on the SP (LAPI_Rmw is not in the machine model)",
		Start: func(locs int, cpu mem.Config) sim.Time {
			return cpu.Clock().Cycles(float64(locs) * 10) // after the warm-up loads
		},
		StartJitterCycles: func() (float64, error) { return LitmusJitterCycles(p) },
		OpJitterCycles:    func(_ float64, cpu mem.Config) float64 { return LitmusOpJitterCycles(p, cpu.ClockMHz) },
	}
}

// LitmusFence is a litmus barrier by process pe of the SP (package
// litmus's Fencer): LAPI_Fence if it orders writes, a wait until every put
// of the thread is done at its target; with no put outstanding it is still
// a LAPI call. A read barrier has nothing to do: a load waits for its data.
func (m *Machine) LitmusFence(proc *sim.Proc, pe int, writes, _ bool, puts int) {
	if !writes {
		return // a load waits for its data: a read barrier has nothing to wait for
	}
	if puts == 0 {
		m.Waitcntr(proc, pe, m.NewCounter(pe), 0) // LAPI_Fence with nothing to wait for: a LAPI call all the same
		return
	}
	m.Quiet(proc, pe)
}

// LitmusSpinWhy is appended to the wait reason of a litmus spin on node's
// memory (package litmus's SpinNoter): in polling mode, nothing that
// arrives at a spinning node is dispatched.
func (m *Machine) LitmusSpinWhy(node int) string {
	if m.params.Progress != "polling" {
		return ""
	}
	return " (LAPI in polling mode: this spin makes no LAPI call, so nothing that arrives at node " + fmt.Sprint(node) + " is dispatched)"
}

// LitmusJitterCycles is the default start jitter span of litmus tests on
// an SP of params p: twice the time, measured on the machine, for a
// one-word LAPI_Put to another node to complete (LAPI_Put, then a wait on
// its completion counter), in CPU cycles, so that a reader may come before,
// while or after a put lands. The target waits in LAPI (which polls), so
// that the put lands in polling mode too.
func LitmusJitterCycles(p Params) (float64, error) {
	eng := sim.NewEngine(1)
	m, err := New(eng, 2, p)
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
	eng.Spawn("node0", func(proc *sim.Proc) {
		c := m.NewCounter(0)
		m.PutCounted(proc, 0, 1, dst.Addr, src.Addr, 8, tgt, nil, c)
		m.Waitcntr(proc, 0, c, 1)
	})
	eng.Spawn("node1", func(proc *sim.Proc) { m.Waitcntr(proc, 1, tgt, 1) })
	if err := eng.Run(); err != nil {
		return 0, err
	}
	return 2 * eng.Now().Seconds() * m.CPU(0).Config().ClockMHz * 1e6, nil
}

// LitmusOpJitterCycles is the default instruction jitter span of litmus
// tests on an SP of params p: the switch's jitter in CPU cycles of clockMHz
// (as on the SCI cluster), or, on a quiet switch, a put's software cost's
// order (20 us), so that instructions of different threads interleave.
func LitmusOpJitterCycles(p Params, clockMHz float64) float64 {
	return max(p.SwitchJitterUs, 20) * clockMHz
}

package registry

import (
	"github.com/msgsim/msgsim/machines/challenge"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/machines/tcpcluster"
	"github.com/msgsim/msgsim/stacks/aclmpl"
	"github.com/msgsim/msgsim/stacks/armci"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/stacks/pvm"
	"github.com/msgsim/msgsim/stacks/scampi"
	"github.com/msgsim/msgsim/stacks/shmem"
	"github.com/msgsim/msgsim/workloads/litmus"
)

// Default returns a registry of the built-in machines, stacks and litmus
// adapters (the built-in workloads are added by package registry/all).
// Adding one is a line here.
func Default() *Registry {
	r := New()
	for _, e := range []MachineEntry{
		Machine(sx4.Name, "NEC SX-4 node: shared memory, non-coherent caches, reordered stores, System V semaphores (papers/mpich-sx4.txt)", sx4.DefaultParams, sx4.New),
		Machine(t3d.Name, "Cray T3D: PEs on a 3D torus, SHMEM put/get, fetch-and-increment, barrier network (papers/aclmpl-t3d.txt)", t3d.DefaultParams, t3d.New),
		Machine(sp.Name, "IBM SP: uniprocessor Power2 Super nodes on a multistage switch, LAPI put/get/active messages, interrupt or polling progress (papers/armci-sp.txt)", sp.DefaultParams, sp.New),
		Machine(sci.Name, "Scali PCI-SCI cluster: dual Pentium II nodes on a 2D torus of SCI ringlets, posted writes, reordering, checkpoints, faults (papers/scampi-sci.txt)", sci.DefaultParams, sci.New,
			Faults(sci.SoakFaults)),
		Machine(challenge.Name, "SGI Power Challenge: MIPS R10000s whose caches snoop one POWERpath-2 bus (MESI), System V shared memory, LL/SC atomics, sequentially consistent (papers/armci-sp.txt, Figure 6)", challenge.DefaultParams, challenge.New),
		Machine(tcpcluster.Name, "Linux cluster: dual 2.4 GHz Xeon SMP nodes, TCP through the kernel (system calls, copies, interrupts, poll() that sleeps) over Myrinet-2000 between nodes and the loopback device inside one (papers/mpich2-threads.txt)", tcpcluster.DefaultParams, tcpcluster.New),
	} {
		must(r.AddMachine(e))
	}
	for _, e := range []StackEntry{
		Stack(mpich.Name, "MPICH: short, eager and rendezvous protocols over ch_shmem and ch_lfshmem (one node's shared segment; ch_lfshmem's slots by remote writes across nodes), ch_t3d (remote writes) and MPICH2's ch3:sock (TCP sockets, poll())", mpich.ParamsFromYAMLAt, mpich.Open,
			Needs(mpich.Needs()...), Variants("{device: ch_shmem}", "{device: ch_shmem, lock: sysv}", "{device: ch_lfshmem}", "{device: ch_lfshmem, lock: sysv}", "{device: ch_t3d}", "{device: ch_t3d, receive_queue: per-sender}", "{device: ch_t3d, receive_queue: shared}", `{device: "ch3:sock"}`)),
		Stack(aclmpl.Name, "ACLMPL: synchronous and asynchronous put-based protocols, tree and binary-swap collectives", aclmpl.ParseParams, aclmpl.Open,
			Needs(aclmpl.Needs()...)),
		Stack(shmem.Name, "raw SHMEM: put, get, quiet, fetch-and-increment, symmetric memory; no messages", Decode(shmem.DefaultParams), shmem.Open,
			Needs(shmem.Needs()...)),
		// ARMCI's shared-memory port sends its message-passing barriers
		// through MPICH in its default configuration (ch_lfshmem), as the
		// paper's remap used: the registry opens it.
		StackOn(armci.Name, "ARMCI: strided, vector and contiguous put/get/accumulate, fences, read-modify-write; ports on LAPI (the SP's, Figure 3), shared segments (all processes on one node) and remote write/read (SHMEM; its lock from swap or fetch-and-increment, its barrier from remote writes where there is no barrier network)", mpich.Name, armci.ParseParams, armci.Opener,
			Needs(armci.Needs()...)),
		Stack(scampi.Name, "ScaMPI: write-only protocol over remote writes, 64-byte self-synchronizing envelopes with CRC, idempotent transfers (checkpointed where the machine has checkpoints), shared memory within a node", Decode(scampi.DefaultParams), scampi.Open,
			Needs(scampi.Needs()...)),
		Stack(pvm.Name, "PVM 3.3's direct route (CRI's for the T3D): psend/precv with tags and any-source over remote writes, a receive queue for early messages, data above PVM_DATA_MAX sent as separate parts; the group library's linear broadcast, root-collects reduce and barrier", pvm.ParseParams, pvm.Open,
			Needs(pvm.Needs()...)),
	} {
		must(r.AddStack(e))
	}
	for _, e := range []LitmusEntry{
		Litmus(sx4.Name, "each thread on a CPU of one node: non-coherent write-through scalar caches, stores to different lines drain out of order, the node's own costs", sx4Litmus),
		Litmus(t3d.Name, "thread i on PE i, each location in one PE's memory (--home): remote stores are puts, remote loads gets, local loads go through a cache that puts do not update; smp_mb is shmem_quiet + cache flush", t3dLitmus),
		Litmus(sci.Name, "thread i on node i of a Scali SCI cluster, each location in one node's memory (--home): remote stores are posted writes the fabric reorders (--reorder-ns), remote loads round trips; smp_mb is MemBarrier; shows MP, SB, 2+2W across nodes, not their MemBarrier versions", sciLitmus,
			LitmusFlag{Name: "reorder-ns", Param: "reorder_ns", Usage: "with --machine sci: the largest extra delay of an SCI packet in the fabric (reorder_ns; the teaching scenarios use 3000)"}),
		Litmus(sp.Name, "thread i on node i of an IBM SP, each location in one node's memory (--home): remote stores are LAPI_Puts, which LAPI does not order and the switch may reorder (--switch-jitter-us), remote loads LAPI_Get + LAPI_Waitcntr; smp_mb is LAPI_Fence; shows MP, SB, 2+2W, MP+spin across nodes, not their fenced versions (nor LB, IRIW, WRC); on a quiet switch (--switch-jitter-us 0) only SB", spLitmus,
			LitmusFlag{Name: "progress", Param: "progress", Usage: "with --machine sp: how LAPI handles incoming messages, interrupt or polling (a node's program polls only inside LAPI calls)"},
			// A packet queued behind one full packet of other traffic at
			// an adapter (1088 bytes at adapter_mbps 34: 32 us), rounded
			// up: what litmus runs default to.
			LitmusFlag{Name: "switch-jitter-us", Param: "switch_jitter_us", Default: "40", Usage: "with --machine sp: the largest extra delay of a packet in the SP switch (switch_jitter_us: other traffic on the packet's route); 0 is a quiet switch, which delivers in order"}),
		Litmus(challenge.Name, "each thread on a CPU of one Power Challenge: coherent caches snooping one bus, no store buffer others see past (the R10000 as the Challenge used it is sequentially consistent): the sc model", challengeLitmus),
	} {
		must(r.AddLitmus(e))
	}
	return r
}

// sx4Litmus runs litmus tests as the SX-4 CPU's own model: one node whose
// CPUs reach its one memory through the same crossbar.
func sx4Litmus(build litmus.Builder, _ sx4.Params) litmus.Machine {
	return litmus.Machine{Build: build, Head: "SX-4", MaxUnits: sx4.MaxCPUs, Note: " (the CPUs are alike: one memory through one crossbar)"}
}

// challengeLitmus runs litmus tests as the Power Challenge CPU's own
// model: one memory, caches kept coherent by the bus.
func challengeLitmus(build litmus.Builder, _ challenge.Params) litmus.Machine {
	return litmus.Machine{Build: build, Head: "Power Challenge", MaxUnits: challenge.MaxCPUs, Note: " (the CPUs are alike: one memory on one bus)"}
}

// t3dLitmus runs litmus tests on a T3D partition of up to MaxPEs PEs.
func t3dLitmus(build litmus.Builder, _ t3d.Params) litmus.Machine {
	mc := litmus.T3D(build)
	mc.MaxUnits = t3d.MaxPEs
	return mc
}

// sciLitmus runs litmus tests on an SCI cluster of p, on up to its
// torus's nodes.
func sciLitmus(build litmus.Builder, p sci.Params) litmus.Machine {
	mc := litmus.SCI(build, litmus.SCIConfig{LoadNs: p.LoadNs, ReorderNs: p.ReorderNs})
	mc.MaxUnits = p.TorusW * p.TorusH
	return mc
}

// spLitmus runs litmus tests on an SP of p, on up to MaxNodes nodes.
func spLitmus(build litmus.Builder, p sp.Params) litmus.Machine {
	mc := litmus.SP(build, litmus.SPConfig{SwitchJitterUs: p.SwitchJitterUs, Polling: p.Progress == "polling"})
	mc.MaxUnits = sp.MaxNodes
	return mc
}

// must panics on a registration error of a built-in (two built-ins with
// one name: a bug, found by every test).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

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
)

// Default returns a registry of the built-in machines and stacks (the
// built-in workloads are added by package registry/all). Adding one is a
// line here: a machine's litmus choices are in its own folder.
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
	return r
}

// must panics on a registration error of a built-in (two built-ins with
// one name: a bug, found by every test).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

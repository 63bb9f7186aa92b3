package registry

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/aclmpl"
	"github.com/msgsim/msgsim/stacks/armci"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/stacks/scampi"
	"github.com/msgsim/msgsim/stacks/shmem"
)

// Default returns a registry of the built-in machines and stacks. Adding
// one is a line here.
func Default() *Registry {
	r := New()
	for _, e := range []MachineEntry{
		Machine(sx4.Name, "NEC SX-4 node: shared memory, non-coherent caches, reordered stores, System V semaphores (papers/mpich-sx4.txt)", sx4.DefaultParams, sx4.New),
		Machine(t3d.Name, "Cray T3D: PEs on a 3D torus, SHMEM put/get, fetch-and-increment, barrier network (papers/aclmpl-t3d.txt)", t3d.DefaultParams, t3d.New),
		Machine(sp.Name, "IBM SP: uniprocessor Power2 Super nodes on a multistage switch, LAPI put/get/active messages, interrupt or polling progress (papers/armci-sp.txt)", sp.DefaultParams, sp.New),
		Machine(sci.Name, "Scali PCI-SCI cluster: dual Pentium II nodes on a 2D torus of SCI ringlets, posted writes, reordering, checkpoints, faults (papers/scampi-sci.txt)", sci.DefaultParams, sci.New,
			Faults(sci.SoakFaults)),
	} {
		must(r.AddMachine(e))
	}
	for _, e := range []StackEntry{
		Stack(mpich.Name, "MPICH: short, eager and rendezvous protocols over the devices ch_shmem, ch_lfshmem (SX-4) and ch_t3d", mpich.ParamsFromYAMLAt, mpich.Open,
			Needs(mpich.Needs()...), Variants("{device: ch_shmem}", "{device: ch_lfshmem}", "{device: ch_t3d}", "{device: ch_t3d, receive_queue: per-sender}")),
		Stack(aclmpl.Name, "ACLMPL: synchronous and asynchronous put-based protocols, tree and binary-swap collectives", aclmpl.ParseParams, aclmpl.Open,
			Needs(aclmpl.Needs()...)),
		Stack(shmem.Name, "raw SHMEM: put, get, quiet, fetch-and-increment, symmetric memory; no messages", Decode(shmem.DefaultParams), shmem.Open,
			Needs(shmem.Needs()...)),
		Stack(armci.Name, "ARMCI: strided, vector and contiguous put/get/accumulate, fences, read-modify-write; ports on LAPI (the SP's, Figure 3), shared segments (all processes on one node) and remote write/read (SHMEM; its lock from swap or fetch-and-increment, its barrier from remote writes where there is no barrier network)", armci.ParseParams, armci.Opener(openMPICH),
			Needs(armci.Needs()...)),
		Stack(scampi.Name, "ScaMPI: write-only protocol over remote writes, 64-byte self-synchronizing envelopes with CRC, idempotent transfers (checkpointed where the machine has checkpoints), shared memory within a node", Decode(scampi.DefaultParams), scampi.Open,
			Needs(scampi.Needs()...)),
	} {
		must(r.AddStack(e))
	}
	return r
}

// openMPICH opens MPICH in its default configuration (ch_lfshmem): the
// message-passing stack of ARMCI's shared-memory port's message-passing
// barriers.
func openMPICH(m machines.Machine) (*stacks.World, error) {
	return mpich.Open(m, mpich.DefaultParams())
}

// must panics on a registration error of a built-in (two built-ins with
// one name: a bug, found by every test).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

package t3d

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// LitmusTraits are the T3D's choices for litmus tests (package litmus):
// thread i runs on PE i (or the placement's), each location lives in the
// memory of one PE (its home), and a thread reaches a location the way T3D
// code does: a local one with its processor's loads and stores (through the
// non-coherent data cache, which remote puts do not update:
// hardware.yaml t3d.hw_cache_coherence), a remote one with a one-word put
// (shmem_put: the store returns once the data has left the PE, and puts to
// different PEs take different paths) or a get into a scratch word
// (shmem_get). A full barrier (smp_mb, MFENCE) is what T3D code needs for
// one: shmem_quiet (every put acknowledged) then a cache flush
// (shmem_udcflush); smp_wmb is the quiet alone, smp_rmb the flush alone.
// That is the generic mapping on the T3D's verbs (puts, quiet, gets, a
// non-coherent cache); the T3D sets only when threads start, its partition
// size and why atomics are refused (its fetch-and-increment is a register,
// not a memory word).
func (m *Machine) LitmusTraits() machines.LitmusTraits {
	return machines.LitmusTraits{
		Summary:   "thread i on PE i, each location in one PE's memory (--home): remote stores are puts, remote loads gets, local loads go through a cache that puts do not update; smp_mb is shmem_quiet + cache flush",
		Head:      "T3D",
		MaxUnits:  MaxPEs,
		NoAtomics: "atomics on memory words are not T3D operations (its fetch-and-increment is a register)",
		Start: func(locs int, cpu mem.Config) sim.Time {
			return cpu.Clock().Cycles(float64(locs) * 100) // after the warm-up loads (a miss is ~25 cycles)
		},
	}
}

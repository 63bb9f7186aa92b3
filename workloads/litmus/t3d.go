package litmus

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// T3D is the Cray T3D as a litmus machine, built by build: thread i runs on
// PE i (or Options.Place[i]), each location lives in the memory of one PE
// (its home), and a thread reaches a location the way T3D code does: a
// local one with its processor's loads and stores (through the
// non-coherent data cache, which remote puts do not update:
// hardware.yaml t3d.hw_cache_coherence), a remote one with a one-word put
// (shmem_put: the store returns once the data has left the PE, and puts to
// different PEs take different paths) or a get into a scratch word
// (shmem_get). A full barrier (smp_mb, MFENCE) is what T3D code needs for
// one: shmem_quiet (every put acknowledged) then a cache flush
// (shmem_udcflush); smp_wmb is the quiet alone, smp_rmb the flush alone.
// That is the generic mapping of Machine on the T3D's verbs (puts, quiet,
// gets, a non-coherent cache); T3D sets only when threads start and why
// atomics are refused (the T3D's fetch-and-increment is a register, not a
// memory word).
func T3D(build Builder) Machine {
	return Machine{
		Name:      "t3d",
		Build:     build,
		Head:      "T3D",
		NoAtomics: "atomics on memory words are not T3D operations (its fetch-and-increment is a register)",
		Start: func(t Test, cpu mem.Config) sim.Time {
			return cpu.Clock().Cycles(float64(len(t.Locs)) * 100) // after the warm-up loads (a miss is ~25 cycles)
		},
	}
}

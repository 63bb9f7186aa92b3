package litmus

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// The Cray T3D as a litmus machine: thread i runs on PE i (or
// Options.Place[i]), each location
// lives in the memory of one PE (its home), and a thread reaches a
// location the way T3D code does: a local one with its processor's loads
// and stores (through the non-coherent data cache, which remote puts do
// not update: hardware.yaml t3d.hw_cache_coherence), a remote one with a
// one-word put (shmem_put: the store returns once the data has left the
// PE, and puts to different PEs take different paths) or a get into a
// scratch word (shmem_get). A full barrier (smp_mb, MFENCE) is what T3D
// code needs for one: shmem_quiet (every put acknowledged) then a cache
// flush (shmem_udcflush); smp_wmb is the quiet alone, smp_rmb the flush
// alone. Atomics are not mapped (the T3D's fetch-and-increment register
// is not a memory word).

// Builder builds a machine of procs processors in eng: how a runner of
// this package gets a concrete machine (built by the caller, e.g. from a
// machine's params, or from a registry entry) without importing it.
type Builder func(eng *sim.Engine, procs int) (machines.Machine, error)

// T3DMachine is what RunT3D and T3DJitterCycles need of a machine: the
// T3D's one-sided put, quiet and get (machines.RemoteRead) and each PE's local
// memory.
type T3DMachine interface {
	machines.RemoteWrite
	machines.RemoteRead
	Memory(pe int) *mem.Memory
}

// T3DConfig is what the T3D runners read of the machine's params.
type T3DConfig struct {
	ClockMHz float64 // the PEs' clock (t3d clock_MHz)
}

// t3dCapability names what T3DMachine needs, for MissingCapability.
const t3dCapability = "one-sided put, quiet and get and per-PE memory (litmus.T3DMachine)"

// buildT3D builds a machine with build and asserts it is a T3DMachine.
func buildT3D(build Builder, eng *sim.Engine, procs int, user string) (T3DMachine, error) {
	m, err := build(eng, procs)
	if err != nil {
		return nil, err
	}
	return machines.Require[T3DMachine](m, user, t3dCapability)
}

// DefaultT3DHomes puts each location on the PE of the first thread that
// loads it (T3D code puts data to its consumer, the put being the fast
// one-sided operation), or, if no thread loads it, of the first that
// stores it.
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

// T3DJitterCycles is the default start and instruction jitter span on the
// T3D: twice the time, measured on the machine, for a one-word put to
// another PE to be acknowledged (shmem_put then shmem_quiet), in CPU
// cycles, so that a reader may come before, while or after a put lands.
func T3DJitterCycles(build Builder, cfg T3DConfig) (float64, error) {
	eng := sim.NewEngine(1)
	m, err := buildT3D(build, eng, 2, "litmus T3DJitterCycles")
	if err != nil {
		return 0, err
	}
	r, err := m.Alloc(1, "word", 8)
	if err != nil {
		return 0, err
	}
	eng.Spawn("pe0", func(p *sim.Proc) {
		m.PutWord(p, 0, 1, r.Addr, 1)
		m.Quiet(p, 0)
	})
	if err := eng.Run(); err != nil {
		return 0, err
	}
	return 2 * eng.Now().Seconds() * cfg.ClockMHz * 1e6, nil
}

// RunT3D runs test t opts.Runs times on a T3D partition built by build,
// thread i on PE opts.Place[i] (default i; the partition has as many PEs
// as the highest placed one needs, so that a placement far on the torus
// makes puts and gets cross more links), location l homed on PE homes[l]. The jitters of opts
// are in the PEs' clock cycles (T3DJitterCycles is a good default).
func RunT3D(t Test, build Builder, cfg T3DConfig, homes []int, opts Options) (*Outcome, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("litmus: runs must be positive, got %d", opts.Runs)
	}
	pes, err := CheckPlace(t, opts.Place, "t3d", "PE", 0)
	if err != nil {
		return nil, err
	}
	if err := checkHomes(t, "t3d", "PE", homes, pes); err != nil {
		return nil, err
	}
	if err := checkNoAtomics(t, "t3d", "atomics on memory words are not T3D operations (its fetch-and-increment is a register)"); err != nil {
		return nil, err
	}
	user := fmt.Sprintf("litmus %s", t.Name)
	if _, err := buildT3D(build, sim.NewEngine(1), pes, user); err != nil {
		return nil, fmt.Errorf("litmus %s on t3d: %w", t.Name, err)
	}
	clock := sim.ClockMHz(cfg.ClockMHz)
	return runRemote(t, opts, remoteMachine{
		name:     "t3d",
		clockMHz: cfg.ClockMHz,
		homes:    homes,
		start:    clock.Cycles(float64(len(t.Locs)) * 100), // after the warm-up loads (a miss is ~25 cycles)
		build: func(eng *sim.Engine) (remoteRun, error) {
			m, err := buildT3D(build, eng, pes, user)
			if err != nil {
				return remoteRun{}, err
			}
			return remoteRun{
				alloc:  m.Alloc,
				memory: m.Memory,
				thread: func(th, pe int) (func(p *sim.Proc) remoteThread, error) {
					scratch, err := m.Alloc(pe, "get buffer", 8)
					if err != nil {
						return nil, err
					}
					cpu := m.CPU(pe)
					return func(p *sim.Proc) remoteThread {
						return remoteThread{
							own: pe,
							cpu: cpu,
							get: func(h int, a mem.Addr) uint64 {
								m.Get(p, pe, h, scratch.Addr, a, 8)
								return m.Memory(pe).Load64(scratch.Addr)
							},
							put: func(h int, a mem.Addr, v uint64) { m.PutWord(p, pe, h, a, v) },
							fence: func(k Kind) {
								if k != FenceR {
									m.Quiet(p, pe)
								}
								if k != FenceW {
									cpu.FlushCache(p)
								}
							},
						}
					}, nil
				},
			}, nil
		},
	})
}

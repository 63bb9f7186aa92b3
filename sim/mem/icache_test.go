package mem

import (
	"math/rand/v2"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestExecuteInstructionCache runs code paths through a 1 KB direct-mapped
// instruction cache of 32-byte lines: a path that fits misses only the
// first time; two paths whose lines share indices evict each other on
// every alternation; without an instruction cache Execute is Compute.
func TestExecuteInstructionCache(t *testing.T) {
	const clock, miss, work = 100.0, 10.0, 50.0 // MHz, cycles a line fill, cycles of work
	a := Code{Addr: 0, Bytes: 512}              // 16 lines
	b := Code{Addr: 1024, Bytes: 512}           // the same 16 indices as a
	c := Code{Addr: 512, Bytes: 512}            // the other 16
	cases := []struct {
		name    string
		enabled bool
		runs    []Code
		misses  uint64
	}{
		{"one path, warm after the first run", true, []Code{a, a, a}, 16},
		{"two paths that fit", true, []Code{a, c, a, c}, 32},
		{"two paths that conflict", true, []Code{a, b, a, b}, 64},
		{"no instruction cache", false, []Code{a, b, a, b}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{ClockMHz: clock, Costs: Costs{MissCycles: miss}}
			cfg.ICache = ICacheConfig{Enabled: tc.enabled, LineBytes: 32, SizeBytes: 1024}
			e := sim.NewEngine(1)
			cpu, err := NewCPU(e, "c", NewMemory("n", 0), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var took sim.Time
			e.Spawn("p", func(p *sim.Proc) {
				for _, code := range tc.runs {
					cpu.Execute(p, code, work)
				}
				took = p.Now()
			})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if got := cpu.Stats().IMisses; got != tc.misses {
				t.Errorf("misses = %d, want %d", got, tc.misses)
			}
			want := cpu.Clock().Cycles(float64(len(tc.runs))*work + float64(tc.misses)*miss)
			if took != want {
				t.Errorf("took %v, want %v", took, want)
			}
		})
	}
}

func TestICacheConfigValidate(t *testing.T) {
	for _, ic := range []ICacheConfig{
		{Enabled: true, LineBytes: 24, SizeBytes: 1024},
		{Enabled: true, LineBytes: 32, SizeBytes: 16},
		{Enabled: true, LineBytes: 32, SizeBytes: 1000},
	} {
		if err := (Config{ClockMHz: 1, ICache: ic}).Validate(); err == nil {
			t.Errorf("%+v: no error", ic)
		}
	}
}

// TestICacheRunsMatchLineByLine: the instruction cache held as runs
// counts the misses a tag per line counts, on random paths (some longer
// than the cache, some wrapping round its end) in caches of a few sizes.
func TestICacheRunsMatchLineByLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sets := range []uint64{1, 3, 8, 256} {
		ic := &icache{sets: sets}
		tags := make([]uint64, sets)
		paths := make([][2]uint64, 6)
		for i := range paths {
			first := rng.Uint64N(4 * sets)
			paths[i] = [2]uint64{first, first + rng.Uint64N(sets+sets/2+2)}
		}
		for step := range 2000 {
			pth := paths[rng.IntN(len(paths))]
			if rng.IntN(10) == 0 {
				first := rng.Uint64N(4 * sets)
				pth = [2]uint64{first, first + rng.Uint64N(2*sets+1)}
			}
			want := 0
			for l := pth[0]; l <= pth[1]; l++ {
				if i := l % sets; tags[i] != l+1 {
					tags[i] = l + 1
					want++
				}
			}
			if got := ic.run(pth[0], pth[1]); got != want {
				t.Fatalf("sets %d, step %d, lines %d..%d: %d misses, line by line %d", sets, step, pth[0], pth[1], got, want)
			}
		}
	}
}

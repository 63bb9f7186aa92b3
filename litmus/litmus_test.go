package litmus

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim/mem"
)

func run(t *testing.T, test, model string, runs int, seed uint64) *Outcome {
	t.Helper()
	tt, err := Lookup(test)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mem.Builtin(model)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(tt, cfg)
	opts.Runs, opts.Seed = runs, seed
	o, err := RunTest(tt, model, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestNoncoherentStaleReads: with warm non-coherent caches every reader
// sees its stale zeros, so SB's forbidden outcome shows in every run.
func TestNoncoherentStaleReads(t *testing.T) {
	o := run(t, "SB", "noncoherent", 200, 3)
	if o.Observation() != "Always" {
		t.Fatalf("got %s %d %d", o.Observation(), o.Positive, o.Negative)
	}
}

func TestDeterministic(t *testing.T) {
	var outs []string
	for _, seed := range []uint64{7, 7, 8} {
		var b bytes.Buffer
		if err := Write(&b, run(t, "MP", "pso", 500, seed)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b.String())
	}
	if outs[0] != outs[1] {
		t.Fatalf("same seed, different output:\n%s\n%s", outs[0], outs[1])
	}
	if outs[0] == outs[2] {
		t.Fatal("different seeds gave identical histograms")
	}
}

func TestFencedProgram(t *testing.T) {
	tt, _ := Lookup("wrc+FENCES")
	got := strings.Join(tt.Program(), " | ")
	want := "P0: x=1 | P1: r0=x; fence; y=1 | P2: r1=y; fence; r2=x"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, err := Lookup("XYZ"); err == nil || !strings.Contains(err.Error(), "MP+fences") {
		t.Fatalf("unknown test error: %v", err)
	}
}

// TestSpeed asserts the work, not the wall clock: 10,000 runs of MP stay
// within a small number of engine events per run.
func TestSpeed(t *testing.T) {
	o := run(t, "MP", "pso", 10000, 1)
	if per := float64(o.Events) / 10000; per > 30 {
		t.Fatalf("%.1f events per run", per)
	}
}

// scStates returns the final states of t under sequential consistency, as
// stateText formats them, by enumerating every interleaving of its threads.
func scStates(t Test) map[string]bool {
	out := map[string]bool{}
	r := newRunner(t, mem.Config{}, Options{})
	pc := make([]int, len(t.Threads))
	locs := make([]uint64, len(t.Locs))
	regs := make([]uint64, t.Registers())
	var walk func()
	walk = func() {
		done := true
		for i, prog := range t.Threads {
			if pc[i] == len(prog) {
				continue
			}
			done = false
			in := prog[pc[i]]
			if in.Kind == Spin && locs[in.Loc] != in.Val {
				continue // blocked until another thread stores
			}
			savedLoc, savedReg := locs[in.Loc], uint64(0)
			if in.Kind == Load || in.Kind == Spin {
				savedReg = regs[in.Reg]
			}
			switch in.Kind {
			case Store:
				locs[in.Loc] = in.Val
			case Load, Spin:
				regs[in.Reg] = locs[in.Loc]
			}
			pc[i]++
			walk()
			pc[i]--
			locs[in.Loc] = savedLoc
			if in.Kind == Load || in.Kind == Spin {
				regs[in.Reg] = savedReg
			}
		}
		if done {
			out[r.stateText(regs, locs)] = true
		}
	}
	walk()
	return out
}

func TestDefaultJitterCycles(t *testing.T) {
	for _, c := range []struct {
		test, model string
		want        float64
	}{
		// Twice the programs one after another (a load as a 10-cycle
		// miss, a store 1 cycle, a fence its cost and a drain of the
		// buffer), or twice the stores' drains, whichever is longer.
		{"MP", "sc", 44}, {"MP", "tso", 44}, {"SB", "pso", 44}, {"2+2W", "noncoherent", 32}, {"WRC", "tso", 64}, {"IRIW+fences", "pso", 220},
	} {
		tt, _ := Lookup(c.test)
		cfg, _ := mem.Builtin(c.model)
		if got := DefaultJitterCycles(tt, cfg); got != c.want {
			t.Errorf("%s on %s: %g cycles, want %g", c.test, c.model, got, c.want)
		}
	}
}

// TestStateCodes: distinct states get distinct codes; a value too wide for
// the code is an error, never clamped into another state's code.
func TestStateCodes(t *testing.T) {
	codes := map[int]string{}
	for _, c := range []struct {
		regs, locs []uint64
		mem        bool
		width      int
	}{
		{[]uint64{0, 0}, nil, false, 1}, {[]uint64{0, 1}, nil, false, 1}, {[]uint64{1, 0}, nil, false, 1},
		{[]uint64{1, 1}, nil, false, 1}, {nil, []uint64{2, 1}, true, 1}, {[]uint64{9, 9, 9}, nil, false, 1},
		{[]uint64{10, 0}, nil, false, 2}, {[]uint64{1, 0, 0}, nil, false, 2},
	} {
		tt := Test{}
		if c.mem {
			tt.Observed = []bool{true, true}
		}
		code, err := tt.stateCode(c.regs, c.locs, c.width)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(c.regs, c.locs, c.width)
		if prev, dup := codes[code]; dup {
			t.Errorf("%s and %s share code %d", prev, key, code)
		}
		codes[code] = key
	}
	if _, err := (Test{}).stateCode([]uint64{10, 0}, nil, 1); err == nil {
		t.Error("a value of 10 in a 1-digit code was accepted")
	}
	// Only the observed locations are in the code.
	x := Test{Observed: []bool{false, true}}
	if a, _ := x.stateCode(nil, []uint64{1, 2}, 1); a != 2 {
		t.Errorf("code of x=1; y=2 observing y: %d, want 2", a)
	}
	for _, tt := range Tests() {
		if d := tt.CodeDigits(); d != 1 {
			t.Errorf("%s: %d digits per value", tt.Name, d)
		}
	}
}

package litmus

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// allTests returns the built-in tests and every file under testdata.
func allTests(t *testing.T) []Test {
	t.Helper()
	tests := Tests()
	files, _ := filepath.Glob(filepath.Join("testdata", "*.litmus"))
	for _, f := range files {
		tt := parseFile(t, f)
		tt.Name = "file:" + tt.Name // the files repeat some built-in names in X86 syntax
		tests = append(tests, tt)
	}
	return tests
}

// allowed lists, per model, the tests whose condition the model allows
// (exhaustively: some final state satisfies the proposition); every other
// test's proposition is satisfied by no reachable final state. "file:" marks
// the tests under testdata. The x86 tests on tso give x86-TSO's verdicts
// (Owens, Sarkar, Sewell, "A better x86 memory model: x86-TSO", 2009);
// nmca shows IRIW, WRC and LB as POWER and ARMv7 do.
func allowed() map[string][]string {
	common := []string{"file:Counter+lock"} // forall (c=3): satisfied by every state everywhere
	return map[string][]string{
		"sc":  common,
		"tso": append([]string{"SB", "file:SB", "file:SB+rfi-pos", "file:R"}, common...),
		"pso": append([]string{"SB", "MP", "2+2W", "MP+spin", "file:SB", "file:SB+rfi-pos", "file:R",
			"file:MP", "file:S", "file:2+2W", "file:MP+ctrl"}, common...),
		// Warm non-coherent caches keep returning the zeros they hold: no
		// reader ever sees another thread's store unless it flushes, so
		// MP, S, IRIW, WRC never show, SB shows even through xchg, and
		// MP+spin never finishes.
		"noncoherent": append([]string{"SB", "2+2W", "file:SB", "file:SB+rfi-pos", "file:R", "file:2+2W",
			"file:SB+xchgs", "file:SB+xchg", "file:SB+lock-cmpxchgs"}, common...),
		NMCA: append([]string{"MP", "SB", "LB", "IRIW", "2+2W", "WRC", "MP+spin",
			"file:MP", "file:SB", "file:SB+rfi-pos", "file:R", "file:LB", "file:S", "file:2+2W", "file:IRIW", "file:WRC",
			// A control dependency orders a store after the load its
			// branch reads (LB+ctrls forbidden, as on POWER and ARM) and,
			// here, a load too (MP+wmb+ctrl forbidden: stronger than POWER
			// and ARM, which speculate loads past branches).
			"file:MP+ctrl"}, common...),
	}
}

func models() []string { return append(mem.BuiltinNames(), NMCA) }

// TestExhaustiveVerdicts: every built-in and testdata test gives its
// expected verdict on every model, by exhaustive enumeration; no fenced
// variant (mfences, fences, wmb+rmb, rel+acq, xchg on a coherent model)
// ever shows its condition.
func TestExhaustiveVerdicts(t *testing.T) {
	want := allowed()
	for _, model := range models() {
		cfg, _ := mem.Builtin(model)
		for _, tt := range allTests(t) {
			t.Run(model+"/"+tt.Name, func(t *testing.T) {
				start := time.Now()
				o, err := Explore(tt, model, cfg, true)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d states explored, %d final, in %v", o.Explored, len(o.States), time.Since(start))
				stuck := model == "noncoherent" && strings.HasPrefix(tt.Name, "MP+spin")
				if stuck != (o.Failed > 0) {
					t.Fatalf("failed paths: %d (%v)", o.Failed, o.FirstFailure)
				}
				if got, w := o.Positive > 0, slices.Contains(want[model], tt.Name); got != w {
					t.Errorf("condition satisfied by %d of %d final states; want allowed=%v", o.Positive, len(o.States), w)
				}
			})
		}
	}
}

// TestSCMatchesInterleavings: on sc, the exhaustive states are exactly the
// interleavings' (scStates).
func TestSCMatchesInterleavings(t *testing.T) {
	cfg, _ := mem.Builtin("sc")
	for _, tt := range Tests() {
		o, err := Explore(tt, "sc", cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		want := scStates(tt)
		if len(o.States) != len(want) {
			t.Errorf("%s: %d states, SC interleavings give %d", tt.Name, len(o.States), len(want))
		}
		for _, s := range o.States {
			if !want[s.Text] {
				t.Errorf("%s: non-SC state %s", tt.Name, s.Text)
			}
		}
	}
}

// TestSampledWithinExhaustive: the default sampled run and the exhaustive
// exploration agree on what is possible, for every classic (built-in) test
// on every model:
// the sampling reaches every state the exploration finds (so a class is
// never told "Never" of an outcome the model allows) and no other, and the
// condition is observed by sampling exactly when the exploration allows
// it, and exactly for the tests allowed() lists (no fenced variant ever).
// On noncoherent every run of MP+spin and MP+spin+fences livelocks, and
// the report says why. The sampling runs sampledRuns runs with the
// default jitters; the default run count is larger still.
func TestSampledWithinExhaustive(t *testing.T) {
	const sampledRuns = 1000
	want := allowed()
	for _, model := range models() {
		cfg, _ := mem.Builtin(model)
		for _, tt := range Tests() {
			t.Run(model+"/"+tt.Name, func(t *testing.T) {
				ex, err := Explore(tt, model, cfg, true)
				if err != nil {
					t.Fatal(err)
				}
				opts := DefaultOptions(tt, cfg)
				opts.Runs = sampledRuns
				if model == NMCA { // a random walk: some paths are rare
					opts.Runs *= 4
				}
				o, err := RunTest(tt, model, cfg, opts)
				if err != nil {
					t.Fatal(err)
				}
				states, sampled := map[string]bool{}, map[string]bool{}
				for _, s := range o.States {
					sampled[s.Text] = true
				}
				for _, s := range ex.States {
					states[s.Text] = true
					if !sampled[s.Text] {
						t.Errorf("state %s, allowed (found by the exhaustive exploration), never sampled in %d runs", s.Text, o.Opts.Runs)
					}
				}
				for _, s := range o.States {
					if !states[s.Text] {
						t.Errorf("sampled state %s (%d runs) not found by the exhaustive exploration", s.Text, s.Count)
					}
				}
				if (o.Positive > 0) != (ex.Positive > 0) {
					t.Errorf("sampled: %s %d %d; exhaustive: %s %d %d", o.Observation(), o.Positive, o.Negative, ex.Observation(), ex.Positive, ex.Negative)
				}
				if (o.Failed > 0) != (ex.Failed > 0) {
					t.Errorf("sampled failed %d, exhaustive %d", o.Failed, ex.Failed)
				}
				if w := slices.Contains(want[model], tt.Name); o.Observed() != w {
					t.Errorf("sampled: observed=%v (%s %d %d), want %v", o.Observed(), o.Observation(), o.Positive, o.Negative, w)
				}
				if model == "noncoherent" && strings.HasPrefix(tt.Name, "MP+spin") {
					if o.Failed != o.Opts.Runs || !sim.IsLivelock(o.FirstFailure) {
						t.Fatalf("want every run to livelock, got %d of %d failed, first: %v", o.Failed, o.Opts.Runs, o.FirstFailure)
					}
					for _, want := range []string{"P1 spinning", "waiting for y=1", "non-coherent cache whose copy is stale"} {
						if msg := o.FirstFailure.Error(); !strings.Contains(msg, want) {
							t.Errorf("livelock report lacks %q:\n%s", want, msg)
						}
					}
				}
			})
		}
	}
}

// TestExploreIsSimExplore: the exhaustive search is sim/explore's (the
// schedule explorer of the threads scenarios): its choice points are the
// states explored, state hashing prunes the runs that reach a state again,
// and its state limit ends a search that would be too big in an error.
func TestExploreIsSimExplore(t *testing.T) {
	tt, err := Lookup("IRIW")
	if err != nil {
		t.Fatal(err)
	}
	o, err := Explore(tt, NMCA, mem.Config{}, true)
	if err != nil {
		t.Fatal(err)
	}
	x := o.Search
	if x.States == 0 || x.States != o.Explored || x.Schedules == 0 || x.Pruned == 0 || x.Failures != 0 {
		t.Fatalf("explored %d; sim/explore: %v", o.Explored, x)
	}
	if _, err := explore(tt, NMCA, mem.Config{}, true, 10); err == nil || !strings.Contains(err.Error(), "more than 10 states") {
		t.Fatalf("state limit 10: %v", err)
	}
}

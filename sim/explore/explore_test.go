package explore

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// toy runs procs processes at the same simulated time, each taking steps
// at scheduling points on the objects given; bug makes the run fail when
// process b takes its first step before a.
func toy(objects [][]string, bug bool) func(c sim.Chooser) error {
	return func(c sim.Chooser) error {
		e := sim.NewEngine(1)
		e.Set(sim.WithChooser(c))
		var order []string
		for i, objs := range objects {
			name := string(rune('a' + i))
			e.Spawn(name, func(p *sim.Proc) {
				for k, o := range objs {
					p.Point(o, fmt.Sprintf("step %d on %s", k+1, o))
					order = append(order, fmt.Sprintf("%s%d", name, k+1))
					p.Sleep(sim.Nanosecond) // every step costs the same: ties again
				}
			})
		}
		if err := e.Run(); err != nil {
			return err
		}
		if bug && order[0] == "b1" {
			return errors.New("b went first")
		}
		return nil
	}
}

func explore1(opts Options, run func(c sim.Chooser) error) Result {
	return Run(opts, func(p *Path) error { return run(p) })
}

// TestExploreCounts: the explorer's counts are deterministic; it finds a
// planted order bug and the shortest failing schedule replays to it.
func TestExploreCounts(t *testing.T) {
	run := toy([][]string{{"x", "y"}, {"x", "y"}}, true)
	x := explore1(Options{Bound: 2}, run)
	y := explore1(Options{Bound: 2}, run)
	if x.Schedules != y.Schedules || x.States != y.States || x.Points != y.Points || x.Failures != y.Failures {
		t.Fatalf("counts differ: %v / %v", x, y)
	}
	if x.Failures == 0 || x.Shortest != "1" {
		t.Fatalf("%v", x)
	}
	if err := run(NewSchedule(x.Shortest)); err == nil || err.Error() != x.Err.Error() {
		t.Fatalf("replay of %q: %v", x.Shortest, err)
	}
	t.Logf("%v", x)
}

// TestExploreEveryInterleaving: with no bound and no reduction, three
// processes of two steps each at equal times are run in every
// interleaving the engine allows.
func TestExploreEveryInterleaving(t *testing.T) {
	seen := map[string]bool{}
	objs := [][]string{{"", ""}, {"", ""}, {"", ""}}
	x := Run(Options{Bound: -1}, func(p *Path) error {
		e := sim.NewEngine(1)
		e.Set(sim.WithChooser(p))
		trace := ""
		for i, o := range objs {
			e.Spawn(fmt.Sprint(i), func(q *sim.Proc) {
				for range o {
					q.Point("", "step")
					trace += q.Name()
				}
			})
		}
		err := e.Run()
		if !p.Pruned() {
			seen[trace] = true
		}
		return err
	})
	// 6!/(2!2!2!) = 90 interleavings of the steps.
	if len(seen) != 90 || x.Schedules < 90 {
		t.Fatalf("%d distinct interleavings in %v", len(seen), x)
	}
}

// TestExploreSleepSets: steps on different objects are not permuted: the
// reduction explores fewer states and still finds the bug when the racing
// steps touch the same object, and none when they do not race. Three
// processes, the third of one step: the full search is 5,400 schedules
// (48,600 with two steps each).
func TestExploreSleepSets(t *testing.T) {
	indep := [][]string{{"a1", "a2"}, {"b1", "b2"}, {"c1"}}
	full := explore1(Options{Bound: -1}, toy(indep, false))
	red := explore1(Options{Bound: -1, Reduce: true}, toy(indep, false))
	if red.States >= full.States || red.Schedules >= full.Schedules {
		t.Fatalf("no reduction: full %v; reduced %v", full, red)
	}
	t.Logf("independent steps: full %v; reduced %v", full, red)
	racy := [][]string{{"x", "a"}, {"x", "b"}}
	if r := explore1(Options{Bound: -1, Reduce: true}, toy(racy, true)); r.Failures == 0 {
		t.Fatalf("reduction hid the bug: %v", r)
	}
}

// TestExploreFingerprint: a model's state fingerprint prunes states
// already explored.
func TestExploreFingerprint(t *testing.T) {
	run := func(fp bool) Result {
		return Run(Options{Bound: -1}, func(p *Path) error {
			e := sim.NewEngine(1)
			e.Set(sim.WithChooser(p))
			count := map[string]int{}
			if fp {
				// The state: how many steps each process took (their
				// order does not matter to what comes next).
				p.Fingerprint = func() uint64 {
					return uint64(count["0"]) | uint64(count["1"])<<8 | uint64(count["2"])<<16
				}
			}
			for i := 0; i < 3; i++ {
				e.Spawn(fmt.Sprint(i), func(q *sim.Proc) {
					for range 2 {
						q.Point("", "step")
						count[q.Name()]++
					}
				})
			}
			return e.Run()
		})
	}
	plain, hashed := run(false), run(true)
	if hashed.States >= plain.States {
		t.Fatalf("no pruning: %v / %v", plain, hashed)
	}
	t.Logf("plain %v; hashed %v", plain, hashed)
}

// TestChooserDefaultOrder: a sim.Chooser that always picks the first
// alternative gives the engine's own order.
func TestChooserDefaultOrder(t *testing.T) {
	run := func(c sim.Chooser) string {
		e := sim.NewEngine(1)
		if c != nil {
			e.Set(sim.WithChooser(c))
		}
		s := ""
		for i := 0; i < 3; i++ {
			e.Spawn(fmt.Sprint(i), func(q *sim.Proc) {
				for k := 0; k < 3; k++ {
					s += q.Name()
					q.Sleep(sim.Time(1 + (i+k)%2))
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if a, b := run(nil), run(NewSchedule("")); a != b {
		t.Fatalf("engine order %q, under a first-pick chooser %q", a, b)
	}
}

// TestExploreMaxStates: the state limit stops a search at that many
// choice points and says so.
func TestExploreMaxStates(t *testing.T) {
	x := Run(Options{Bound: -1, MaxStates: 3}, func(p *Path) error {
		for range 4 {
			if p.Pick([]sim.Alt{{ID: 0, Label: "a"}, {ID: 1, Label: "b"}}) < 0 {
				return nil
			}
		}
		return nil
	})
	if !x.StateLimit || x.States != 3 || !strings.Contains(x.String(), "state limit") {
		t.Fatalf("%v", x)
	}
}

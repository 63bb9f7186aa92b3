package sim

import (
	"errors"
	"testing"
)

// TestExploreCounts: two processes, each with two scheduling points and a
// planted order bug (b runs its second step before a's first): the
// explorer's counts are deterministic, it finds the bug, and its shortest
// failing schedule replays to the same failure.
func TestExploreCounts(t *testing.T) {
	run := func(c *Schedule) error {
		e := NewEngine(1)
		var order []string
		for _, n := range []string{"a", "b"} {
			e.Spawn(n, func(p *Proc) {
				for _, step := range []string{"1", "2"} {
					c.Choose(p, "step "+step)
					order = append(order, n+step)
				}
			})
		}
		if err := e.Run(); err != nil {
			return err
		}
		if order[0] == "b1" {
			return errors.New("b went first: " + order[0])
		}
		return nil
	}
	x := Explore(2, 0, run)
	y := Explore(2, 0, run)
	if x.Schedules != y.Schedules || x.Points != y.Points || x.Failures != y.Failures {
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

package sim

import (
	"fmt"
	"strings"
)

// Chooser decides, at a scheduling point a model offers (a thread about to
// take a lock or enter a library call), whether the running process goes on
// (false) or yields so that every other process ready at the same
// simulated time runs first (true). A nil Chooser keeps the engine's own
// order (first scheduled, first run).
type Chooser interface {
	Choose(p *Proc, point string) bool
}

// Schedule is a Chooser that replays a schedule string ('0' go on, '1'
// yield, one character per scheduling point; points past its end go on)
// and records the choices made, with the point each was made at.
type Schedule struct {
	prefix string
	taken  []byte
	points []string
}

// NewSchedule returns a Chooser replaying s (as printed by Explore).
func NewSchedule(s string) *Schedule { return &Schedule{prefix: s} }

// Choose implements Chooser.
func (s *Schedule) Choose(p *Proc, point string) bool {
	c := byte('0')
	if i := len(s.taken); i < len(s.prefix) {
		c = s.prefix[i]
	}
	s.taken = append(s.taken, c)
	s.points = append(s.points, p.Name()+": "+point)
	if c == '1' {
		p.Yield()
	}
	return c == '1'
}

// Taken is the schedule string of the choices made so far.
func (s *Schedule) Taken() string { return string(s.taken) }

// Steps describes each choice made: "<process>: <point>" and whether it
// yielded.
func (s *Schedule) Steps() []string {
	out := make([]string, len(s.points))
	for i, pt := range s.points {
		verb := "goes on"
		if s.taken[i] == '1' {
			verb = "yields"
		}
		out[i] = fmt.Sprintf("%d. %s %s", i+1, pt, verb)
	}
	return out
}

// Exploration is what Explore found.
type Exploration struct {
	Schedules int    // distinct schedules run
	Points    int    // scheduling points visited, over all schedules
	Failures  int    // schedules whose run failed
	Shortest  string // the shortest failing schedule (fewest yields, then shortest), replayable with NewSchedule
	Err       error  // its error
	Steps     []string
	Truncated bool // MaxSchedules was reached before the space was exhausted
}

func (x Exploration) String() string {
	s := fmt.Sprintf("%d schedules, %d scheduling points, %d failing", x.Schedules, x.Points, x.Failures)
	if x.Truncated {
		s += " (stopped at the schedule limit)"
	}
	if x.Err != nil {
		s += fmt.Sprintf("\nshortest failing schedule %q:\n  %s\n%v", x.Shortest, strings.Join(x.Steps, "\n  "), x.Err)
	}
	return s
}

// Explore runs run once per distinct schedule: every sequence of go-on /
// yield choices at the scheduling points the model offers, with at most
// bound yields per schedule (iterative context bounding: most concurrency
// bugs need very few preemptions), depth first, in a fixed order, so the
// counts are deterministic. run builds a fresh model, installs the
// Chooser and returns the run's error. Exploration stops after
// maxSchedules (0: no limit).
func Explore(bound, maxSchedules int, run func(c *Schedule) error) Exploration {
	var x Exploration
	prefix := ""
	for {
		s := NewSchedule(prefix)
		err := run(s)
		x.Schedules++
		x.Points += len(s.taken)
		if err != nil {
			x.Failures++
			if x.Err == nil || better(s.Taken(), x.Shortest) {
				x.Shortest, x.Err, x.Steps = strings.TrimRight(s.Taken(), "0"), err, s.Steps()
			}
		}
		next, ok := nextSchedule(s.taken, bound)
		if !ok {
			return x
		}
		if maxSchedules > 0 && x.Schedules >= maxSchedules {
			x.Truncated = true
			return x
		}
		prefix = next
	}
}

func better(a, b string) bool {
	na, nb := strings.Count(a, "1"), strings.Count(b, "1")
	if na != nb {
		return na < nb
	}
	return len(strings.TrimRight(a, "0")) < len(strings.TrimRight(b, "0"))
}

// nextSchedule is the next prefix in depth-first order: flip the last
// go-on choice that can still become a yield within the bound.
func nextSchedule(taken []byte, bound int) (string, bool) {
	ones := make([]int, len(taken)+1)
	for i, c := range taken {
		ones[i+1] = ones[i]
		if c == '1' {
			ones[i+1]++
		}
	}
	for i := len(taken) - 1; i >= 0; i-- {
		if taken[i] == '0' && ones[i]+1 <= bound {
			return string(taken[:i]) + "1", true
		}
	}
	return "", false
}

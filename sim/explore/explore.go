// Package explore is a generic stateless schedule explorer: a depth-first
// search over the choices a model makes through a sim.Chooser (the
// engine's choice among same-time ready processes, installed with
// sim.WithChooser, or any model's own choice among N alternatives),
// re-running the model from the start for every schedule.
//
// The choices are those the model offers, no more: with sim.Engine, the
// order of the processes ready at the same simulated time, after the
// model's declared points (sim.Proc.Point) and, with
// sim.WithMemoryPoints, before every memory operation through
// sim/mem's CPU and every machine memory verb (mem.VerbPoint); with sim.WithPreemption, also descheduling the
// process at such a point. Steps at different simulated times, the
// model's random draws and anything else decided outside a Chooser keep
// their one order in every schedule. The search is bounded (Options.Bound
// deviations from the default per schedule), not exhaustive, unless Bound
// is negative.
package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/sim"
)

// Two reductions keep small instances to seconds:
//
//   - sleep sets (partial-order reduction, Godefroid 1996): after the
//     subtree of alternative a at a choice point has been explored, a is
//     "asleep" in the subtrees of the later alternatives, until a step
//     dependent on a runs (footprints that intersect: sim.Chooser.Ran); a
//     schedule whose only ready steps are asleep repeats one already
//     explored in another order and is pruned;
//   - state hashing, when the model provides a fingerprint of its state
//     (Path.Fingerprint): a choice point whose state was already explored
//     (with no more deviations used and a sleep set no larger) is pruned.
//
// A deviation is a choice other than the default (the first alternative
// not asleep: the engine's own order); Bound caps them per schedule
// (iterative context bounding: most concurrency bugs need very few).

// Options configure Run.
type Options struct {
	Bound        int  // most deviations per schedule; negative: no bound
	MaxSchedules int  // stop after this many runs (0: no limit)
	Reduce       bool // sleep-set partial-order reduction
	// MaxStates stops the search (StateLimit) when it has explored this
	// many choice points (0: no limit): a bound on the memory state
	// hashing takes, for models whose space may be too big.
	MaxStates int
}

// Result is what Run found.
type Result struct {
	Schedules  int    // runs to the end
	Pruned     int    // runs abandoned as redundant (sleep set, state hashing)
	States     int    // choice points explored: nodes of the search tree
	Points     int    // choice points visited over all runs, replays included
	Failures   int    // schedules whose run failed
	Shortest   string // the shortest failing schedule (fewest deviations, then shortest), replayable with NewSchedule
	Err        error  // its error
	Steps      []string
	Truncated  bool  // MaxSchedules was reached before the space was exhausted
	StateLimit bool  // MaxStates was reached before the space was exhausted
	Nondet     error // the model made different choices on a replayed prefix (a nondeterministic model)
}

func (x Result) String() string {
	s := fmt.Sprintf("%d schedules (%d pruned), %d states, %d choice points, %d failing", x.Schedules, x.Pruned, x.States, x.Points, x.Failures)
	if x.Truncated {
		s += " (stopped at the schedule limit)"
	}
	if x.StateLimit {
		s += " (stopped at the state limit)"
	}
	if x.Nondet != nil {
		s += "\n" + x.Nondet.Error()
	}
	if x.Err != nil {
		s += fmt.Sprintf("\nshortest failing schedule %q:\n  %s\n%v", Printable(x.Shortest), strings.Join(x.Steps, "\n  "), x.Err)
	}
	return s
}

// node is a choice point of the search tree.
type node struct {
	alts   []sim.Alt
	chosen int
	first  int        // the default: the first alternative not asleep
	done   []bool     // alternatives explored (or being explored) here
	foot   [][]uint64 // each explored alternative's footprint (sorted), once it ran
	sleep  []sleeper  // asleep on entry
	dev    int        // deviations before this choice
}

// sleeper is a step known to have been explored from an earlier state of
// the current schedule and not disturbed since: its actor and footprint.
type sleeper struct {
	id   int
	foot []uint64
}

// explorer is the search state kept across runs.
type explorer struct {
	opts  Options
	stack []node
	seen  map[uint64][]seenState
	x     Result
}

type seenState struct {
	dev   int
	sleep []int
}

// step is a choice a run made: formatted (stepTexts) only for the
// schedule Run reports.
type step struct {
	label string
	j, n  int
}

func stepTexts(steps []step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = fmt.Sprintf("%d. %s (%d of %d)", i+1, s.label, s.j+1, s.n)
	}
	return out
}

// Path is the sim.Chooser of one run of an exploration: it replays the choices
// leading to the subtree being explored and takes default choices past
// them. Install it where the model makes its choices (sim.WithChooser).
type Path struct {
	x      *explorer
	depth  int
	cur    []sleeper // the sleep set now
	dev    int
	pruned bool
	taken  []byte
	steps  []step
	at     *node // the choice point whose step is running, or nil
	atJ    int
	// Fingerprint, if set by the model, returns a hash of its state at a
	// choice point (everything that decides what can happen next, beyond
	// the steps on offer, which the explorer folds in): a state explored
	// before is not explored again.
	Fingerprint func() uint64
}

const digits = "0123456789abcdefghijklmnopqrstuvwxyz"

// Pick implements sim.Chooser.
func (p *Path) Pick(alts []sim.Alt) int {
	p.at = nil
	if p.pruned {
		return -1
	}
	reduce := p.x.opts.Reduce
	if len(alts) == 1 {
		if reduce && asleep(p.cur, alts[0].ID) {
			return p.prune()
		}
		return 0
	}
	p.x.x.Points++
	var nd *node
	if p.depth < len(p.x.stack) {
		nd = &p.x.stack[p.depth]
		if !sameAlts(nd.alts, alts) && p.x.x.Nondet == nil {
			p.x.x.Nondet = fmt.Errorf("sim: explore: nondeterministic model: choice %d offered %s, earlier %s", p.depth+1, altLabels(alts), altLabels(nd.alts))
			return p.prune()
		}
	} else {
		first := 0
		if reduce {
			for first < len(alts) && asleep(p.cur, alts[first].ID) {
				first++
			}
			if first == len(alts) {
				return p.prune()
			}
		}
		if p.Fingerprint != nil && p.x.visited(p.Fingerprint()^hashAlts(alts), p.dev, p.cur) {
			return p.prune()
		}
		if p.x.opts.MaxStates > 0 && p.x.x.States >= p.x.opts.MaxStates {
			p.x.x.StateLimit = true
			return p.prune()
		}
		done := make([]bool, len(alts))
		done[first] = true
		p.x.stack = append(p.x.stack, node{alts: slices.Clone(alts), chosen: first, first: first, done: done,
			foot: make([][]uint64, len(alts)), sleep: slices.Clone(p.cur), dev: p.dev})
		p.x.x.States++
		nd = &p.x.stack[len(p.x.stack)-1]
	}
	j := nd.chosen
	if j != nd.first {
		p.dev++
	}
	p.at, p.atJ = nd, j
	p.depth++
	p.taken = append(p.taken, digits[min(j, len(digits)-1)])
	p.steps = append(p.steps, step{label: alts[j].Label, j: j, n: len(alts)})
	return j
}

// Ran implements sim.Chooser: the sleep set after the step is the sleeping
// steps (and, after a choice, the alternatives explored there before this
// one) whose footprints are disjoint from the step's.
func (p *Path) Ran(id int, keys []uint64, all bool) {
	nd := p.at
	p.at = nil
	if !p.x.opts.Reduce || p.pruned {
		return
	}
	if all {
		p.cur = p.cur[:0]
		if nd != nil && nd.foot[p.atJ] == nil {
			nd.foot[p.atJ] = []uint64{}
		}
		return
	}
	foot := sortKeys(keys)
	base := p.cur
	if nd != nil {
		if nd.foot[p.atJ] == nil {
			nd.foot[p.atJ] = foot
		}
		base = slices.Clone(nd.sleep)
		for k, d := range nd.done {
			if d && k != p.atJ && nd.foot[k] != nil && !asleep(base, nd.alts[k].ID) {
				base = append(base, sleeper{id: nd.alts[k].ID, foot: nd.foot[k]})
			}
		}
	}
	out := base[:0:0]
	for _, s := range base {
		if s.id != id && disjoint(s.foot, foot) {
			out = append(out, s)
		}
	}
	p.cur = out
}

func sortKeys(keys []uint64) []uint64 {
	k := slices.Clone(keys)
	slices.Sort(k)
	return slices.Compact(k)
}

func disjoint(a, b []uint64) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			return false
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return true
}

func (p *Path) prune() int {
	p.pruned = true
	return -1
}

// Pruned reports whether the run was abandoned as redundant: its result
// says nothing (the model stopped half way).
func (p *Path) Pruned() bool { return p.pruned }

// Taken is the schedule string of the choices made so far (one character
// per choice point with several alternatives: the index picked, base 36).
func (p *Path) Taken() string { return string(p.taken) }

// visited records a state reached with dev deviations and sleep set cur;
// it reports whether an earlier visit already covers this one (with no
// bound on deviations, how many were used does not matter).
func (x *explorer) visited(h uint64, dev int, cur []sleeper) bool {
	if x.opts.Bound < 0 {
		dev = 0
	}
	ids := make([]int, len(cur))
	for i, a := range cur {
		ids[i] = a.id
	}
	slices.Sort(ids)
	for _, s := range x.seen[h] {
		if s.dev <= dev && subset(s.sleep, ids) {
			return true
		}
	}
	x.seen[h] = append(x.seen[h], seenState{dev: dev, sleep: ids})
	return false
}

// hashAlts folds the steps on offer into a state fingerprint (FNV-1a):
// two states with different next steps are different states.
func hashAlts(alts []sim.Alt) uint64 {
	h := uint64(14695981039346656037)
	for _, a := range alts {
		h = (h ^ sim.Key(a.Label)) * 1099511628211
		h = (h ^ sim.Key(a.Object)) * 1099511628211
	}
	return h
}

func subset(a, b []int) bool {
	for _, v := range a {
		if _, ok := slices.BinarySearch(b, v); !ok {
			return false
		}
	}
	return true
}

func asleep(sleep []sleeper, id int) bool {
	for _, a := range sleep {
		if a.id == id {
			return true
		}
	}
	return false
}

func sameAlts(a, b []sim.Alt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Object != b[i].Object {
			return false
		}
	}
	return true
}

func altLabels(alts []sim.Alt) string {
	var b strings.Builder
	for i, a := range alts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Label)
	}
	return "[" + b.String() + "]"
}

// backtrack moves to the next subtree in depth-first order: the deepest
// choice point with an alternative not yet explored, not asleep and
// within the deviation bound.
func (x *explorer) backtrack() bool {
	for len(x.stack) > 0 {
		nd := &x.stack[len(x.stack)-1]
		for k, a := range nd.alts {
			dev := nd.dev
			if k != nd.first {
				dev++
			}
			if nd.done[k] || (x.opts.Bound >= 0 && dev > x.opts.Bound) || (x.opts.Reduce && asleep(nd.sleep, a.ID)) {
				continue
			}
			nd.done[k], nd.chosen = true, k
			return true
		}
		x.stack = x.stack[:len(x.stack)-1]
	}
	return false
}

// Run runs run once per distinct schedule, depth first in a fixed
// order, so the counts are deterministic. run builds a fresh model,
// installs the Path as its sim.Chooser and returns the run's error (a run the
// Path pruned is not counted as failing whatever it returns).
func Run(opts Options, run func(p *Path) error) Result {
	x := &explorer{opts: opts, seen: map[uint64][]seenState{}}
	for {
		p := &Path{x: x}
		err := run(p)
		if p.pruned {
			x.x.Pruned++
		} else {
			x.x.Schedules++
			if err != nil {
				x.x.Failures++
				s := strings.TrimRight(p.Taken(), "0")
				if x.x.Err == nil || better(s, x.x.Shortest) {
					x.x.Shortest, x.x.Err, x.x.Steps = s, err, stepTexts(p.steps)
				}
			}
		}
		if x.x.Nondet != nil || x.x.StateLimit || !x.backtrack() {
			return x.x
		}
		if opts.MaxSchedules > 0 && x.x.Schedules+x.x.Pruned >= opts.MaxSchedules {
			x.x.Truncated = true
			return x.x
		}
	}
}

func better(a, b string) bool {
	na, nb := len(a)-strings.Count(a, "0"), len(b)-strings.Count(b, "0")
	if na != nb {
		return na < nb
	}
	return len(a) < len(b)
}

// Schedule is a sim.Chooser that replays a schedule string (as printed by
// Run: at the k-th choice point with several alternatives it picks the
// k-th character's index; past the end, the first) and records the steps.
type Schedule struct {
	s     string
	k     int
	steps []string
	err   error // the first character naming an alternative the point lacks
}

// MaxScheduleLen is the longest schedule a replay accepts: far more
// choices than a bounded exploration's runs make (a schedule longer
// than the run's choice points is refused anyway, by Err).
const MaxScheduleLen = 10000

// NewSchedule returns a sim.Chooser replaying s.
func NewSchedule(s string) *Schedule { return &Schedule{s: s} }

// Printable is schedule s as printed for a user to replay: the empty
// schedule (the engine's own order at every choice point) is "0", the
// first alternative at the first point and by default after it, which
// NewSchedule replays alike; an empty string would be no schedule at all
// on a command line or in a scenario.
func Printable(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// Pick implements sim.Chooser.
func (s *Schedule) Pick(alts []sim.Alt) int {
	if len(alts) == 1 {
		return 0
	}
	j := 0
	if s.k < len(s.s) {
		j = max(strings.IndexByte(digits, s.s[s.k]), 0)
	}
	s.k++
	if j >= len(alts) {
		if s.err == nil {
			s.err = fmt.Errorf("schedule choice %d is %q (alternative %d), but that choice point offers %d alternatives (%q to %q): %s",
				s.k, s.s[s.k-1], j+1, len(alts), digits[0], digits[min(len(alts), len(digits))-1], altLabels(alts))
		}
		j = 0
	}
	s.steps = append(s.steps, fmt.Sprintf("%d. %s (%d of %d)", len(s.steps)+1, alts[j].Label, j+1, len(alts)))
	return j
}

// Ran implements sim.Chooser (a replay needs no footprints).
func (s *Schedule) Ran(int, []uint64, bool) {}

// Err reports a schedule that does not fit the run it replayed: a
// choice beyond its point's alternatives (with the choice and its
// bound), or more choices than the run had choice points.
func (s *Schedule) Err() error {
	if s.err != nil {
		return s.err
	}
	if s.k < len(s.s) {
		return fmt.Errorf("schedule has %d choices, but the run made only %d choices (among several alternatives); drop the last %d", len(s.s), s.k, len(s.s)-s.k)
	}
	return nil
}

// Steps describes each choice made.
func (s *Schedule) Steps() []string { return s.steps }

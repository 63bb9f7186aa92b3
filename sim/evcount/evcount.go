// Package evcount counts a run's events by what each ran: the engine's
// sim.EventCounter.
package evcount

import (
	"cmp"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/sim"
)

// EventCounts counts a run's events by what each ran: a callback by its
// function, a process's resumption by why it resumed, and the Sleeps and
// steps that moved time forward in place (Sleep's fast path, a
// SleepSteps step with nothing due before its end). It answers "where do
// this run's events go" without a profiler: the counts are the engine's
// own, so they sum to sim.Engine.Events. Enable it with Enable.
type Counts struct {
	fns     map[uintptr]uint64 // callbacks, by the function's entry address
	slept   uint64             // a process resumed when its Sleep ended
	woken   uint64             // a process resumed by a Wake (or its start)
	inPlace uint64             // time moved forward in place
}

// Row is one line of Counts.Rows: what ran and how many times.
type Row struct {
	What string
	N    uint64
}

// What Counts.Rows calls the events that are not callbacks.
const (
	Slept   = "(a process resumed: its Sleep ended)"
	Woken   = "(a process resumed: woken, or started)"
	InPlace = "(time moved forward in place: a Sleep or step with nothing due before its end)"
)

// Enable makes e count its events by what they run from now on and
// returns the counts, which fill as the engine runs (read them after Run;
// e's counts if it already counts). Counting costs a map update per
// callback; an engine that does not count pays one nil check per event.
func Enable(e *sim.Engine) *Counts {
	if c, ok := e.Hooks().EventCounter.(*Counts); ok {
		return c
	}
	c := &Counts{fns: map[uintptr]uint64{}}
	e.Set(sim.WithEventCounter(c))
	return c
}

// Event implements sim.EventCounter.
func (c *Counts) Event(fn func(), p *sim.Proc, slept bool) {
	switch {
	case fn != nil:
		c.fns[reflect.ValueOf(fn).Pointer()]++
	case p == nil:
		c.inPlace++
	case slept:
		c.slept++
	default:
		c.woken++
	}
}

// Add adds o's counts to c (the engines of a sweep's points into one).
func (c *Counts) Add(o *Counts) {
	if c.fns == nil {
		c.fns = map[uintptr]uint64{}
	}
	for pc, n := range o.fns {
		c.fns[pc] += n
	}
	c.slept += o.slept
	c.woken += o.woken
	c.inPlace += o.inPlace
}

// Total is the number of events counted.
func (c *Counts) Total() uint64 {
	n := c.slept + c.woken + c.inPlace
	for _, k := range c.fns {
		n += k
	}
	return n
}

// Rows lists the counts, most frequent first (ties by name), leaving out
// what never ran. A callback is named by its function as the Go runtime
// names it, without the module path ("sim.(*Proc).step"); a
// method value's "-fm" suffix is dropped.
func (c *Counts) Rows() []Row {
	by := map[string]uint64{}
	for pc, n := range c.fns {
		by[funcName(pc)] += n
	}
	by[Slept] += c.slept
	by[Woken] += c.woken
	by[InPlace] += c.inPlace
	rows := make([]Row, 0, len(by))
	for what, n := range by {
		if n > 0 {
			rows = append(rows, Row{What: what, N: n})
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if a.N != b.N {
			return cmp.Compare(b.N, a.N)
		}
		return strings.Compare(a.What, b.What)
	})
	return rows
}

// funcName is the name of the function whose entry is pc, short.
func funcName(pc uintptr) string {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return "(unknown callback)"
	}
	name := strings.TrimSuffix(f.Name(), "-fm")
	module := strings.TrimSuffix(reflect.TypeFor[Counts]().PkgPath(), "sim/evcount") // "github.com/msgsim/msgsim/"
	return strings.TrimPrefix(name, module)
}

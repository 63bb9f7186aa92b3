package sim

import (
	"cmp"
	"reflect"
	"runtime"
	"slices"
	"strings"
)

// EventCounts counts a run's events by what each ran: a callback by its
// function, a process's resumption by why it resumed, and the Sleeps and
// steps that moved time forward in place (Sleep's fast path, a
// SleepSteps step with nothing due before its end). It answers "where do
// this run's events go" without a profiler: the counts are the engine's
// own, so they sum to Engine.Events. Enable it with Engine.CountEvents.
type EventCounts struct {
	fns     map[uintptr]uint64 // callbacks, by the function's entry address
	slept   uint64             // a process resumed when its Sleep ended
	woken   uint64             // a process resumed by a Wake (or its start)
	inPlace uint64             // time moved forward in place (Engine.advance)
}

// EventCount is one line of EventCounts.Rows: what ran and how many times.
type EventCount struct {
	What string
	N    uint64
}

// What EventCounts.Rows calls the events that are not callbacks.
const (
	EventsSlept   = "(a process resumed: its Sleep ended)"
	EventsWoken   = "(a process resumed: woken, or started)"
	EventsInPlace = "(time moved forward in place: a Sleep or step with nothing due before its end)"
)

// CountEvents makes the engine count its events by what they run from now
// on and returns the counts, which fill as the engine runs (read them
// after Run). Counting costs a map update per callback; an engine that
// does not count pays one nil check per event.
func (e *Engine) CountEvents() *EventCounts {
	if e.evc == nil {
		e.evc = &EventCounts{fns: map[uintptr]uint64{}}
	}
	return e.evc
}

// count notes an event about to run a (its process not yet resumed).
func (c *EventCounts) count(a action) {
	switch {
	case a.proc == nil:
		c.fns[reflect.ValueOf(a.fn).Pointer()]++
	case a.proc.state == stateSleeping:
		c.slept++
	default:
		c.woken++
	}
}

// Add adds o's counts to c (the engines of a sweep's points into one).
func (c *EventCounts) Add(o *EventCounts) {
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
func (c *EventCounts) Total() uint64 {
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
func (c *EventCounts) Rows() []EventCount {
	by := map[string]uint64{}
	for pc, n := range c.fns {
		by[funcName(pc)] += n
	}
	by[EventsSlept] += c.slept
	by[EventsWoken] += c.woken
	by[EventsInPlace] += c.inPlace
	rows := make([]EventCount, 0, len(by))
	for what, n := range by {
		if n > 0 {
			rows = append(rows, EventCount{What: what, N: n})
		}
	}
	slices.SortFunc(rows, func(a, b EventCount) int {
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
	module := strings.TrimSuffix(reflect.TypeFor[EventCounts]().PkgPath(), "sim") // "github.com/msgsim/msgsim/"
	return strings.TrimPrefix(name, module)
}

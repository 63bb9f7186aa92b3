// Package trace records process states over simulated time, and instant
// marks and arrows from models, for timelines: a Trace is the sim.Tracer
// an engine reports to (Enable), written as Chrome Trace Event JSON.
package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/msgsim/msgsim/sim"
)

// Trace records process states over simulated time and instant marks from
// models, for timelines.
type Trace struct {
	spans []span
	open  map[int]int // process id -> index of its open span
	names []string    // process names by id
	marks []mark
	flows []flow
}

type span struct {
	proc       int
	state      string
	start, end sim.Time
}

type mark struct {
	proc int
	name string
	at   sim.Time
}

// flow is an arrow from one process's timeline at one time to another's
// (a Chrome trace flow: a start event "s" and a finish event "f").
type flow struct {
	name       string
	from, to   int // process ids
	start, end sim.Time
}

// Enable makes e record a trace and returns it (e's trace if it already
// records one).
func Enable(e *sim.Engine) *Trace {
	if t := Of(e); t != nil {
		return t
	}
	t := &Trace{open: map[int]int{}}
	e.Set(sim.WithTracer(t))
	return t
}

// Of is the trace e records, or nil.
func Of(e *sim.Engine) *Trace {
	t, _ := e.Hooks().Tracer.(*Trace)
	return t
}

// Mark implements sim.Tracer.
func (t *Trace) Mark(now sim.Time, p *sim.Proc, name string) {
	t.marks = append(t.marks, mark{proc: p.ID(), name: name, at: now})
}

// Flow implements sim.Tracer.
func (t *Trace) Flow(from *sim.Proc, at sim.Time, p *sim.Proc, now sim.Time, name string) {
	t.flows = append(t.flows, flow{name: name, from: from.ID(), to: p.ID(), start: at, end: now})
}

// Flows is the number of recorded flows (each written as a pair of flow
// events).
func (t *Trace) Flows() int { return len(t.flows) }

// State implements sim.Tracer.
func (t *Trace) State(now sim.Time, p *sim.Proc, state string) {
	id := p.ID()
	for len(t.names) <= id {
		t.names = append(t.names, "")
	}
	t.names[id] = p.Name()
	if i, ok := t.open[id]; ok {
		if t.spans[i].state == state {
			return
		}
		t.spans[i].end = now
		delete(t.open, id)
	}
	if state == "" {
		return
	}
	t.open[id] = len(t.spans)
	t.spans = append(t.spans, span{proc: id, state: state, start: now, end: -1})
}

// Len is the number of recorded spans and marks (zero-length ones
// included; see Counts for what WriteChrome writes).
func (t *Trace) Len() int { return len(t.spans) + len(t.marks) }

// Counts is what WriteChrome(w, end) writes: spans with a duration,
// spans never ended (processes still waiting or spinning when the run
// stopped: a deadlock or livelock) and instant marks.
func (t *Trace) Counts(end sim.Time) (spans, unended, marks int) {
	for _, s := range t.spans {
		switch t.kind(s, end) {
		case spanComplete:
			spans++
		case spanUnended:
			unended++
		}
	}
	return spans, unended, len(t.marks)
}

// Kinds of recorded spans, as written.
const (
	spanSkipped  = iota // zero length: nothing to draw
	spanComplete        // start and duration
	spanUnended         // a wait or spin the run ended in: begun, never ended
)

// kind says how span s is written in a trace that ends at end. A process
// left waiting or spinning when the run stopped (deadlock, livelock) never
// stops doing so: its span is written as begun and not ended, which
// Perfetto draws to the end of the trace and marks "did not end", even
// when it began at the very end.
func (t *Trace) kind(s span, end sim.Time) int {
	if s.end < 0 && (strings.HasPrefix(s.state, "spin: ") || strings.HasPrefix(s.state, "wait: ")) {
		return spanUnended
	}
	e := s.end
	if e < 0 {
		e = end
	}
	if e == s.start {
		return spanSkipped // a process runs in zero simulated time
	}
	return spanComplete
}

// WriteChrome writes the trace as Chrome Trace Event JSON (open it in
// Perfetto or chrome://tracing): a thread name per process, a complete
// event ("X") per span with a duration, a begin event ("B") per span never
// ended (see kind), an instant event ("i") per mark, and per flow a start
// event ("s") on the source's timeline and a finish event ("f", bound to
// the enclosing slice: "bp":"e") on the destination's, with the same
// "id" (the flow's number, from 1, in recording order). Times are in
// microseconds; other spans still open are closed at end; spans of zero
// length are left out. Counts says how many of each are written. The
// output depends only on the run: byte-identical for the same scenario and
// seed.
func (t *Trace) WriteChrome(w io.Writer, end sim.Time) error {
	bw := bufio.NewWriter(w)
	us := func(x sim.Time) string { return strconv.FormatFloat(x.Micros(), 'f', 6, 64) }
	fmt.Fprint(bw, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
	first := true
	sep := func() {
		if !first {
			fmt.Fprint(bw, ",\n")
		}
		first = false
	}
	for id, name := range t.names {
		sep()
		fmt.Fprintf(bw, `{"ph":"M","pid":1,"tid":%d,"name":"thread_name","args":{"name":%s}}`, id, strconv.Quote(name))
	}
	for _, s := range t.spans {
		switch t.kind(s, end) {
		case spanComplete:
			e := s.end
			if e < 0 {
				e = end
			}
			sep()
			fmt.Fprintf(bw, `{"ph":"X","pid":1,"tid":%d,"name":%s,"ts":%s,"dur":%s}`, s.proc, strconv.Quote(s.state), us(s.start), us(e-s.start))
		case spanUnended:
			sep()
			fmt.Fprintf(bw, `{"ph":"B","pid":1,"tid":%d,"name":%s,"ts":%s}`, s.proc, strconv.Quote(s.state), us(s.start))
		}
	}
	for _, m := range t.marks {
		sep()
		fmt.Fprintf(bw, `{"ph":"i","s":"t","pid":1,"tid":%d,"name":%s,"ts":%s}`, m.proc, strconv.Quote(m.name), us(m.at))
	}
	for i, f := range t.flows {
		sep()
		fmt.Fprintf(bw, `{"ph":"s","cat":"flow","id":%d,"pid":1,"tid":%d,"name":%s,"ts":%s},`+"\n", i+1, f.from, strconv.Quote(f.name), us(f.start))
		fmt.Fprintf(bw, `{"ph":"f","bp":"e","cat":"flow","id":%d,"pid":1,"tid":%d,"name":%s,"ts":%s}`, i+1, f.to, strconv.Quote(f.name), us(f.end))
	}
	fmt.Fprint(bw, "\n]}\n")
	return bw.Flush()
}

package sim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Trace records process states over simulated time and instant marks from
// models, for timelines. A nil *Trace records nothing and costs one branch.
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
	start, end Time
}

type mark struct {
	proc int
	name string
	at   Time
}

// flow is an arrow from one process's timeline at one time to another's
// (a Chrome trace flow: a start event "s" and a finish event "f").
type flow struct {
	name       string
	from, to   int // process ids
	start, end Time
}

// EnableTrace starts recording a trace and returns it.
func (e *Engine) EnableTrace() *Trace {
	if e.trace == nil {
		e.trace = &Trace{open: map[int]int{}}
	}
	return e.trace
}

// Trace is the engine's trace, or nil when tracing is off.
func (e *Engine) Trace() *Trace { return e.trace }

// Mark records an instant event (a packet sent, a lock taken) on p's timeline.
func (e *Engine) Mark(p *Proc, name string) {
	if e.trace == nil || p == nil {
		return
	}
	e.trace.marks = append(e.trace.marks, mark{proc: int(p.id), name: name, at: e.now})
}

// Flow records an arrow named name from from's timeline at time at (an
// earlier instant, such as a store) to p's timeline now (such as the load
// that read the store's value): a flow in the trace, which Perfetto draws
// between the slices or marks at its two ends. Record a Mark at each end
// so that the arrow has something to bind to.
func (e *Engine) Flow(from *Proc, at Time, p *Proc, name string) {
	if e.trace == nil || p == nil || from == nil {
		return
	}
	e.trace.flows = append(e.trace.flows, flow{name: name, from: int(from.id), to: int(p.id), start: at, end: e.now})
}

// Flows is the number of recorded flows (each written as a pair of flow
// events).
func (t *Trace) Flows() int { return len(t.flows) }

func (t *Trace) state(now Time, p *Proc, state string) {
	if t == nil {
		return
	}
	id := int(p.id)
	for len(t.names) <= id {
		t.names = append(t.names, "")
	}
	t.names[id] = p.name
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
func (t *Trace) Counts(end Time) (spans, unended, marks int) {
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
func (t *Trace) kind(s span, end Time) int {
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
func (t *Trace) WriteChrome(w io.Writer, end Time) error {
	bw := bufio.NewWriter(w)
	us := func(x Time) string { return strconv.FormatFloat(x.Micros(), 'f', 6, 64) }
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

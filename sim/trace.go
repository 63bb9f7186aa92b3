package sim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Trace records process states over simulated time and instant marks from
// models, for timelines. A nil *Trace records nothing and costs one branch.
type Trace struct {
	spans []span
	open  map[int]int // process id -> index of its open span
	names []string    // process names by id
	marks []mark
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
	e.trace.marks = append(e.trace.marks, mark{proc: p.id, name: name, at: e.now})
}

func (t *Trace) state(now Time, p *Proc, state string) {
	if t == nil {
		return
	}
	for len(t.names) <= p.id {
		t.names = append(t.names, "")
	}
	t.names[p.id] = p.name
	if i, ok := t.open[p.id]; ok {
		if t.spans[i].state == state {
			return
		}
		t.spans[i].end = now
		delete(t.open, p.id)
	}
	if state == "" {
		return
	}
	t.open[p.id] = len(t.spans)
	t.spans = append(t.spans, span{proc: p.id, state: state, start: now, end: -1})
}

// Len is the number of recorded spans and marks.
func (t *Trace) Len() int { return len(t.spans) + len(t.marks) }

// WriteChrome writes the trace as Chrome Trace Event JSON (open it in
// Perfetto or chrome://tracing). Times are in microseconds; spans still open
// are closed at end; spans of zero length are left out. The output depends only on the run: byte-identical for
// the same scenario and seed.
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
		e := s.end
		if e < 0 {
			e = end
		}
		if e == s.start {
			continue // nothing to draw: a process runs in zero simulated time
		}
		sep()
		fmt.Fprintf(bw, `{"ph":"X","pid":1,"tid":%d,"name":%s,"ts":%s,"dur":%s}`, s.proc, strconv.Quote(s.state), us(s.start), us(e-s.start))
	}
	for _, m := range t.marks {
		sep()
		fmt.Fprintf(bw, `{"ph":"i","s":"t","pid":1,"tid":%d,"name":%s,"ts":%s}`, m.proc, strconv.Quote(m.name), us(m.at))
	}
	fmt.Fprint(bw, "\n]}\n")
	return bw.Flush()
}

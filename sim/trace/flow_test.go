package trace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestTraceFlows: every recorded flow is written as a start event ("s")
// on the source's timeline and a finish event ("f", bound to the
// enclosing slice) on the destination's, with matching ids, the start not
// after the finish; a trace without flows has none.
func TestTraceFlows(t *testing.T) {
	e := sim.NewEngine(1)
	tr := Enable(e)
	var writer *sim.Proc
	var stored sim.Time
	writer = e.Spawn("P0", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		stored = p.Now()
		p.Mark("x=1")
	})
	e.Spawn("P1", func(p *sim.Proc) {
		for range 2 {
			p.Sleep(2 * sim.Microsecond)
			p.Mark("r0=x read 1")
			p.Flow(writer, stored, "rf x")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if tr.Flows() != 2 {
		t.Fatalf("Flows() = %d, want 2", tr.Flows())
	}
	var b bytes.Buffer
	if err := tr.WriteChrome(&b, e.Now()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string  `json:"ph"`
			ID   int     `json:"id"`
			Tid  int     `json:"tid"`
			Ts   float64 `json:"ts"`
			Bp   string  `json:"bp"`
			Name string  `json:"name"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, b.String())
	}
	type end struct {
		tid int
		ts  float64
	}
	starts, finishes := map[int]end{}, map[int]end{}
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "s":
			if _, dup := starts[ev.ID]; dup {
				t.Errorf("flow id %d started twice", ev.ID)
			}
			starts[ev.ID] = end{ev.Tid, ev.Ts}
		case "f":
			if ev.Bp != "e" {
				t.Errorf("flow %d finish has bind point %q, want \"e\"", ev.ID, ev.Bp)
			}
			finishes[ev.ID] = end{ev.Tid, ev.Ts}
		}
	}
	if len(starts) != 2 || len(finishes) != 2 {
		t.Fatalf("%d starts, %d finishes, want 2 each:\n%s", len(starts), len(finishes), b.String())
	}
	for id, s := range starts {
		f, ok := finishes[id]
		if !ok {
			t.Errorf("flow %d has no finish", id)
			continue
		}
		if s.tid != writer.ID() || f.tid == writer.ID() || s.ts > f.ts || s.ts != 1 {
			t.Errorf("flow %d: start %+v, finish %+v; want from P0 at 1 us to P1 later", id, s, f)
		}
	}

	e2 := sim.NewEngine(1)
	Enable(e2)
	e2.Spawn("P0", func(p *sim.Proc) { p.Mark("alone") })
	if err := e2.Run(); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := Of(e2).WriteChrome(&b, e2.Now()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`"ph":"s"`)) || bytes.Contains(b.Bytes(), []byte(`"ph":"f"`)) {
		t.Errorf("a trace without flows has flow events:\n%s", b.String())
	}
}

package evcount

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// evTicker gives TestCountEvents a method value to schedule.
type evTicker struct{ n int }

func (x *evTicker) fire() { x.n++ }

// TestCountEvents: the counts of an engine's events by what they ran sum
// to its event count, name each callback by its function (a method value
// by its method, without the module path or "-fm") and tell process
// resumptions and in-place moves of time apart.
func TestCountEvents(t *testing.T) {
	e := sim.NewEngine(1)
	c := Enable(e)
	x := &evTicker{}
	var b *sim.Proc
	e.At(15, func() { b.Wake() })
	e.At(20, x.fire)
	e.At(25, x.fire)
	e.Spawn("a", func(p *sim.Proc) {
		for range 3 {
			p.Sleep(10)
		}
		p.SleepSteps(sim.Steps{N: 4, D: 1}) // nothing else due before 115: in place
	})
	b = e.Spawn("b", func(p *sim.Proc) {
		p.Block("the tick at 15")
		p.Sleep(100)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if c.Total() != e.Events() {
		t.Fatalf("counted %d events, the engine ran %d", c.Total(), e.Events())
	}
	got := map[string]uint64{}
	var sum uint64
	for _, r := range c.Rows() {
		got[r.What] = r.N
		sum += r.N
	}
	if sum != e.Events() {
		t.Fatalf("rows sum to %d, the engine ran %d: %v", sum, e.Events(), c.Rows())
	}
	for _, want := range []struct {
		what string
		min  uint64
	}{
		{"sim/evcount.(*evTicker).fire", 2},
		{Woken, 3}, // a's and b's starts, b's wake
		{InPlace, 3},
	} {
		if got[want.what] < want.min {
			t.Errorf("%q: %d events, want at least %d (rows %v)", want.what, got[want.what], want.min, c.Rows())
		}
	}
	closures := 0
	for what, n := range got {
		if strings.HasPrefix(what, "sim/evcount.TestCountEvents.func") {
			closures += int(n)
		}
	}
	if closures != 1 {
		t.Errorf("the wake-up callback ran %d times, want 1 (rows %v)", closures, c.Rows())
	}
	if rows := c.Rows(); rows[0].N < rows[len(rows)-1].N {
		t.Errorf("rows not most frequent first: %v", rows)
	}
	var all Counts
	all.Add(c)
	all.Add(c)
	if all.Total() != 2*c.Total() {
		t.Errorf("Add: %d events, want %d", all.Total(), 2*c.Total())
	}
}

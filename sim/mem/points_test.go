package mem

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/explore"
)

// TestMemoryPointsLostUpdate: two threads of one process increment a
// shared word with a load and a store, the second after the first has
// finished. The engine's order never loses an update; with every memory
// operation a scheduling point and one preemption the explorer finds the
// schedule that does (the first thread descheduled before its store),
// which replays; with memory points off only the start order is a
// choice, and no schedule loses an update.
func TestMemoryPointsLostUpdate(t *testing.T) {
	cfg, err := Builtin("sc")
	if err != nil {
		t.Fatal(err)
	}
	run := func(c sim.Chooser, points bool) error {
		e := sim.NewEngine(1)
		m := NewMemory("node0", 1<<16)
		seg, _ := m.Alloc("counter", 64, 64)
		cpu, _ := NewCPU(e, "cpu", m, cfg)
		e.Set(sim.WithChooser(c))
		e.Set(sim.WithPreemption(true))
		e.Set(sim.WithMemoryPoints(points))
		incr := func(p *sim.Proc) { cpu.Store(p, seg.Base, 8, cpu.Load(p, seg.Base, 8)+1) }
		t0 := e.Spawn("t0", incr)
		t1 := e.Spawn("t1", func(p *sim.Proc) { p.Sleep(sim.Microsecond); incr(p) })
		t1.ShareState(t0)
		if err := e.Run(); err != nil {
			return err
		}
		if v := m.Load64(seg.Base); v != 2 {
			return &lostUpdate{v}
		}
		return nil
	}
	x := explore.Run(explore.Options{Bound: 1, Reduce: true}, func(p *explore.Path) error { return run(p, true) })
	if x.Failures == 0 || x.Shortest == "" {
		t.Fatalf("memory points: %v", x)
	}
	if err := run(explore.NewSchedule(x.Shortest), true); err == nil || err.Error() != x.Err.Error() {
		t.Errorf("replaying %q: %v, want %v", x.Shortest, err, x.Err)
	}
	t.Logf("memory points: %v", x)
	if y := explore.Run(explore.Options{Bound: 1, Reduce: true}, func(p *explore.Path) error { return run(p, false) }); y.Failures != 0 {
		t.Errorf("no memory points: %v", y)
	}
}

type lostUpdate struct{ v uint64 }

func (l *lostUpdate) Error() string { return fmt.Sprintf("lost update: counter %d, want 2", l.v) }

// TestVerbPoint: a machine's memory verb is a scheduling point named by
// the verb and the target memory's segment while memory points are on,
// and nothing otherwise.
func TestVerbPoint(t *testing.T) {
	for _, on := range []bool{false, true} {
		e := sim.NewEngine(1)
		m := NewMemory("node1", 1<<16)
		seg, _ := m.Alloc("flags", 64, 64)
		c := explore.NewSchedule("")
		e.Set(sim.WithChooser(c))
		e.Set(sim.WithMemoryPoints(on))
		for _, name := range []string{"a", "b"} {
			e.Spawn(name, func(p *sim.Proc) {
				p.Sleep(sim.Nanosecond)
				VerbPoint(p, m, "puts to", seg.Addr(8), 8)
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(c.Steps(), "\n"), "a: puts to 8 bytes at node1 [flags]+8")
		if got != on {
			t.Errorf("memory points %v: steps %q", on, c.Steps())
		}
	}
}

package sim

import "testing"

// TestCorePreemption: handler work on a core delays the application's
// computing by the handler's time when the core preempts, not when it
// shares, and never while the application is blocked.
func TestCorePreemption(t *testing.T) {
	us := Microsecond
	type run struct {
		preempt  bool
		app      func(p *Proc, wake func(Time)) // the application
		handlers []Time                         // each handler works 5 us from this time
		wantApp  Time                           // when the application finishes
		wantHand []Time                         // when each handler finishes
		delay    Time                           // the core's AppDelay
	}
	compute := func(p *Proc, _ func(Time)) { p.Sleep(100 * us) }
	smallSteps := func(p *Proc, _ func(Time)) {
		for range 100 {
			p.Sleep(us) // mostly the Sleep fast path
		}
	}
	blockedThenCompute := func(p *Proc, wake func(Time)) {
		wake(50 * us)
		p.Block("waiting for a message")
		p.Sleep(10 * us)
	}
	steps := func(p *Proc, _ func(Time)) { p.SleepSteps(Steps{N: 100, D: us}) }
	wokenDuringHandler := func(p *Proc, wake func(Time)) {
		wake(12 * us)
		p.Block("waiting for a message")
	}
	for _, tc := range []struct {
		name string
		run
	}{
		{"preempt: compute delayed", run{true, compute, []Time{10 * us}, 105 * us, []Time{15 * us}, 5 * us}},
		{"share: compute not delayed", run{false, compute, []Time{10 * us}, 100 * us, []Time{15 * us}, 0}},
		{"preempt: handlers serialize, both delay", run{true, compute, []Time{10 * us, 10 * us}, 110 * us, []Time{15 * us, 20 * us}, 10 * us}},
		{"share: handlers serialize beside the app", run{false, compute, []Time{10 * us, 10 * us}, 100 * us, []Time{15 * us, 20 * us}, 0}},
		{"preempt: fast-path steps delayed", run{true, smallSteps, []Time{10 * us}, 105 * us, []Time{15 * us}, 5 * us}},
		{"preempt: SleepSteps delayed as its steps", run{true, steps, []Time{10 * us}, 105 * us, []Time{15 * us}, 5 * us}},
		{"preempt: blocked app not delayed", run{true, blockedThenCompute, []Time{10 * us}, 60 * us, []Time{15 * us}, 0}},
		{"preempt: app woken during handler work waits for it", run{true, wokenDuringHandler, []Time{10 * us}, 15 * us, []Time{15 * us}, 3 * us}},
		{"share: app woken during handler work runs", run{false, wokenDuringHandler, []Time{10 * us}, 12 * us, []Time{15 * us}, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(1)
			core := e.NewCore("node0", tc.preempt)
			var appDone Time
			app := e.Spawn("app", func(p *Proc) {
				tc.app(p, func(at Time) {
					e.At(at, func() { p.Wake() })
				})
				appDone = p.Now()
			})
			core.BindApp(app)
			handDone := make([]Time, len(tc.handlers))
			for i, at := range tc.handlers {
				h := e.SpawnDaemon("handler", func(p *Proc) {
					p.Block("waiting for an interrupt")
					p.Sleep(5 * us)
					handDone[i] = p.Now()
				})
				core.BindHandler(h)
				e.At(at, func() { h.Wake() })
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if appDone != tc.wantApp {
				t.Errorf("application finished at %v, want %v", appDone, tc.wantApp)
			}
			for i, want := range tc.wantHand {
				if handDone[i] != want {
					t.Errorf("handler %d finished at %v, want %v", i, handDone[i], want)
				}
			}
			if got := core.Stats().AppDelay; got != tc.delay {
				t.Errorf("application delay %v, want %v", got, tc.delay)
			}
		})
	}
}

// blockFor is Block with a time-out: p resumes when another calls Wake or
// after d, whichever comes first.
func blockFor(p *Proc, d Time, reason string) {
	h := p.Engine().After(d, func() { p.Wake() })
	p.Block(reason)
	p.Engine().Cancel(h)
}

// TestBlockFor: a block with a timed wake resumes at the time-out or at an
// earlier Wake, which drops the timed one.
func TestBlockFor(t *testing.T) {
	e := NewEngine(1)
	var a, b Time
	e.Spawn("timeout", func(p *Proc) { blockFor(p, 7, "nothing"); a = p.Now() })
	q := e.Spawn("woken", func(p *Proc) { blockFor(p, 100, "wake"); b = p.Now() })
	e.At(3, func() { q.Wake() })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if a != 7 || b != 3 {
		t.Fatalf("resumed at %v and %v, want 7ps and 3ps", a, b)
	}
	if e.Now() != 7 {
		t.Fatalf("the timed wake was not dropped: run ended at %v", e.Now())
	}
}

// TestWakeAt: a process woken for a later time resumes then, and a Wake in
// between does nothing.
func TestWakeAt(t *testing.T) {
	e := NewEngine(1)
	var at Time
	p := e.Spawn("spinner", func(p *Proc) { p.BlockSpinning(Reason("flag")); at = p.Now() })
	e.At(10, func() { p.WakeAt(25) })
	e.At(15, func() {
		if p.Wake() {
			t.Error("Wake of a process already woken for later reported true")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if at != 25 {
		t.Fatalf("resumed at %v, want 25ps", at)
	}
}

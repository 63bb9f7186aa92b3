package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEqualTimeOrder(t *testing.T) {
	e := NewEngine(1)
	var got []int
	for i := 0; i < 5; i++ {
		e.After(10, func() { got = append(got, i) })
	}
	e.After(5, func() { got = append(got, -1) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := []int{-1, 0, 1, 2, 3, 4}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestProcessesInterleaveInScheduleOrder(t *testing.T) {
	e := NewEngine(1)
	var log []string
	for _, name := range []string{"a", "b", "c"} {
		e.Spawn(name, func(p *Proc) {
			for i := 0; i < 2; i++ {
				log = append(log, fmt.Sprintf("%s%d@%d", name, i, p.Now()))
				p.Sleep(10)
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := "[a0@0 b0@0 c0@0 a1@10 b1@10 c1@10]"
	if fmt.Sprint(log) != want {
		t.Fatalf("got %v, want %s", log, want)
	}
}

func TestCancel(t *testing.T) {
	e := NewEngine(1)
	fired := 0
	h := e.After(10, func() { fired++ })
	e.After(5, func() {
		if !e.Cancel(h) {
			t.Error("cancel of a pending event reported false")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if fired != 0 {
		t.Fatal("cancelled event fired")
	}
	if e.Cancel(h) {
		t.Fatal("second cancel reported true")
	}
}

func TestDeadlockNamesBlockedProcesses(t *testing.T) {
	e := NewEngine(1)
	var q WaitQueue
	e.Spawn("rank0", func(p *Proc) { p.Sleep(Microsecond); q.Wait(p, "recv from rank 1") })
	e.Spawn("rank1", func(p *Proc) { q.Wait(p, "recv from rank 0") })
	e.Spawn("done", func(p *Proc) {})
	e.SpawnDaemon("server", func(p *Proc) { p.Block("requests") })
	err := e.Run()
	var d *DeadlockError
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want deadlock", err)
	}
	if len(d.Waiting) != 2 || d.Waiting[0].Proc != "rank0" || d.Waiting[1].Proc != "rank1" {
		t.Fatalf("waiting %+v", d.Waiting)
	}
	for _, s := range []string{"rank0 blocked since 1us: recv from rank 1", "rank1 blocked since 0ps: recv from rank 0"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("report %q lacks %q", err, s)
		}
	}
}

func TestLivelockWhenSpinning(t *testing.T) {
	e := NewEngine(1)
	e.Spawn("reader", func(p *Proc) { p.BlockSpinning(Reason("flag at 0x40 (stale cached line)")) })
	e.Spawn("waiter", func(p *Proc) { p.Block("reply") })
	err := e.Run()
	if !IsLivelock(err) || IsDeadlock(err) {
		t.Fatalf("got %v, want livelock", err)
	}
	if !strings.Contains(err.Error(), "reader spinning") || !strings.Contains(err.Error(), "waiter blocked") {
		t.Fatalf("report %q does not name both", err)
	}
}

// lazyWhy counts how often its reason is formatted.
type lazyWhy struct{ n *int }

func (w lazyWhy) String() string { *w.n++; return "flag at 0x40 (stale cached line)" }

// A reason given as a fmt.Stringer reads in the report as the string does,
// and is formatted only when the report is made.
func TestBlockSpinningLazyReason(t *testing.T) {
	var formatted int
	run := func(lazy bool) string {
		formatted = 0
		e := NewEngine(1)
		e.Spawn("reader", func(p *Proc) {
			if lazy {
				p.BlockSpinning(lazyWhy{&formatted})
			} else {
				p.BlockSpinning(Reason("flag at 0x40 (stale cached line)"))
			}
		})
		e.Spawn("woken", func(p *Proc) { p.BlockSpinning(lazyWhy{&formatted}) })
		e.Spawn("waker", func(p *Proc) {
			if formatted != 0 {
				t.Errorf("reason formatted %d times before any report", formatted)
			}
			e.procs[1].Wake()
		})
		err := e.Run()
		if !IsLivelock(err) {
			t.Fatalf("got %v, want livelock", err)
		}
		return err.Error()
	}
	if lazy, eager := run(true), run(false); lazy != eager {
		t.Errorf("lazy reason's report\n%s\nwant\n%s", lazy, eager)
	}
}

func TestLimits(t *testing.T) {
	loop := func(e *Engine) {
		e.Spawn("loop", func(p *Proc) {
			for {
				p.Sleep(Nanosecond)
			}
		})
	}
	cases := []struct {
		name   string
		limits Limits
		want   string
	}{
		{"events", Limits{MaxEvents: 100}, "limit on events (100)"},
		{"time", Limits{MaxTime: Microsecond}, "limit on simulated time (1us)"},
		{"wall", Limits{MaxWall: 10 * time.Millisecond}, "limit on wall time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEngine(1)
			loop(e)
			e.SetLimits(c.limits)
			err := e.Run()
			var l *LimitError
			if !errors.As(err, &l) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "loop") {
				t.Fatalf("got %v, want %q naming loop", err, c.want)
			}
		})
	}
}

func TestPanicInProcessIsAnError(t *testing.T) {
	e := NewEngine(1)
	e.Spawn("buggy", func(p *Proc) {
		p.Sleep(5)
		var s []int
		_ = s[3]
	})
	err := e.Run()
	var pp *ProcessPanic
	if !errors.As(err, &pp) || pp.Proc != "buggy" || pp.At != 5 {
		t.Fatalf("got %v", err)
	}
}

func TestFailStopsRun(t *testing.T) {
	e := NewEngine(1)
	bad := errors.New("corrupted delivery")
	e.Spawn("a", func(p *Proc) {
		p.Sleep(10)
		e.Fail(bad)
		p.Sleep(10)
		t.Error("ran past Fail")
	})
	if err := e.Run(); !errors.Is(err, bad) {
		t.Fatalf("got %v", err)
	}
}

// stateLog is a Tracer that logs what it is told, a line each.
type stateLog struct{ bytes.Buffer }

func (l *stateLog) State(now Time, p *Proc, state string) {
	fmt.Fprintf(l, "%v %s %s\n", now, p.Name(), state)
}

func (l *stateLog) Mark(now Time, p *Proc, name string) {
	fmt.Fprintf(l, "%v %s mark %s\n", now, p.Name(), name)
}

func (l *stateLog) Flow(from *Proc, at Time, p *Proc, now Time, name string) {
	fmt.Fprintf(l, "%v %s flow %s from %s at %v\n", now, p.Name(), name, from.Name(), at)
}

// randomRun is a small model whose outcome depends on the seed.
func randomRun(seed uint64) (string, []byte) {
	e := NewEngine(seed)
	tr := &stateLog{}
	e.Set(WithTracer(tr))
	var log []string
	var q WaitQueue
	for i := 0; i < 4; i++ {
		e.Spawn(fmt.Sprintf("p%d", i), func(p *Proc) {
			for j := 0; j < 5; j++ {
				p.Sleep(Time(1 + e.Rand().IntN(100)))
				if e.Rand().IntN(2) == 0 {
					q.WakeOne()
				} else if q.Len() < 2 {
					e.After(Time(e.Rand().IntN(50)), func() { q.WakeAll() })
					q.Wait(p, "q")
				}
				log = append(log, fmt.Sprintf("%s:%d", p.Name(), p.Now()))
			}
		})
	}
	e.Run()
	return fmt.Sprint(log), tr.Bytes()
}

func TestDeterminism(t *testing.T) {
	a, ta := randomRun(7)
	b, tb := randomRun(7)
	if a != b || !bytes.Equal(ta, tb) {
		t.Fatal("same seed gave different runs")
	}
	c, _ := randomRun(8)
	if a == c {
		t.Fatal("different seeds gave the same run")
	}
	if !bytes.Contains(ta, []byte(" p0 running")) || !bytes.Contains(ta, []byte(" p3 busy")) {
		t.Fatalf("trace lacks states: %s", ta[:200])
	}
}

func TestTimeHelpers(t *testing.T) {
	if got := ClockMHz(125).Period; got != 8*Nanosecond {
		t.Fatalf("125 MHz period %v", got)
	}
	if got := TransferTime(2500, 2.5e9); got != Microsecond {
		t.Fatalf("2500 B at 2.5 GB/s = %v", got)
	}
	if s := Micro(37).String(); s != "37us" {
		t.Fatalf("String %q", s)
	}
}

// The fast path of Sleep must not let a process overtake an event already
// scheduled for the time it wakes at.
func TestSleepDoesNotOvertakeEqualTimeEvents(t *testing.T) {
	e := NewEngine(1)
	var log []string
	e.Spawn("p", func(p *Proc) {
		e.After(10, func() { log = append(log, "callback@10") })
		p.Sleep(10)
		log = append(log, fmt.Sprintf("p@%d", p.Now()))
		p.Sleep(5)
		log = append(log, fmt.Sprintf("p@%d", p.Now()))
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(log); got != "[callback@10 p@10 p@15]" {
		t.Fatalf("got %s", got)
	}
}

func TestFromFloat(t *testing.T) {
	cases := []struct {
		v    float64
		want Time
		err  string
	}{
		{1.5, 1500 * Nanosecond, ""},
		{0, 0, ""},
		{-1, 0, "negative"},
		{1e30, 0, "too large"},
		{math.Inf(1), 0, "not a finite"},
		{math.NaN(), 0, "not a finite"},
	}
	for _, c := range cases {
		got, err := FromFloat(c.v, Microsecond)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("FromFloat(%g): got %v, want error %q", c.v, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("FromFloat(%g) = %v, %v; want %v", c.v, got, err, c.want)
		}
	}
}

func TestReportRandUse(t *testing.T) {
	var used atomic.Bool
	e := NewEngine(1)
	e.Set(WithRandUse(&used))
	e.Spawn("p", func(p *Proc) { p.Sleep(10) })
	if err := e.Run(); err != nil || used.Load() {
		t.Fatalf("no draw: used %v, err %v", used.Load(), err)
	}
	e2 := NewEngine(1)
	e2.Set(WithRandUse(&used))
	e2.Spawn("p", func(p *Proc) { p.Sleep(Time(e2.Rand().IntN(5))) })
	if err := e2.Run(); err != nil || !used.Load() {
		t.Fatalf("a draw: used %v, err %v", used.Load(), err)
	}
}

// TestWakeAtMovesSleep: a waker moves the end of a process's Sleep earlier
// or later; the process resumes then, in one event, and a process neither
// sleeping nor blocked is not woken.
func TestWakeAtMovesSleep(t *testing.T) {
	for _, tc := range []struct {
		name      string
		at, to    Time // when the waker runs, the new end
		want      Time
		wantMoved bool
	}{
		{"earlier", 10, 40, 40, true},
		{"later", 10, 250, 250, true},
		{"to the past: now", 30, 5, 30, true},
		{"after the sleep ended", 150, 120, 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(1)
			var woke Time
			p := e.Spawn("sleeper", func(p *Proc) {
				p.Sleep(100)
				woke = p.Now()
			})
			var moved bool
			e.At(tc.at, func() { moved = p.WakeAt(tc.to) })
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			if woke != tc.want || moved != tc.wantMoved {
				t.Errorf("woke at %v (moved %v), want %v (%v)", woke, moved, tc.want, tc.wantMoved)
			}
		})
	}
}

// TestInlineLoopRunsAsRun: a parking process runs callbacks and its own
// resumption itself (Engine.dispatch) when nothing else is due. The
// events, their order, their count and the limits are those of Run's loop
// (a traced run never takes the inline path: the reference).
func TestInlineLoopRunsAsRun(t *testing.T) {
	run := func(traced bool, l Limits) (string, uint64, error) {
		e := NewEngine(7)
		if traced {
			e.Set(WithTracer(&stateLog{}))
		}
		e.SetLimits(l)
		var log strings.Builder
		note := func(f string, a ...any) {
			fmt.Fprintf(&log, "%v ", e.Now())
			fmt.Fprintf(&log, f, a...)
			log.WriteString("\n")
		}
		r := e.Rand()
		for i := range 3 {
			e.Spawn(fmt.Sprint("p", i), func(p *Proc) {
				for k := range 200 {
					switch r.IntN(4) {
					case 0: // woken by a callback before its time-out
						e.After(Time(1+r.IntN(5)), func() {
							if e.Current() != nil {
								note("callback sees a current process")
							}
							note("wake %s", p.Name())
							p.Wake()
						})
						blockFor(p, Time(3+r.IntN(5)), "callback")
					case 1:
						p.Sleep(Time(1 + r.IntN(3)))
					case 2:
						p.Yield()
					default: // spin wake at a known time
						e.After(Time(r.IntN(3)), func() { p.WakeAt(e.Now() + 2) })
						p.BlockSpinning(Reason("word"))
					}
					note("%s step %d", p.Name(), k)
				}
			})
		}
		err := e.Run()
		return log.String(), e.Events(), err
	}
	for _, l := range []Limits{{}, {MaxEvents: 777}, {MaxTime: 300}} {
		want, wantN, wantErr := run(true, l)
		got, gotN, gotErr := run(false, l)
		if got != want || gotN != wantN || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("limits %+v: inline run differs from Run's loop: %d events (want %d), error %v (want %v), log equal %v",
				l, gotN, wantN, gotErr, wantErr, got == want)
		}
	}
}

// TestBlockThenRunsBeforeAnythingElse: BlockThen's function runs once the
// process has parked, on the engine's stack, before any other event (even
// one already due at the same time): as if the process had run it just
// before blocking. The T3D injects puts this way.
func TestBlockThenRunsBeforeAnythingElse(t *testing.T) {
	e := NewEngine(1)
	var order []string
	e.Spawn("p", func(p *Proc) {
		e.At(e.Now(), func() { order = append(order, "event") })
		p.BlockThen("waits for its own callback", func() {
			order = append(order, "then")
			if e.Current() != nil || !p.Blocked() {
				t.Error("BlockThen's function ran before the process parked")
			}
			e.After(5, func() { p.Wake() })
		})
		order = append(order, "resumed")
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "then event resumed" || e.Now() != 5 {
		t.Errorf("order %q at %v, want \"then event resumed\" at 5", got, e.Now())
	}
}

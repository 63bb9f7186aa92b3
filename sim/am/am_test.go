package am

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

const us = sim.Microsecond

// testParams are round numbers, so that expected times read easily.
func testParams(m Mode) Params {
	return Params{Mode: m, PollCost: 1 * us, DispatchCost: 2 * us, InterruptLatency: 10 * us,
		InterruptCost: 20 * us, CompletionCost: 5 * us}
}

// node is one endpoint on a preempting core, with a log of handler runs.
type node struct {
	e    *sim.Engine
	core *sim.Core
	ep   *Endpoint
	log  []string
	done int // header handlers finished
	comp int // completion handlers finished
}

func newNode(t *testing.T, par Params) *node {
	t.Helper()
	n := &node{e: sim.NewEngine(1)}
	n.core = n.e.NewCore("node0", true)
	ep, err := New(n.e, "node0", n.core, par)
	if err != nil {
		t.Fatal(err)
	}
	n.ep = ep
	return n
}

// header works 3 us and logs who ran it and when it finished.
func (n *node) header(p *sim.Proc, a *Arrival) Completion {
	p.Sleep(3 * us)
	n.done++
	n.log = append(n.log, fmt.Sprintf("header %d by %s at %v", a.Args[0], p.Name(), p.Now()))
	if a.Args[1] == 1 {
		return n.completion
	}
	return nil
}

func (n *node) completion(p *sim.Proc, a *Arrival) {
	p.Sleep(1 * us)
	n.comp++
	n.log = append(n.log, fmt.Sprintf("completion %d by %s at %v", a.Args[0], p.Name(), p.Now()))
}

// arrive schedules an arrival at time at; withData > 0 gives it a
// completion whose data arrives withData after the header.
func (n *node) arrive(at sim.Time, id uint64, withData sim.Time) {
	n.e.At(at, func() {
		a := Arrival{Header: n.header, Args: [4]uint64{id}}
		if withData > 0 {
			a.Args[1] = 1
			a.DataAt = at + withData
		}
		n.ep.Arrive(a)
	})
}

// TestHandlersRunAtTheirModesCosts: the same arrival, handled by polling
// (when the computing application polls, at its cost) and by interrupt
// (latency, interrupt cost, in the handler thread, preempting the
// application's computing); a blocked application is not delayed.
func TestHandlersRunAtTheirModesCosts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    Mode
		compute bool // the application computes 100 us before it waits
		want    string
		appDone sim.Time
		stats   Stats
	}{
		// Arrival at 10 us waits for the poll at 100 us: poll 1, dispatch 2, handler 3.
		{"polling", Polling, true, "header 1 by app at 106us", 106 * us,
			Stats{Arrivals: 1, Polls: 1, ByPoll: 1}},
		// Interrupt at 10 us, thread runs at 20 us, interrupt cost 20,
		// dispatch 2, handler 3: 25 us of handler work delay the compute.
		{"interrupt, app computing", Interrupt, true, "header 1 by node0 interrupt handler at 45us", 125 * us,
			Stats{Arrivals: 1, Interrupts: 1, ByInterrupt: 1}},
		// The application waits (blocked): nothing to delay, woken when
		// the handler is done.
		{"interrupt, app blocked", Interrupt, false, "header 1 by node0 interrupt handler at 45us", 45 * us,
			Stats{Arrivals: 1, Interrupts: 1, ByInterrupt: 1}},
		// A polling application that waits polls every 1 us from 0 and sees
		// the arrival at its poll at 10 us; the idle polls in between are
		// not simulated (two counted).
		{"polling, app waiting", Polling, false, "header 1 by app at 16us", 16 * us,
			Stats{Arrivals: 1, Polls: 2, ByPoll: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t, testParams(tc.mode))
			var appDone sim.Time
			app := n.e.Spawn("app", func(p *sim.Proc) {
				if tc.compute {
					p.Sleep(100 * us)
				}
				n.ep.WaitUntil(p, "waiting for the handler", func() bool { return n.done == 1 })
				appDone = p.Now()
			})
			n.core.BindApp(app)
			n.arrive(10*us, 1, 0)
			if err := n.e.Run(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(n.log, "; "); got != tc.want {
				t.Errorf("handlers: %s, want %s", got, tc.want)
			}
			if appDone != tc.appDone {
				t.Errorf("application done at %v, want %v", appDone, tc.appDone)
			}
			if n.ep.Stats() != tc.stats {
				t.Errorf("stats %+v, want %+v", n.ep.Stats(), tc.stats)
			}
		})
	}
}

// TestInterruptPipelining: arrivals while the handler thread is on its way
// or active are handled without an interrupt of their own; one after it
// went back to sleep raises a new one.
func TestInterruptPipelining(t *testing.T) {
	n := newNode(t, testParams(Interrupt))
	for i, at := range []sim.Time{10 * us, 12 * us, 14 * us, 41 * us, 100 * us} {
		n.arrive(at, uint64(i+1), 0)
	}
	if err := n.e.Run(); err != nil {
		t.Fatal(err)
	}
	// First interrupt: thread at 20, cost to 40, then 5 us per arrival;
	// the one at 41 us arrives while it is active. Second interrupt at
	// 100 us: thread at 110, cost to 130, handler done at 135.
	want := "header 1 by node0 interrupt handler at 45us; header 2 by node0 interrupt handler at 50us; " +
		"header 3 by node0 interrupt handler at 55us; header 4 by node0 interrupt handler at 60us; " +
		"header 5 by node0 interrupt handler at 135us"
	if got := strings.Join(n.log, "; "); got != want {
		t.Fatalf("handlers:\n%s\nwant\n%s", got, want)
	}
	if s := n.ep.Stats(); s.Interrupts != 2 || s.ByInterrupt != 5 {
		t.Fatalf("stats %+v, want 2 interrupts for 5 arrivals", s)
	}
}

// TestCompletionAfterData: a completion handler runs after its header
// handler and not before the message's data has arrived: in the completion
// thread (interrupt mode, after the hand-off cost) or in a poll.
func TestCompletionAfterData(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		// Header done at 45 us, data at 60 us, hand-off 5 us, completion 1 us.
		{Interrupt, "header 1 by node0 interrupt handler at 45us; completion 1 by node0 completion handler at 66us"},
		// The waiter polls from 0 every 1 us; the poll at 10 us runs the
		// header (done 16 us, a 6 us poll); data at 60 us is read by the
		// poll at 64 us (10 + 9*6), which runs the completion at 65-66 us.
		{Polling, "header 1 by app at 16us; completion 1 by app at 66us"},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			n := newNode(t, testParams(tc.mode))
			app := n.e.Spawn("app", func(p *sim.Proc) {
				n.ep.WaitUntil(p, "waiting for the completion", func() bool { return n.comp == 1 })
			})
			n.core.BindApp(app)
			n.arrive(10*us, 1, 50*us)
			if err := n.e.Run(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(n.log, "; "); got != tc.want {
				t.Fatalf("handlers: %s, want %s", got, tc.want)
			}
		})
	}
}

// TestWaitPollsInInterruptMode: a waiter that polls takes arrivals inline,
// and no interrupt is raised while it waits.
func TestWaitPollsInInterruptMode(t *testing.T) {
	par := testParams(Interrupt)
	par.WaitPolls = true
	n := newNode(t, par)
	app := n.e.Spawn("app", func(p *sim.Proc) {
		n.ep.WaitUntil(p, "waiting for the handler", func() bool { return n.done == 1 })
	})
	n.core.BindApp(app)
	n.arrive(10*us, 1, 0)
	if err := n.e.Run(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(n.log, "; "), "header 1 by app at 16us"; got != want {
		t.Fatalf("handlers: %s, want %s", got, want)
	}
	if s := n.ep.Stats(); s.Interrupts != 0 {
		t.Fatalf("%d interrupts while the application polled", s.Interrupts)
	}
}

// TestPollingWaiterNothingArrivesIsLivelock: a process polling for a
// message that never comes is reported, with its reason.
func TestPollingWaiterNothingArrivesIsLivelock(t *testing.T) {
	n := newNode(t, testParams(Polling))
	n.e.Spawn("app", func(p *sim.Proc) {
		n.ep.WaitUntil(p, "waiting for a reply from node 3", func() bool { return false })
	})
	err := n.e.Run()
	if !sim.IsLivelock(err) || !strings.Contains(err.Error(), "app spinning since 1us: waiting for a reply from node 3") {
		t.Fatalf("got %v", err)
	}
}

// TestDeterministic: seeded arrival times and both modes give the same log
// twice.
func TestDeterministic(t *testing.T) {
	run := func(mode Mode) string {
		n := newNode(t, testParams(mode))
		r := n.e.Rand()
		at, wantComp := sim.Time(0), 0
		for i := range 50 {
			at += sim.Time(r.IntN(20)) * us
			data := sim.Time(r.IntN(3)) * 10 * us
			if data > 0 {
				wantComp++
			}
			n.arrive(at, uint64(i), data)
		}
		app := n.e.Spawn("app", func(p *sim.Proc) {
			for n.done < 50 || n.comp < wantComp {
				p.Sleep(7 * us)
				n.ep.Poll(p)
			}
		})
		n.core.BindApp(app)
		if err := n.e.Run(); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(n.e.Now(), n.log, n.ep.Stats(), n.core.Stats())
	}
	for _, m := range []Mode{Polling, Interrupt} {
		if a, b := run(m), run(m); a != b {
			t.Fatalf("%v: two runs differ:\n%s\n%s", m, a, b)
		}
	}
}

// TestNoAllocationPerArrival: in steady state an arrival, its interrupt or
// poll, its header and completion handlers allocate nothing.
func TestNoAllocationPerArrival(t *testing.T) {
	for _, mode := range []Mode{Polling, Interrupt} {
		t.Run(mode.String(), func(t *testing.T) {
			mallocs := func(arrivals int) uint64 {
				n := newNode(t, testParams(mode))
				comp := func(p *sim.Proc, a *Arrival) { p.Sleep(us); n.comp++ }
				h := func(p *sim.Proc, a *Arrival) Completion { p.Sleep(us); n.done++; return comp }
				n.e.Spawn("network", func(p *sim.Proc) {
					for i := range arrivals {
						p.Sleep(40 * us)
						n.ep.Arrive(Arrival{Header: h, Src: i, DataAt: p.Now() + us})
					}
				})
				app := n.e.Spawn("app", func(p *sim.Proc) {
					n.ep.WaitUntil(p, "all", func() bool { return n.comp == arrivals })
				})
				n.core.BindApp(app)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if err := n.e.Run(); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				if n.comp != arrivals {
					t.Fatalf("%d completions of %d", n.comp, arrivals)
				}
				return after.Mallocs - before.Mallocs
			}
			few, many := mallocs(100), mallocs(2100)
			if many > few+50 {
				t.Fatalf("2000 more arrivals made %d more allocations", many-few)
			}
		})
	}
}

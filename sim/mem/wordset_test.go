package mem

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// write is a word written at a time: entry's word gets v.
type write struct {
	at    sim.Time
	entry int
	v     uint64
}

// found is what one scan of a receiver returned, and when it ended.
type found struct {
	at           sim.Time
	entry, loads int
}

// scanRun runs a receiver over a set of n entries (entry idle not
// watched; entry i's word at 64*i, waiting for 1, or, with differs, for a
// change from 0): it scans from entry from, and while nothing is found
// waits and scans again, until it has found want entries; each found
// entry is re-armed (waits for 2, then 3, ...). The writes land at their
// times. perLoad runs the engine step by step (sim.Engine.SetStepByStep):
// ScanUncached then issues the loads one by one, the model its one timed
// operation replaces.
func scanRun(t *testing.T, n, idle, from int, writes []write, want int, differs, perLoad bool) []found {
	t.Helper()
	e, m, cpus, seg := setup(t, "sc", 1)
	c := cpus[0]
	s := c.NewWordSet(n)
	next := make([]uint64, n)
	for i := 0; i < n; i++ {
		if i == idle {
			continue
		}
		s.Watch(i, seg.Addr(64*i), 64)
		next[i] = 1
		if differs {
			s.ExpectChange(i, seg.Addr(64*i), 0)
		} else {
			s.Expect(i, seg.Addr(64*i), 1)
		}
	}
	// The writes are scheduled before the receiver starts: their events come
	// first at any instant they share with a load.
	for _, w := range writes {
		e.At(w.at, func() { m.Store64(seg.Addr(64*w.entry), w.v) })
	}
	e.SetStepByStep(perLoad)
	var got []found
	e.Spawn("receiver", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		for len(got) < want {
			i, loads, ok := c.ScanUncached(p, s, 0, n, from)
			if !ok {
				c.WaitWords(p, "test: waiting for a word", s, 0, n)
				continue
			}
			got = append(got, found{p.Now(), i, loads})
			from = (i + 1) % n
			next[i]++
			if differs {
				s.ExpectChange(i, s.Word(i), m.Load64(s.Word(i)))
			} else {
				s.Expect(i, s.Word(i), next[i])
			}
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestScanMatchesLoadByLoad compares ScanUncached, one timed operation,
// with the same loads issued one by one, on small cases: writes landing
// before the scan, in the middle of it (before, at and after the instant of
// the load of their word), during the wait, and on the word the scan has
// already passed. Found entries, loads and times must be identical.
func TestScanMatchesLoadByLoad(t *testing.T) {
	const L = 100 * sim.Nanosecond // sc's uncached load: 10 cycles at 100 MHz
	t0 := sim.Microsecond
	cases := []struct {
		name   string
		n      int
		idle   int
		from   int
		writes []write
		want   int
	}{
		{"ready before the scan", 6, 2, 0, []write{{0, 4, 1}}, 1},
		{"mid-scan before its load", 6, 2, 3, []write{{t0 + L/2, 5, 1}, {t0 + 10*L, 0, 1}}, 2},
		{"mid-scan at its load's instant", 6, 2, 3, []write{{t0 + L, 4, 1}}, 1},
		{"mid-scan just after its load", 6, 2, 3, []write{{t0 + L + 1, 4, 1}, {t0 + 20*L, 5, 1}}, 2},
		{"mid-scan, earlier than what was found", 8, 0, 1, []write{{0, 6, 1}, {t0 + 2*L, 3, 1}}, 2},
		{"mid-scan on an entry passed already", 8, 0, 4, []write{{t0 + 2*L, 5, 1}, {0, 7, 1}}, 2},
		{"during the wait", 5, 4, 0, []write{{3 * t0, 1, 1}, {3*t0 + 7, 3, 1}}, 2},
		{"wrap-around", 5, 0, 3, []write{{t0 + 2*L, 1, 1}, {t0 + 3*L, 2, 1}}, 2},
		{"a word that is not ready", 5, 0, 1, []write{{t0 + L/3, 2, 7}, {t0 + 9*L, 2, 1}}, 1},
		{"the found word unready before its load", 6, 2, 3, []write{{0, 5, 1}, {t0 + L, 5, 9}, {0, 1, 1}}, 1},
	}
	for _, tc := range cases {
		for _, differs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/differs=%v", tc.name, differs), func(t *testing.T) {
				if differs && (tc.name == "a word that is not ready" || tc.name == "the found word unready before its load") {
					t.Skip("with differs every write is a change")
				}
				one := scanRun(t, tc.n, tc.idle, tc.from, tc.writes, tc.want, differs, false)
				byLoad := scanRun(t, tc.n, tc.idle, tc.from, tc.writes, tc.want, differs, true)
				if !slices.Equal(one, byLoad) {
					t.Errorf("one timed scan %v, load by load %v", one, byLoad)
				}
				if len(one) != tc.want {
					t.Errorf("found %d entries, want %d", len(one), tc.want)
				}
			})
		}
	}
}

// TestScanMatchesLoadByLoadRandom: random sets and writes, on and off the
// loads' instants.
func TestScanMatchesLoadByLoadRandom(t *testing.T) {
	const L = 100 * sim.Nanosecond
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(12)
		idle := r.IntN(n + 1) // n: none
		var ws []write
		want := 0
		for k := 0; k < 1+r.IntN(2*n); k++ {
			i := r.IntN(n)
			if i == idle {
				continue
			}
			at := sim.Microsecond + sim.Time(r.IntN(3*n))*L
			if r.IntN(2) == 0 {
				at += sim.Time(r.IntN(int(L)))
			}
			ws = append(ws, write{at, i, 1})
			want = 1
		}
		if want == 0 {
			continue
		}
		from := r.IntN(n)
		differs := r.IntN(2) == 0
		one := scanRun(t, n, idle, from, ws, 1, differs, false)
		byLoad := scanRun(t, n, idle, from, ws, 1, differs, true)
		if !slices.Equal(one, byLoad) {
			t.Errorf("seed %d: n %d idle %d from %d writes %v: one timed scan %v, load by load %v", seed, n, idle, from, ws, one, byLoad)
		}
	}
}

// TestScanIsOneEvent: a scan of many words costs one event, however many
// words it loads (one per load when the engine runs step by step), and
// waiting costs none per write that makes no word ready.
func TestScanIsOneEvent(t *testing.T) {
	for _, stepByStep := range []bool{false, true} {
		want := uint64(1)
		if stepByStep {
			want = 60
		}
		if got := scanEvents(t, stepByStep); got != want {
			t.Errorf("step by step %v: a scan of 60 words took %d events, want %d", stepByStep, got, want)
		}
	}
}

func scanEvents(t *testing.T, stepByStep bool) uint64 {
	e, _, cpus, seg := setup(t, "sc", 1)
	e.SetStepByStep(stepByStep)
	c := cpus[0]
	const n = 60
	s := c.NewWordSet(n)
	for i := 0; i < n; i++ {
		s.Watch(i, seg.Addr(64*i), 64)
		s.Expect(i, seg.Addr(64*i), 1)
	}
	var events uint64
	e.Spawn("receiver", func(p *sim.Proc) {
		before := e.Events()
		if _, loads, ok := c.ScanUncached(p, s, 0, n, 0); ok || loads != n {
			t.Errorf("scan: ok %v after %d loads, want nothing after %d", ok, loads, n)
		}
		events = e.Events() - before
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return events
}

// TestWaitWordsLivelock: a wait nothing can end is reported as a livelock
// naming the reason.
func TestWaitWordsLivelock(t *testing.T) {
	e, _, cpus, seg := setup(t, "sc", 1)
	c := cpus[0]
	s := c.NewWordSet(2)
	s.Watch(0, seg.Addr(0), 8)
	s.Expect(0, seg.Addr(0), 1)
	e.Spawn("receiver", func(p *sim.Proc) { c.WaitWords(p, "waiting for the flag", s, 0, 2) })
	err := e.Run()
	if !sim.IsLivelock(err) {
		t.Fatalf("got %v, want a livelock", err)
	}
	if !strings.Contains(err.Error(), "waiting for the flag") {
		t.Errorf("report %q does not name the wait", err)
	}
}

// TestWordSetSteadyStateAllocatesNothing: writes, scans (some cut short
// by a write) and waits on a set allocate nothing once it is set up: a run
// of 2000 rounds allocates what a run of 20 does.
func TestWordSetSteadyStateAllocatesNothing(t *testing.T) {
	run := func(rounds int) (mallocs uint64, cut uint64) {
		e, m, cpus, seg := setup(t, "sc", 1)
		c := cpus[0]
		const n = 16
		s := c.NewWordSet(n)
		for i := 0; i < n; i++ {
			s.Watch(i, seg.Addr(64*i), 64)
			s.Expect(i, seg.Addr(64*i), 1)
		}
		got := make([]uint64, n)
		e.SpawnDaemon("receiver", func(p *sim.Proc) {
			for from := 0; ; {
				i, _, ok := c.ScanUncached(p, s, 0, n, from)
				if !ok {
					c.WaitWords(p, "test: waiting", s, 0, n)
					continue
				}
				got[i]++
				from = (i + 1) % n
				s.Expect(i, s.Word(i), got[i]+1)
			}
		})
		e.Spawn("writer", func(p *sim.Proc) {
			for r := 0; r < rounds; r++ {
				i := (7 * r) % n
				m.Store64(seg.Addr(64*i), got[i]+1)
				p.Sleep(sim.Time(50+(r%7)*130) * sim.Nanosecond)
			}
		})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, s.Cut()
	}
	run(20) // warm up
	small, _ := run(20)
	large, cut := run(2000)
	if large > small+5 {
		t.Errorf("2000 rounds allocated %d times, 20 rounds %d", large, small)
	}
	if cut == 0 {
		t.Error("no scan was cut short by a write")
	}
}

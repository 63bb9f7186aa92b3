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

// pollCase is a receiver polling n ready words (entry i's word at 8*i,
// ready when it holds the value the receiver waits for: 1, then 2, ...)
// with a cyclic scan from the entry after the last one found, each poll
// one Poll; between polls that find nothing it computes gap cycles. compute
// is the cycles each load of the scan is followed by, inside the check;
// order, if not nil, is the order the scan visits the entries in (a
// permutation: loads at scattered addresses). The writes land at their
// times (scheduled before the receiver starts: at an instant they share
// with a load, the load reads them).
type pollCase struct {
	model   string // the receiver's memory model ("sc" if empty)
	n       int
	from    int
	compute float64
	gap     float64
	order   []int
	writes  []write
	want    int
}

// write is a write by another processor at time at of value v into
// entry's word.
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

// pollOutcome is what a run of a pollCase did: the entries found and when,
// when it ended, the CPU's counts and the events it took.
type pollOutcome struct {
	got    []found
	end    sim.Time
	stats  Stats
	events uint64
	reruns uint64
}

func (o pollOutcome) same(x pollOutcome) bool {
	return slices.Equal(o.got, x.got) && o.end == x.end && o.stats == x.stats
}

func pollRun(t testing.TB, tc pollCase, stepByStep bool) pollOutcome {
	t.Helper()
	model := tc.model
	if model == "" {
		model = "sc"
	}
	e, m, cpus, seg := setup(t, model, 1)
	c := cpus[0]
	for _, w := range tc.writes {
		e.At(w.at, func() { m.Store64(seg.Addr(8*w.entry), w.v) })
	}
	e.SetStepByStep(stepByStep)
	next := make([]uint64, tc.n)
	for i := range next {
		next[i] = 1
	}
	var o pollOutcome
	e.Spawn("receiver", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		from := tc.from
		var hit, loads int
		check := func() bool {
			hit, loads = -1, 0
			for k := 0; k < tc.n; k++ {
				i := (from + k) % tc.n
				if tc.order != nil {
					i = tc.order[i]
				}
				loads++
				v := c.LoadUncached(p, seg.Addr(8*i), 8)
				if tc.compute > 0 {
					c.Compute(p, tc.compute)
				}
				if v == next[i] {
					hit = i
					return true
				}
			}
			return false
		}
		for polls := 0; len(o.got) < tc.want && polls < 200; polls++ {
			if !c.Poll(p, check) {
				c.Compute(p, tc.gap)
				continue
			}
			o.got = append(o.got, found{p.Now(), hit, loads})
			next[hit]++
			from = (slices.Index(tc.order, hit) + 1) % tc.n
			if tc.order == nil {
				from = (hit + 1) % tc.n
			}
		}
		o.end = p.Now()
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	o.stats, o.events = c.Stats(), e.Events()
	if c.poll != nil {
		o.reruns = c.poll.reruns
	}
	return o
}

// TestPollMatchesLoadByLoad compares a merged poll (one event, replayed
// when a write lands on a word it read) with the same loads issued one by
// one (the engine step by step), on cyclic scans of up to 300 words with
// writes landing before the poll, at and between the instants of its
// loads, after it, and on words it passed already: the same entries found
// after the same loads, at the same instants, and the same counts, in
// fewer events.
func TestPollMatchesLoadByLoad(t *testing.T) {
	const L = 100 * sim.Nanosecond // sc's uncached load: 10 cycles at 100 MHz
	t0 := sim.Microsecond
	cases := []struct {
		name string
		pollCase
	}{
		{"ready before the poll", pollCase{n: 6, writes: []write{{0, 4, 1}}, want: 1}},
		{"at its load's instant", pollCase{n: 6, from: 3, writes: []write{{t0 + L, 4, 1}}, want: 1}},
		{"just after its load", pollCase{n: 6, from: 3, gap: 7, writes: []write{{t0 + L + 1, 4, 1}, {t0 + 20*L, 5, 1}}, want: 2}},
		{"earlier than what was found", pollCase{n: 8, from: 1, writes: []write{{0, 6, 1}, {t0 + 2*L, 3, 1}}, want: 2}},
		{"on a word passed already", pollCase{n: 8, from: 4, writes: []write{{t0 + 2*L, 5, 1}, {0, 7, 1}}, want: 2}},
		{"a value not waited for", pollCase{n: 5, from: 1, gap: 3, writes: []write{{t0 + L/3, 2, 7}, {t0 + 9*L, 2, 1}}, want: 1}},
		{"the found word unready before its load", pollCase{n: 6, from: 3, writes: []write{{0, 5, 1}, {t0 + L, 5, 9}, {0, 1, 1}}, want: 1}},
		{"wrap-around", pollCase{n: 5, from: 3, writes: []write{{t0 + 2*L, 1, 1}, {t0 + 3*L, 2, 1}}, want: 2}},
		{"with compute between loads", pollCase{n: 7, from: 2, compute: 3, gap: 11, writes: []write{{t0 + 3*L, 0, 1}, {t0 + 4*L + 30*sim.Nanosecond, 6, 1}, {t0 + 17*L, 2, 1}}, want: 3}},
		{"during the gap", pollCase{n: 4, gap: 25, writes: []write{{t0 + 5*L, 1, 1}, {t0 + 5*L + 1, 3, 1}}, want: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			merged, step := pollRun(t, tc.pollCase, false), pollRun(t, tc.pollCase, true)
			if !merged.same(step) {
				t.Errorf("merged %+v\nstep by step %+v", merged, step)
			}
			if len(merged.got) != tc.want {
				t.Errorf("found %d entries, want %d", len(merged.got), tc.want)
			}
			if merged.events >= step.events {
				t.Errorf("merged %d events, step by step %d", merged.events, step.events)
			}
		})
	}
}

// TestPollWriteAtEveryOffset: one write into a scan of 300 words, landing
// at every instant of a load and half-way between, on a word still to be
// loaded, one passed already and the word found; and two writes at once.
func TestPollWriteAtEveryOffset(t *testing.T) {
	const L = 100 * sim.Nanosecond
	const n = 300
	t0 := sim.Microsecond
	for half := 0; half <= 2*n+4; half++ {
		at := t0 + sim.Time(half)*L/2
		for _, ws := range [][]write{
			{{at, 250, 1}},                   // still to be loaded (the scan starts at 100)
			{{at, 120, 1}, {0, 200, 1}},      // before what was found
			{{at, 200, 5}, {0, 200, 1}},      // the found word made unready
			{{at, 150, 1}, {at, 99, 1}},      // two at once, the second the last word
			{{at, 130, 3}, {at + L, 130, 1}}, // a value not waited for, then the one
		} {
			tc := pollCase{n: n, from: 100, gap: 4, writes: ws, want: 1}
			merged, step := pollRun(t, tc, false), pollRun(t, tc, true)
			if !merged.same(step) {
				t.Fatalf("writes %v: merged %+v\nstep by step %+v", ws, merged, step)
			}
		}
	}
}

// TestPollMatchesLoadByLoadRandom: random scans (some with compute between
// loads, some visiting the words in a scattered order: many runs of
// addresses; on CPUs with and without a store buffer and a coherent cache)
// and random writes, on and off the loads' instants.
func TestPollMatchesLoadByLoadRandom(t *testing.T) {
	const L = 100 * sim.Nanosecond
	reruns := uint64(0)
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		tc := pollCase{model: []string{"sc", "tso", "noncoherent"}[r.IntN(3)], n: 2 + r.IntN(40), gap: float64(r.IntN(30))}
		tc.from = r.IntN(tc.n)
		if r.IntN(3) == 0 {
			tc.compute = float64(1 + r.IntN(12))
		}
		if r.IntN(3) == 0 {
			tc.order = r.Perm(tc.n)
		}
		for k := 0; k < 1+r.IntN(2*tc.n); k++ {
			at := sim.Microsecond + sim.Time(r.IntN(3*tc.n))*L
			if r.IntN(2) == 0 {
				at += sim.Time(r.IntN(int(L)))
			}
			v := uint64(1)
			if r.IntN(4) == 0 {
				v = uint64(2 + r.IntN(3))
			}
			tc.writes = append(tc.writes, write{at, r.IntN(tc.n), v})
		}
		tc.want = 1 + r.IntN(3)
		merged, step := pollRun(t, tc, false), pollRun(t, tc, true)
		if !merged.same(step) {
			t.Fatalf("seed %d: %+v: merged %+v\nstep by step %+v", seed, tc, merged, step)
		}
		reruns += merged.reruns
	}
	if reruns == 0 {
		t.Error("no write made a merged poll run its check again")
	}
}

// TestPollIsOneEvent: a poll of 200 words that finds nothing is one event
// (one per load step by step).
func TestPollIsOneEvent(t *testing.T) {
	for _, stepByStep := range []bool{false, true} {
		e, _, cpus, seg := setup(t, "sc", 1)
		e.SetStepByStep(stepByStep)
		c := cpus[0]
		var events uint64
		e.Spawn("poller", func(p *sim.Proc) {
			before := e.Events()
			ok := c.Poll(p, func() bool {
				for i := 0; i < 200; i++ {
					if c.LoadUncached(p, seg.Addr(8*i), 8) != 0 {
						return true
					}
				}
				return false
			})
			if ok {
				t.Error("found a word set")
			}
			events = e.Events() - before
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		want := uint64(1)
		if stepByStep {
			want = 200
		}
		if events != want || c.Stats().Uncached != 200 {
			t.Errorf("step by step %v: %d events and %d loads, want %d and 200", stepByStep, events, c.Stats().Uncached, want)
		}
	}
}

// TestPollCheckMisuse: a merged check that stores, loads through the
// cache, or does not repeat its loads when run again is a model bug,
// reported as a panic naming it.
func TestPollCheckMisuse(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		check      func(c *CPU, p *sim.Proc, seg Segment, runs *int) bool
	}{
		{"store", "Store inside a poll's check", func(c *CPU, p *sim.Proc, seg Segment, _ *int) bool {
			c.Store(p, seg.Addr(0), 8, 1)
			return false
		}},
		{"cached load", "Load inside a poll's check", func(c *CPU, p *sim.Proc, seg Segment, _ *int) bool {
			return c.Load(p, seg.Addr(0), 8) != 0
		}},
		{"execute", "Execute inside a poll's check", func(c *CPU, p *sim.Proc, seg Segment, _ *int) bool {
			c.Execute(p, Code{Bytes: 64}, 10)
			return false
		}},
		{"peek", "PeekUncached inside a poll's check", func(c *CPU, p *sim.Proc, seg Segment, _ *int) bool {
			return c.PeekUncached(seg.Addr(0), 8) != 0
		}},
		{"not deterministic", "not deterministic", func(c *CPU, p *sim.Proc, seg Segment, runs *int) bool {
			*runs++
			c.LoadUncached(p, seg.Addr(8**runs), 8)
			return c.LoadUncached(p, seg.Addr(512), 8) != 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, m, cpus, seg := setup(t, "sc", 1)
			c := cpus[0]
			runs := 0
			e.At(50*sim.Nanosecond, func() { m.Store64(seg.Addr(512), 1) })
			e.Spawn("poller", func(p *sim.Proc) {
				c.Poll(p, func() bool { return tc.check(c, p, seg, &runs) })
			})
			err := e.Run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a panic saying %q", err, tc.want)
			}
		})
	}
}

// TestPollSteadyStateAllocatesNothing: merged polls, some run again by a
// write, allocate nothing once the CPU has polled: a run of 2000 rounds
// allocates what a run of 20 does.
func TestPollSteadyStateAllocatesNothing(t *testing.T) {
	run := func(rounds int) (mallocs, reruns uint64) {
		e, m, cpus, seg := setup(t, "sc", 1)
		c := cpus[0]
		const n = 64
		got := make([]uint64, n)
		e.Spawn("receiver", func(p *sim.Proc) {
			from, hit := 0, -1
			check := func() bool {
				hit = -1
				for k := 0; k < n; k++ {
					i := (from + k) % n
					if c.LoadUncached(p, seg.Addr(64*i), 8) > got[i] {
						hit = i
						return true
					}
				}
				return false
			}
			for p.Now() < sim.Time(rounds)*sim.Microsecond {
				if !c.Poll(p, check) {
					c.Compute(p, 5)
					continue
				}
				got[hit]++
				from = (hit + 1) % n
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
		return after.Mallocs - before.Mallocs, c.poll.reruns
	}
	run(20)
	small, _ := run(20)
	large, reruns := run(2000)
	if large > small+5 {
		t.Errorf("2000 rounds allocated %d times, 20 rounds %d", large, small)
	}
	if reruns == 0 {
		t.Error("no write made a poll run its check again")
	}
}

// BenchmarkPoll: 16 receivers, each on its own processor, polling 256
// words with a cyclic scan, and a writer making one of each receiver's
// words ready now and then (a run of check again when it lands during a
// poll). Reports the loads simulated per second of wall time (the same
// loads either way) and the events a run takes, merged and step by step.
func BenchmarkPoll(b *testing.B) {
	cfg, err := Builtin("sc")
	if err != nil {
		b.Fatal(err)
	}
	for _, stepByStep := range []bool{false, true} {
		b.Run(fmt.Sprintf("stepByStep=%v", stepByStep), func(b *testing.B) {
			const n, procs, rounds = 256, 16, 50
			var events, loads uint64
			for range b.N {
				e := sim.NewEngine(1)
				e.SetStepByStep(stepByStep)
				cpus := make([]*CPU, procs)
				for r := range cpus {
					m := NewMemory(fmt.Sprint("node", r), 1<<16)
					if _, err := m.Alloc("words", 8*n, 64); err != nil {
						b.Fatal(err)
					}
					c, err := NewCPU(e, "cpu", m, cfg)
					if err != nil {
						b.Fatal(err)
					}
					cpus[r] = c
					e.Spawn("receiver", func(p *sim.Proc) {
						seen := make([]uint64, n)
						from, hit := 0, -1
						check := func() bool {
							hit = -1
							for k := 0; k < n; k++ {
								i := (from + k) % n
								if c.LoadUncached(p, Addr(8*i), 8) != seen[i] {
									hit = i
									return true
								}
							}
							return false
						}
						for got := 0; got < rounds; {
							if !c.Poll(p, check) {
								c.Compute(p, 20)
								continue
							}
							seen[hit]++
							from = (hit + 1) % n
							got++
						}
					})
				}
				e.Spawn("writer", func(p *sim.Proc) {
					for k := 0; k < rounds; k++ {
						for r, c := range cpus {
							a := Addr(8 * ((k*97 + r*31) % n))
							c.Memory().Store64(a, c.Memory().Load64(a)+1)
							p.Sleep(800 * sim.Nanosecond)
						}
					}
				})
				if err := e.Run(); err != nil {
					b.Fatal(err)
				}
				events += e.Events()
				for _, c := range cpus {
					loads += c.Stats().Uncached
				}
			}
			b.ReportMetric(float64(loads)/b.Elapsed().Seconds(), "loads/s")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

// TestPollSeesAnotherThreadsBufferedStore: a store that another process
// on the same CPU puts into its store buffer while a merged poll sleeps is
// read by the poll's later loads (forwarded), as the loads issued one by
// one read it.
func TestPollSeesAnotherThreadsBufferedStore(t *testing.T) {
	const L = 100 * sim.Nanosecond
	reruns := uint64(0)
	run := func(at sim.Time, entry int, stepByStep bool) (found, Stats) {
		e, _, cpus, seg := setup(t, "tso", 1)
		e.SetStepByStep(stepByStep)
		c := cpus[0]
		const n = 40
		var f found
		e.Spawn("poller", func(p *sim.Proc) {
			var hit, loads int
			check := func() bool {
				hit, loads = -1, 0
				for i := range n {
					loads++
					if c.LoadUncached(p, seg.Addr(8*i), 8) == 1 {
						hit = i
						return true
					}
				}
				return false
			}
			for !c.Poll(p, check) {
				c.Compute(p, 3)
			}
			f = found{p.Now(), hit, loads}
		})
		e.Spawn("thread", func(p *sim.Proc) {
			p.Sleep(at)
			c.Store(p, seg.Addr(8*entry), 8, 1)
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if c.poll != nil {
			reruns += c.poll.reruns
		}
		return f, c.Stats()
	}
	for at := sim.Time(1); at < 50*L; at += 37 * sim.Nanosecond {
		for _, entry := range []int{3, 20, 39} {
			mf, ms := run(at, entry, false)
			sf, ss := run(at, entry, true)
			if mf != sf || ms != ss {
				t.Fatalf("store at %v to %d: merged %v %+v, step by step %v %+v", at, entry, mf, ms, sf, ss)
			}
		}
	}
	if reruns == 0 {
		t.Error("no buffered store made a merged poll run its check again")
	}
}

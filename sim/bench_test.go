package sim

import (
	"iter"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user and system) the test process has used: on
// a shared machine rates per CPU second mean more than rates per wall
// second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRate reports n things per wall second and per CPU second since
// (start, cpuStart) as unit and unit with "-cpu" before its "/s".
func reportRate(b *testing.B, n float64, unit string, start time.Time, cpuStart time.Duration) {
	b.ReportMetric(n/time.Since(start).Seconds(), unit+"/s")
	if cpu := cpuTime() - cpuStart; cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), unit+"/cpu-s")
	}
}

// runMeasured runs e as the benchmark's measured part and reports count()
// things per wall and per CPU second as unit.
func runMeasured(b *testing.B, e *Engine, unit string, count func() uint64) {
	b.ReportAllocs()
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime()
	if err := e.Run(); err != nil {
		b.Fatal(err)
	}
	reportRate(b, float64(count()), unit, start, cpuStart)
}

// BenchmarkCalendarPHOLD is a PHOLD model: a fixed population of events,
// each of which, when it fires, schedules one more at a random future time.
// It measures calendar events per second (an insertion into the calendar's
// radix heap and a removal per event).
func BenchmarkCalendarPHOLD(b *testing.B) {
	const population = 1000
	e := NewEngine(1)
	r := e.Rand()
	var hop func()
	n := 0
	hop = func() {
		n++
		if n <= b.N {
			e.After(Time(1+r.IntN(1000)), hop)
		}
	}
	for i := 0; i < population; i++ {
		e.After(Time(r.IntN(1000)), hop)
	}
	runMeasured(b, e, "events", e.Events)
}

// BenchmarkCalendarSparse is PHOLD with a real run's delays instead of
// 1-1,000 ps: a few hundred pending events, most of them 13 to 830 ns
// ahead and some 33 us (the delays a t3d-fig4 sync-MPI point schedules
// most, each drawn as often as there, with up to 63 ps of jitter). The
// calendar's buckets then hold one event or a few, as in t3d runs, not
// hundreds as in PHOLD's.
func BenchmarkCalendarSparse(b *testing.B) {
	const population = 600
	delays := [...]Time{
		20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000,
		167000, 167000, 167000, 220334, 220334, 53334, 53334, 830000,
		13334, 150000, 80000, 247000, 32935000, 32541000, 32728000, 32708000,
	}
	e := NewEngine(1)
	r := e.Rand()
	var hop func()
	n := 0
	hop = func() {
		n++
		if n <= b.N {
			e.After(delays[r.IntN(len(delays))]+Time(r.IntN(64)), hop)
		}
	}
	for i := 0; i < population; i++ {
		e.After(delays[r.IntN(len(delays))]+Time(r.IntN(64)), hop)
	}
	runMeasured(b, e, "events", e.Events)
}

// BenchmarkProcessSwitch measures hand-overs between processes: 8 processes
// calling Yield in turn. Its switches/s counts Yields; each is one lane
// event. A coroutine gives control back only to whoever resumed it, so a
// round of 8 hand-overs costs at least 14 coroutine switches: the process
// whose Yield finds the others ready resumes each of the 7 from its own
// stack (Engine.dispatch) and each comes back to it, and its own turn needs
// none. At iter.Pull's cost per switch (half of BenchmarkPullRoundTrip)
// that is a floor of 7/8 of a round trip per Yield, whatever the engine
// does around it.
func BenchmarkProcessSwitch(b *testing.B) {
	const procs = 8
	e := NewEngine(1)
	per := b.N/procs + 1
	for i := 0; i < procs; i++ {
		e.Spawn("p", func(p *Proc) {
			for j := 0; j < per; j++ {
				p.Yield()
			}
		})
	}
	runMeasured(b, e, "switches", func() uint64 { return uint64(procs * per) })
}

// BenchmarkSleep measures processes advancing time: 100 of them sleeping 1
// to 7 ps, so each Sleep is a heap event and a hand-over to another
// process (two coroutine switches), never the fast path.
func BenchmarkSleep(b *testing.B) {
	e := NewEngine(1)
	for i := 0; i < 100; i++ {
		e.Spawn("p", func(p *Proc) {
			for j := 0; j < b.N/100+1; j++ {
				p.Sleep(Time(1 + j%7))
			}
		})
	}
	runMeasured(b, e, "events", e.Events)
}

// BenchmarkPullRoundTrip is the floor under BenchmarkProcessSwitch: one
// bare iter.Pull round trip (resume a coroutine, it yields back), the two
// coroutine switches every hand-over between processes costs.
func BenchmarkPullRoundTrip(b *testing.B) {
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime()
	for range b.N {
		next()
	}
	reportRate(b, float64(b.N), "trips", start, cpuStart)
}

// BenchmarkNoopEvent is the engine loop's own cost per event: a callback
// that does nothing but schedule the next one at the current time, so
// every event goes through the lane (no radix heap) and Run's loop.
// BenchmarkCalendarPHOLD's cost per event minus this one (and the random
// draw PHOLD makes) is the radix heap's.
func BenchmarkNoopEvent(b *testing.B) {
	e := NewEngine(1)
	n := 0
	var hop func()
	hop = func() {
		if n++; n <= b.N {
			e.After(0, hop)
		}
	}
	e.After(0, hop)
	runMeasured(b, e, "events", e.Events)
}

// BenchmarkSleepSteps is BenchmarkSleep with each process's sleeps made
// runs of 8 steps (SleepSteps): the same events, one per step, and one
// hand-over per run instead of one per step.
func BenchmarkSleepSteps(b *testing.B) {
	e := NewEngine(1)
	for i := 0; i < 100; i++ {
		e.Spawn("p", func(p *Proc) {
			for j := 0; j < b.N/800+1; j++ {
				p.SleepSteps(Steps{N: 4, D: Time(1 + j%7)}, Steps{N: 4, D: Time(1 + (j+3)%7)})
			}
		})
	}
	runMeasured(b, e, "events", e.Events)
}

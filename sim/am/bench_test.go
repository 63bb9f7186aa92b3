package am

import (
	"testing"
	"time"

	"github.com/msgsim/msgsim/sim"
)

// BenchmarkArrivals measures arrivals handled per second of wall time: a
// network process delivers one arrival every 40 us (each with a completion
// whose data arrives 1 us later) to a node whose application waits.
func BenchmarkArrivals(b *testing.B) {
	for _, mode := range []Mode{Polling, Interrupt} {
		b.Run(mode.String(), func(b *testing.B) {
			e := sim.NewEngine(1)
			core := e.NewCore("node0", true)
			ep, err := New(e, "node0", core, testParams(mode))
			if err != nil {
				b.Fatal(err)
			}
			done := 0
			comp := func(p *sim.Proc, a *Arrival) { p.Sleep(sim.Microsecond); done++ }
			h := func(p *sim.Proc, a *Arrival) Completion { p.Sleep(sim.Microsecond); return comp }
			e.Spawn("network", func(p *sim.Proc) {
				for i := range b.N {
					p.Sleep(40 * sim.Microsecond)
					ep.Arrive(Arrival{Header: h, Src: i, DataAt: p.Now() + sim.Microsecond})
				}
			})
			core.BindApp(e.Spawn("app", func(p *sim.Proc) {
				ep.WaitUntil(p, "all", func() bool { return done == b.N })
			}))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			if err := e.Run(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(e.Events())/time.Since(start).Seconds(), "events/s")
		})
	}
}

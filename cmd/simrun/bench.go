package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/msgsim/msgsim/sim"
)

// cmdBench measures the engine on this machine: timed callbacks (calendar
// events) and process switches (two processes handing control back and
// forth through Block/Wake).
func cmdBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := countFlag(fs, "n", 1_000_000, 1, "events", "events per measurement")
	pos, code, ok := parseFlags(fs, "bench", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("bench", pos, 0, stderr) || *n <= 0 {
		return exitUsage
	}

	// Calendar: a self-rescheduling callback with 1,000 others pending.
	e := sim.NewEngine(1)
	left := *n
	var tick func()
	tick = func() {
		if left--; left > 0 {
			e.After(sim.Time(1+e.Rand().IntN(1000)), tick)
		}
	}
	for i := 0; i < 1000; i++ {
		e.After(sim.Second+sim.Time(i), func() {})
	}
	e.After(1, tick)
	start := time.Now()
	if err := e.Run(); err != nil {
		fmt.Fprintf(stderr, "simrun bench: %v\n", err)
		return exitFailed
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "calendar events: %d in %.3fs: %.3g events/s\n", e.Events(), el.Seconds(), float64(e.Events())/el.Seconds())

	// Switches: ping-pong between two processes.
	e = sim.NewEngine(1)
	var a, b *sim.Proc
	rounds := *n / 2
	a = e.Spawn("ping", func(p *sim.Proc) {
		p.Yield() // let pong block first
		for i := 0; i < rounds; i++ {
			b.Wake()
			p.Block("pong")
		}
	})
	b = e.SpawnDaemon("pong", func(p *sim.Proc) {
		for {
			p.Block("ping")
			a.Wake()
		}
	})
	start = time.Now()
	if err := e.Run(); err != nil {
		fmt.Fprintf(stderr, "simrun bench: %v\n", err)
		return exitFailed
	}
	el = time.Since(start)
	fmt.Fprintf(stdout, "process switches: %d in %.3fs: %.3g switches/s\n", e.Events(), el.Seconds(), float64(e.Events())/el.Seconds())
	return exitOK
}

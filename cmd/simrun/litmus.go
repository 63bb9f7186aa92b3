package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads/litmus"
)

func cmdLitmus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("litmus", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the tests and the built-in models")
	model := fs.String("model", "sc", "CPU model: a built-in (sc, tso, pso, noncoherent) or a YAML file")
	runs := fs.Int("runs", litmus.DefaultRuns, "number of runs")
	seed := fs.Uint64("seed", 1, "seed of the runs")
	startJ := fs.Float64("start-jitter-cycles", 0, "random start delay range per thread, in CPU cycles (default: from the model)")
	opJ := fs.Float64("op-jitter-cycles", 0, "random delay range before each instruction, in CPU cycles (default: from the model)")
	cold := fs.Bool("cold", false, "start with empty caches (default: each thread has loaded its locations)")
	pos, code, ok := parseFlags(fs, "litmus", args, stdout, stderr)
	if !ok {
		return code
	}
	if *list {
		fmt.Fprintln(stdout, "Tests:")
		for _, t := range litmus.Tests() {
			fmt.Fprintf(stdout, "  %-16s exists (%s)\n", t.Name, t.CondString())
			for _, l := range t.Program() {
				fmt.Fprintf(stdout, "  %-16s   %s\n", "", l)
			}
		}
		fmt.Fprintf(stdout, "Models: %s, or a YAML file of sim/mem Config fields (base: <model> to start from one)\n", strings.Join(mem.BuiltinNames(), ", "))
		return exitOK
	}
	if !wantArgs("litmus", pos, 1, stderr) {
		return exitUsage
	}
	t, err := litmus.LoadTest(pos[0], "")
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	cfg, err := litmus.LoadModel(*model, "")
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: --model: %v\n", err)
		return exitUsage
	}
	opts := litmus.DefaultOptions(t, cfg)
	opts.Runs, opts.Seed, opts.Warm = *runs, *seed, !*cold
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "start-jitter-cycles":
			opts.StartJitterCycles = *startJ
		case "op-jitter-cycles":
			opts.OpJitterCycles = *opJ
		}
	})
	start := time.Now()
	o, err := litmus.RunTest(t, *model, cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	wall := time.Since(start)
	if err := litmus.Write(stdout, o); err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events in %.3fs\n", *runs, o.Events, wall.Seconds())
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads/litmus"
)

func cmdLitmus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("litmus", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the tests and the built-in models")
	model := fs.String("model", "sc", "CPU model: a built-in (sc, tso, pso, noncoherent, nmca) or a YAML file")
	exhaustive := fs.Bool("exhaustive", false, "enumerate every final state the model allows (herd7-style output) instead of sampling runs")
	runs := fs.Int("runs", litmus.DefaultRuns, "number of runs")
	seed := fs.Uint64("seed", 1, "seed of the runs")
	startJ := fs.Float64("start-jitter-cycles", 0, "random start delay range per thread, in CPU cycles (default: from the model)")
	opJ := fs.Float64("op-jitter-cycles", 0, "random delay range before each instruction, in CPU cycles (default: from the model)")
	drainJ := fs.Float64("drain-jitter-cycles", 0, "random extra delay range of each store-buffer drain, in CPU cycles (default: the model's, 0 on the built-ins; R on tso needs it in sampling)")
	machine := fs.String("machine", "", "run on a machine's own processor model instead of --model: sx4 (threads on CPUs of one node)")
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
		fmt.Fprintln(stdout, "Models:")
		for _, m := range litmus.Models() {
			fmt.Fprintf(stdout, "  %-12s %s; shows %s\n", m.Name, m.What, m.Shows)
		}
		fmt.Fprintf(stdout, "  or a YAML file of sim/mem Config fields (base: <one of %s> to start from one)\n", strings.Join(mem.BuiltinNames(), ", "))
		fmt.Fprintln(stdout, "Machines (--machine): sx4, each thread on a CPU of one node: non-coherent write-through scalar caches, stores to different lines drain out of order, the node's own costs")
		fmt.Fprintln(stdout, "Or a herd7 .litmus file (X86 or C syntax): simrun litmus FILE.litmus --model tso")
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
	if *machine != "" {
		if cfg, err = machineModel(*machine, len(t.Threads)); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --machine: %v\n", err)
			return exitUsage
		}
		*model = *machine
	}
	opts := litmus.DefaultOptions(t, cfg)
	opts.Runs, opts.Seed, opts.Warm = *runs, *seed, !*cold
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "start-jitter-cycles":
			opts.StartJitterCycles = *startJ
		case "op-jitter-cycles":
			opts.OpJitterCycles = *opJ
		case "drain-jitter-cycles":
			opts.DrainJitterCycles = *drainJ
		}
	})
	start := time.Now()
	var o *litmus.Outcome
	if *exhaustive {
		o, err = litmus.Explore(t, *model, cfg, opts.Warm)
	} else {
		o, err = litmus.RunTest(t, *model, cfg, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	wall := time.Since(start)
	if err := litmus.Write(stdout, o); err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitFailed
	}
	if *exhaustive {
		fmt.Fprintf(stderr, "simrun litmus: %d states explored in %.3fs\n", o.Explored, wall.Seconds())
	} else {
		fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events in %.3fs\n", *runs, o.Events, wall.Seconds())
	}
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

// machineModel is the processor model of a machine's own configuration
// (default params), with threads processors of it sharing its memory.
func machineModel(name string, threads int) (mem.Config, error) {
	switch name {
	case "sx4":
		m, err := sx4.New(sim.NewEngine(0), threads, sx4.DefaultParams())
		if err != nil {
			return mem.Config{}, err
		}
		return m.CPU(0).Config(), nil
	case "t3d":
		return mem.Config{}, fmt.Errorf("t3d is not a litmus machine yet: its PEs share no memory, and threads on different PEs would need shmem puts and gets, which the litmus runner does not issue (machines: sx4)")
	}
	return mem.Config{}, fmt.Errorf("unknown machine %q (machines: sx4)", name)
}

package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/trace"
)

func cmdTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	out := fs.String("out", "trace.json", "Chrome Trace Event JSON file to write")
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "trace", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("trace", pos, 1, stderr) {
		return exitUsage
	}
	s, sp, code := load(pos[0], fs, *seed, 0, stderr)
	if s == nil {
		return code
	}
	if f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE, 0o644); err != nil {
		fmt.Fprintf(stderr, "simrun trace: --out: %v\n", err)
		return exitUsage
	} else {
		f.Close()
	}
	// Trace the first engine of the first series: series run one after the
	// other here, so "first" is well defined.
	var first *sim.Engine
	for i := range sp {
		sp[i].Observe = func(e *sim.Engine) {
			if first == nil {
				first = e
				trace.Enable(e)
			}
		}
	}
	runs, err := execute(sp, 1, nil, runner.WallLimit(s))
	if err != nil {
		fmt.Fprintf(stderr, "simrun trace: %s: %v\n", s.Name, err)
		return exitFailed
	}
	if errs := runInputErrors(s, runs); len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return exitUsage
	}
	dropNonFinite(runs)
	v := judge(s, runs)
	for _, f := range v.failures {
		fmt.Fprintln(stderr, f)
	}
	if first == nil {
		fmt.Fprintln(stderr, "simrun trace: the workload created no engine, nothing to trace")
		return exitFailed
	}
	if err := writeTrace(*out, first); err != nil {
		fmt.Fprintf(stderr, "simrun trace: %v\n", err)
		return exitFailed
	}
	spans, unended, marks := trace.Of(first).Counts(first.Now())
	fmt.Fprintf(stdout, "trace of the first engine of series %s (%v simulated) written to %s: %d spans, %d marks",
		sp[0].Series, first.Now(), *out, spans, marks)
	if unended > 0 {
		fmt.Fprintf(stdout, ", %d waits or spins the run ended in (drawn to the end, \"did not end\")", unended)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "open it in https://ui.perfetto.dev or chrome://tracing\nResult: %s\n", v.message)
	return v.code
}

func writeTrace(path string, e *sim.Engine) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the trace file: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := trace.Of(e).WriteChrome(w, e.Now()); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// seriesRun is one series' spec and what running it gave (a
// runner.Outcome, or a series a shard recorded).
type seriesRun struct {
	spec workloads.Spec
	res  workloads.Result
	err  error
	// engines counts the engines the workload created, randUsed says
	// whether any asked for its random generator (sim.WithRandUse).
	engines  *atomic.Int64
	randUsed *atomic.Bool
}

// seriesRuns are the outcomes of a runner.Run.
func seriesRuns(out []runner.Outcome) []seriesRun {
	runs := make([]seriesRun, len(out))
	for i, o := range out {
		runs[i] = seriesRun{spec: o.Spec, res: o.Result, err: o.Err, engines: o.Engines, randUsed: o.RandUsed}
	}
	return runs
}

// seedIndependent reports whether the results are the same for every
// seed (runner.SeedIndependent).
func seedIndependent(runs []seriesRun) bool {
	return runner.SeedIndependent(outcomes(runs))
}

// execute runs every spec of one scenario under watchdog w
// (runner.Run), at most jobs simulations at a time, and returns the
// outcomes in spec order.
func execute(specs []workloads.Spec, jobs int, progress io.Writer, w runner.Watchdog) ([]seriesRun, error) {
	out, err := runner.Run([]runner.Group{{Specs: specs, Watchdog: w}}, jobs, progress)
	if err != nil {
		return nil, err
	}
	return seriesRuns(out[0]), nil
}

// dropNonFinite drops the runs' non-finite rows, reporting each as a
// failure (runner.DropNonFinite).
func dropNonFinite(runs []seriesRun) {
	for i := range runs {
		runner.DropNonFinite(&runs[i].res)
	}
}

// outcomes are the runs as runner.Outcomes.
func outcomes(runs []seriesRun) []runner.Outcome {
	out := make([]runner.Outcome, len(runs))
	for i, r := range runs {
		out[i] = runner.Outcome{Spec: r.spec, Result: r.res, Err: r.err, Engines: r.engines, RandUsed: r.randUsed}
	}
	return out
}

// runInputErrors returns the input errors (bad params, a missing
// capability) the runs met, each once (runner.RunInputErrors).
func runInputErrors(s *scenarios.Scenario, runs []seriesRun) []error {
	return runner.RunInputErrors(s, outcomes(runs))
}

// verdict is what the failures of a run mean (runner.Judge), with the
// exit code they give.
type verdict struct {
	failures []string // "series NAME: kind: detail", in series order
	code     int
	message  string
}

func judge(s *scenarios.Scenario, runs []seriesRun) verdict {
	v := runner.Judge(s, outcomes(runs))
	code := exitFailed
	if v.OK {
		code = exitOK
	}
	return verdict{failures: v.Failures, code: code, message: v.Message}
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	return runWith(args, stdout, stderr)
}

// runWith is simrun run with adjust applied to the scenario before its
// series are built (simrun explore's --series and --schedule).
func runWith(args []string, stdout, stderr io.Writer, adjust ...func(*scenarios.Scenario)) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	outDir := fs.String("out", "", "output directory (default results/<scenario-name>)")
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	cpuprofile := fs.String("cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof)")
	memprofile := fs.String("memprofile", "", "write a Go heap profile to this file when the run ends: every allocation's bytes and call stack (go tool pprof -sample_index=alloc_space)")
	jobs := jobsFlag(fs, "`N` series run at once (default GOMAXPROCS); a 128-PE T3D point can take up to a GB of memory")
	shard := fs.String("shard", "", "run only shard I/N of the series (I from 0) and write DIR/shard.json for simrun merge")
	compare := fs.Bool("compare-network", false, "run the scenario on the unit and on the flow network model and print, per series, the largest and median relative difference of its values and the claims' verdicts on both (Markdown); writes no outputs")
	reduceTo := fs.String("reduce", "", "with --compare-network: a YAML mapping merged over the workload params (the scenario's and every series' own), e.g. \"{pes: [16]}\", to compare at a reduced size")
	evprofile := fs.String("eventprofile", "", "write the run's events counted by what each ran (a callback by its function, a process's resumption by why) to this CSV file: series,what,events,share")
	maxEvents := maxEventsFlag(fs)
	maxMemoryFlag(fs)
	inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "run", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("run", pos, 1, stderr) {
		return exitUsage
	}
	// Every flag is checked before anything is written.
	sh, err := parseShard(*shard)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: --shard: %v\n", err)
		return exitUsage
	}
	if *compare {
		return compareNetwork(pos[0], fs, *seed, *reduceTo, *jobs, stdout, stderr)
	}
	s, sp, code := load(pos[0], fs, *seed, *maxEvents, stderr, adjust...)
	if s == nil {
		return code
	}
	for _, w := range runner.FaultWarnings(builtins(), s, sp, *maxEvents) {
		fmt.Fprintln(stderr, w)
	}
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("results", s.Name)
		if *shard != "" {
			dir = filepath.Join("results", s.Name+"-shard-"+strings.ReplaceAll(*shard, "/", "-of-"))
		}
	}
	if err := writable(dir); err != nil {
		fmt.Fprintf(stderr, "simrun run: --out %s: %v\n", dir, err)
		return exitUsage
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	if *cpuprofile != "" {
		stop, code := cpuProfile(*cpuprofile, stderr)
		if stop == nil {
			return code
		}
		defer stop()
	}
	if *memprofile != "" {
		write, code := heapProfile(*memprofile, stderr)
		if write == nil {
			return code
		}
		defer write()
	}
	var ep *eventProfile
	var epFile *os.File
	if *evprofile != "" {
		// Created before the run: a bad path is found at once.
		if ep, epFile, err = watchEvents(*evprofile, sp); err != nil {
			fmt.Fprintf(stderr, "simrun run: --eventprofile: %v\n", err)
			return exitUsage
		}
	}
	start := time.Now()
	runs, err := execute(sh.pick(sp), *jobs, progress, runner.WallLimit(s))
	wall := time.Since(start)
	if epFile != nil {
		if werr := writeEvents(ep, epFile); werr != nil && err == nil {
			fmt.Fprintf(stderr, "simrun run: --eventprofile %s: %v\n", *evprofile, werr)
			return exitFailed
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %s: %v\n", s.Name, err)
		return exitFailed
	}
	if errs := runInputErrors(s, runs); len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return exitUsage
	}
	dropNonFinite(runs)
	if sh.n > 0 {
		return writeShard(dir, pos[0], s, sh, runs, wall, stdout, stderr)
	}
	v := judge(s, runs)
	summary, err := writeOutputs(dir, s, runs, v, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return exitFailed
	}
	io.WriteString(stdout, summary)
	var events uint64
	for _, r := range runs {
		events += r.res.Events
	}
	fmt.Fprintf(stdout, "events: %d in %.2fs of wall time (%.3g events/s)\n", events, wall.Seconds(), float64(events)/max(wall.Seconds(), 1e-9))
	fmt.Fprintf(stdout, "outputs in %s\n", dir)
	return v.code
}

// cpuProfile starts a Go CPU profile into file path and returns the
// function that stops it; on an error it reports to stderr and returns nil
// and the exit code.
func cpuProfile(path string, stderr io.Writer) (func(), int) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return nil, exitUsage
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "simrun run: cpu profile: %v\n", err)
		return nil, exitFailed
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, exitOK
}

// heapProfile creates file path for a Go heap profile and returns the
// function that writes it (when the run ends); on an error it reports to
// stderr and returns nil and the exit code.
func heapProfile(path string, stderr io.Writer) (func(), int) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return nil, exitUsage
	}
	return func() {
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintf(stderr, "simrun run: heap profile: %v\n", err)
		}
		f.Close()
	}, exitOK
}

// load finds the scenario, applies the seed flag, and builds the specs;
// on bad input it prints every problem and returns exit 2.
func load(arg string, fs *flag.FlagSet, seed uint64, maxEvents float64, stderr io.Writer, more ...func(*scenarios.Scenario)) (*scenarios.Scenario, []workloads.Spec, int) {
	adjust := func(s *scenarios.Scenario) {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "seed" {
				s.Seed = seed
			}
		})
		for _, f := range more {
			f(s)
		}
	}
	s, sp, errs := runner.Load(builtins(), arg, runner.LoadOptions{Adjust: adjust, MaxEvents: maxEvents, MaxInputBytes: inputfile.FromFlags(fs), MaxMemory: memoryFromFlags(fs)})
	if len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return nil, nil, exitUsage
	}
	return s, sp, exitOK
}

// writable creates dir if needed and checks that files can be written in
// it, before anything runs: an output directory that cannot be written
// is bad input (exit 2), found in a second rather than after the run.
func writable(dir string) error {
	if err := mkdir(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".simrun-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in the output directory: %w", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// mkdir creates dir for outputs.
func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the output directory: %w", err)
	}
	return nil
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
)

// defaultWallSeconds bounds each engine's wall-clock time when the scenario
// sets no limit, so that no run hangs.
const defaultWallSeconds = 600

func secondsToDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// seriesRun is one series' spec and what running it gave.
type seriesRun struct {
	spec workloads.Spec
	res  workloads.Result
	err  error
	// engines counts the engines the workload created, randUsed says
	// whether any asked for its random generator (sim.ReportRandUse).
	engines  *atomic.Int64
	randUsed *atomic.Bool
}

// seedIndependent reports whether no engine of any run asked for a random
// number (and there was at least one engine): the results are the same
// for every seed.
func seedIndependent(runs []seriesRun) bool {
	for _, r := range runs {
		if r.engines == nil || r.engines.Load() == 0 || r.randUsed.Load() {
			return false
		}
	}
	return len(runs) > 0
}

// execute runs every spec, at most jobs simulations at a time in parallel
// goroutines (series, and the sweep points of a series that has free
// tokens: workloads.Spec.Points; jobs <= 0: GOMAXPROCS), and returns the
// outcomes in spec order, so that the outputs do not depend on jobs. progress (if not
// nil) gets one line per finished series and the workloads' own progress
// lines.
func execute(specs []workloads.Spec, jobs int, progress io.Writer) []seriesRun {
	out := make([]seriesRun, len(specs))
	var mu sync.Mutex
	say := func(format string, args ...any) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(progress, format, args...)
	}
	workers := jobs
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	pool := workloads.NewPool(workers)
	var wg sync.WaitGroup
	n := len(specs)
	for i, sp := range specs {
		sp.Progress = func(msg string) {
			// Workloads may name the series in their lines: once is enough.
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, "series "+sp.Series+": "), sp.Series+": ")
			say("simrun: series %d/%d %s: %s\n", i+1, n, sp.Series, msg)
		}
		out[i].engines, out[i].randUsed = new(atomic.Int64), new(atomic.Bool)
		observe := sp.Observe
		sp.Observe = func(e *sim.Engine) {
			out[i].engines.Add(1)
			e.ReportRandUse(out[i].randUsed)
			if observe != nil {
				observe(e)
			}
		}
		out[i].spec = sp
		if workers > 1 {
			sp.Pool = pool
		}
		wg.Add(1)
		pool.Acquire()
		go func() {
			defer wg.Done()
			defer pool.Release()
			res, err := runSeries(sp)
			out[i].res, out[i].err = res, err
			status := "done"
			if err != nil {
				status = "failed: " + firstLine(err.Error())
			} else if bad := nonFinite(res.Rows); bad > 0 {
				status = fmt.Sprintf("%d non-finite result(s)", bad)
			} else if len(res.Failures) > 0 {
				status = fmt.Sprintf("%d failure(s)", len(res.Failures))
			}
			say("simrun: series %d/%d %s: %s (%d rows, %d events, %v simulated)\n", i+1, n, sp.Series, status, len(res.Rows), res.Events, res.SimTime)
		}()
	}
	wg.Wait()
	return out
}

// runSeries runs one spec, turning a panic in model code into an error.
// Errors are returned as the workload gave them: the series is named when
// they are reported (seriesError), once.
func runSeries(sp workloads.Spec) (res workloads.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (a bug, please report it): %v", r)
		}
	}()
	return runners()[sp.Workload.Name](sp)
}

// NonFinite is the failure kind of a result row whose value or x is NaN or
// infinite: a bug in a model or workload, reported instead of written.
const NonFinite = "non-finite result"

func nonFinite(rows []report.Row) int {
	n := 0
	for _, r := range rows {
		if !isFinite(r.Value) || !isFinite(r.X) {
			n++
		}
	}
	return n
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// dropNonFinite removes every row whose value or x is not finite from the
// runs' results and reports it as a failure naming the series, metric and
// x, so that outputs hold only numbers (JSON has no Inf or NaN).
func dropNonFinite(runs []seriesRun) {
	for i := range runs {
		res := &runs[i].res
		if nonFinite(res.Rows) == 0 {
			continue
		}
		kept := res.Rows[:0:0]
		for _, r := range res.Rows {
			if isFinite(r.Value) && isFinite(r.X) {
				kept = append(kept, r)
				continue
			}
			res.Failures = append(res.Failures, workloads.Failure{Kind: NonFinite,
				Detail: fmt.Sprintf("metric %s at %s=%g is %g %s (a model or workload bug; the row is not written)", r.Metric, r.XName, r.X, r.Value, r.Unit)})
		}
		res.Rows = kept
	}
}

// runInputErrors returns the input errors (bad params, a missing
// capability) the runs met, each once; see inputErrors.
func runInputErrors(s *scenarios.Scenario, runs []seriesRun) []error {
	var errs []error
	for _, r := range runs {
		if r.err == nil || !inputError(r.err) {
			continue
		}
		var se *strictyaml.Error
		if errors.As(r.err, &se) { // names file, line and field already
			errs = append(errs, r.err)
		} else {
			errs = append(errs, errors.New(seriesError(r.spec.Series, r.err)))
		}
	}
	return inputErrors(s, errors.Join(errs...))
}

// failureKind classifies a run error.
func failureKind(err error) string {
	if k, ok := shardErrorKind(err); ok {
		return k
	}
	if k, ok := workloads.StuckKind(err); ok {
		return k
	}
	return "error"
}

// failureLine words every failure of a run the same way, whether the
// workload reported it or the engine stopped the run:
// "series NAME: KIND: DETAIL" (a detail repeating the series is trimmed).
func failureLine(series, kind, detail string) string {
	detail = strings.TrimPrefix(detail, "series "+series+": ")
	detail = strings.TrimPrefix(detail, series+": ")
	return fmt.Sprintf("series %s: %s: %s", series, kind, detail)
}

// verdict is what the failures of a run mean, given what the scenario
// expects.
type verdict struct {
	failures []string // "series NAME: kind: detail", in series order
	kinds    map[string]bool
	code     int
	message  string
}

func judge(s *scenarios.Scenario, runs []seriesRun) verdict {
	v := verdict{kinds: map[string]bool{}}
	for _, r := range runs {
		for _, f := range r.res.Failures {
			v.kinds[f.Kind] = true
			v.failures = append(v.failures, failureLine(r.spec.Series, f.Kind, f.Detail))
		}
		if r.err != nil {
			k := failureKind(r.err)
			v.kinds[k] = true
			v.failures = append(v.failures, failureLine(r.spec.Series, k, r.err.Error()))
		}
	}
	switch {
	case s.Expect == nil && len(v.kinds) == 0:
		v.code, v.message = exitOK, "ok"
	case s.Expect == nil:
		v.code, v.message = exitFailed, fmt.Sprintf("FAILED: %d failure(s), see above", len(v.failures))
	case v.kinds[s.Expect.Failure] && len(v.kinds) == 1:
		v.code, v.message = exitOK, fmt.Sprintf("expected failure: %s — %s", s.Expect.Failure, strings.TrimSpace(s.Expect.Why))
	case v.kinds[s.Expect.Failure]:
		v.code, v.message = exitFailed, fmt.Sprintf("FAILED: the expected %s happened, but so did other failures", s.Expect.Failure)
	default:
		v.code, v.message = exitFailed, fmt.Sprintf("FAILED: the scenario expects a %s (%s), which did not happen", s.Expect.Failure, strings.TrimSpace(s.Expect.Why))
	}
	return v
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	outDir := fs.String("out", "", "output directory (default results/<scenario-name>)")
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	cpuprofile := fs.String("cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof)")
	memprofile := fs.String("memprofile", "", "write a Go heap profile to this file when the run ends: every allocation's bytes and call stack (go tool pprof -sample_index=alloc_space)")
	jobs := fs.Int("j", 0, "series run at once (default GOMAXPROCS); a 128-PE T3D point can take up to a GB of memory")
	shard := fs.String("shard", "", "run only shard I/N of the series (I from 0) and write DIR/shard.json for simrun merge")
	pos, code, ok := parseFlags(fs, "run", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("run", pos, 1, stderr) {
		return exitUsage
	}
	s, sp, code := load(pos[0], fs, *seed, stderr)
	if s == nil {
		return code
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
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "simrun run: cpu profile: %v\n", err)
			return exitFailed
		}
		defer pprof.StopCPUProfile()
	}
	sh, err := parseShard(*shard)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: --shard: %v\n", err)
		return exitUsage
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: %v\n", err)
			return exitUsage
		}
		defer func() {
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintf(stderr, "simrun run: heap profile: %v\n", err)
			}
			f.Close()
		}()
	}
	start := time.Now()
	runs := execute(sh.pick(sp), *jobs, progress)
	wall := time.Since(start)
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

// load finds the scenario, applies the seed flag, and builds the specs;
// on bad input it prints every problem and returns exit 2.
func load(arg string, fs *flag.FlagSet, seed uint64, stderr io.Writer) (*scenarios.Scenario, []workloads.Spec, int) {
	adjust := func(s *scenarios.Scenario) {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "seed" {
				s.Seed = seed
			}
		})
	}
	s, sp, errs := loadAll(arg, adjust, defaultWallSeconds)
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

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

// defaultWallSeconds bounds a run's wall-clock time when the scenario sets
// no limits.max_wall_seconds, so that no run hangs: an hour, since it
// bounds a whole run (all series and points) on a machine that may be
// shared, and abandons the run when it fires.
const defaultWallSeconds = 3600

func secondsToDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// wallLimit is the watchdog of a run of s: limits.max_wall_seconds, or
// defaultWallSeconds. It never decides a result: engines are bounded only
// in events and simulated time (specs), which are the same on every
// machine; when the watchdog fires the whole run is abandoned
// (execute returns a *wallError) and nothing is written.
func wallLimit(s *scenarios.Scenario) watchdog {
	if w := s.Limits.MaxWallSeconds; w > 0 {
		return watchdog{limit: secondsToDuration(w), seconds: w, set: true}
	}
	return watchdog{limit: secondsToDuration(defaultWallSeconds), seconds: defaultWallSeconds}
}

// watchdog is a run's wall-clock bound (zero limit: none).
type watchdog struct {
	limit   time.Duration
	seconds float64
	set     bool // from the scenario (else the default)
}

// wallError is a run abandoned by its watchdog. It names what was running
// and what to change; it is never turned into a row or a failure of the
// results, which would then depend on the machine's load.
type wallError struct {
	scenario string // in a run of many (simrun suite)
	w        watchdog
	running  []string // "series S (last finished point: ...)", in series order
}

func (e *wallError) Error() string {
	what := "the default wall-time limit"
	knob := "set limits.max_wall_seconds"
	if e.w.set {
		what, knob = "the wall-time limit (limits.max_wall_seconds)", "raise limits.max_wall_seconds"
	}
	at := "no series running"
	if len(e.running) > 0 {
		at = strings.Join(e.running, ", ")
	}
	if e.scenario != "" {
		what = e.scenario + ": " + what
	}
	return fmt.Sprintf("%s of %s s reached at %s; the run was abandoned and nothing was written (a wall-clock limit never decides a result); %s or run with fewer -j",
		what, report.FormatFloat(e.w.seconds), at, knob)
}

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
// lines. If the run takes longer than w, it returns a *wallError at once
// (see executeGroups).
func execute(specs []workloads.Spec, jobs int, progress io.Writer, w watchdog) ([]seriesRun, error) {
	runs, err := executeGroups([]group{{specs: specs, w: w}}, jobs, progress)
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// group is the series of one scenario of a run (simrun suite runs many).
type group struct {
	name  string // the scenario, in progress lines and the watchdog's message ("": a run of one scenario)
	specs []workloads.Spec
	w     watchdog
	// order, if not nil, is the order in which the series start (indices
	// into specs); results stay in spec order.
	order []int
}

// task is one series of one group.
type task struct{ g, i int }

// executeGroups runs the series of every group on one pool of jobs
// tokens, the groups in order, each group's series in its order, and
// returns each group's outcomes in spec order. A group's watchdog starts
// when its first series starts; if it fires before the group's last
// series ends, executeGroups returns a *wallError at once naming the
// series still running (their goroutines are left to the process's exit:
// an engine cannot be stopped from another goroutine).
func executeGroups(groups []group, jobs int, progress io.Writer) ([][]seriesRun, error) {
	var tasks []task
	for g, gr := range groups {
		if gr.order == nil {
			for i := range gr.specs {
				tasks = append(tasks, task{g, i})
			}
			continue
		}
		for _, i := range gr.order {
			tasks = append(tasks, task{g, i})
		}
	}
	return runTasks(groups, tasks, jobs, progress)
}

// runTasks is executeGroups with the tasks in the order they start.
func runTasks(groups []group, tasks []task, jobs int, progress io.Writer) ([][]seriesRun, error) {
	out := make([][]seriesRun, len(groups))
	left := make([]int, len(groups)) // series of the group not finished
	started := make([]bool, len(groups))
	for g := range groups {
		out[g] = make([]seriesRun, len(groups[g].specs))
		left[g] = len(groups[g].specs)
	}
	var mu sync.Mutex // guards progress, left, started, running, last, timers
	say := func(format string, args ...any) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(progress, format, args...)
	}
	running := map[task]bool{}
	last := map[task]string{} // the task's last progress line
	var timers []*time.Timer
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, t := range timers {
			t.Stop()
		}
	}()
	fired := make(chan int, len(groups))
	workers := jobs
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	pool := workloads.NewPool(workers)
	var wg sync.WaitGroup
	start := func(t task) workloads.Spec {
		gr := groups[t.g]
		sp := gr.specs[t.i]
		n := len(gr.specs)
		prefix := "simrun:"
		if gr.name != "" {
			prefix += " " + gr.name
		}
		sp.Progress = func(msg string) {
			// Workloads may name the series in their lines: once is enough.
			msg = strings.TrimPrefix(strings.TrimPrefix(msg, "series "+sp.Series+": "), sp.Series+": ")
			mu.Lock()
			last[t] = msg
			mu.Unlock()
			say("%s series %d/%d %s: %s\n", prefix, t.i+1, n, sp.Series, msg)
		}
		r := &out[t.g][t.i]
		r.engines, r.randUsed = new(atomic.Int64), new(atomic.Bool)
		observe := sp.Observe
		sp.Observe = func(e *sim.Engine) {
			r.engines.Add(1)
			e.ReportRandUse(r.randUsed)
			if observe != nil {
				observe(e)
			}
		}
		r.spec = sp
		if workers > 1 {
			sp.Pool = pool
		}
		mu.Lock()
		running[t] = true
		if !started[t.g] {
			started[t.g] = true
			if gr.w.limit > 0 {
				g := t.g
				timers = append(timers, time.AfterFunc(gr.w.limit, func() { fired <- g }))
			}
		}
		mu.Unlock()
		return sp
	}
	finish := func(t task, res workloads.Result, err error) {
		sp := groups[t.g].specs[t.i]
		mu.Lock()
		delete(running, t)
		left[t.g]--
		mu.Unlock()
		out[t.g][t.i].res, out[t.g][t.i].err = res, err
		status := "done"
		if err != nil {
			status = "failed: " + firstLine(err.Error())
		} else if bad := nonFinite(res.Rows); bad > 0 {
			status = fmt.Sprintf("%d non-finite result(s)", bad)
		} else if len(res.Failures) > 0 {
			status = fmt.Sprintf("%d failure(s)", len(res.Failures))
		}
		prefix := "simrun:"
		if name := groups[t.g].name; name != "" {
			prefix += " " + name
		}
		say("%s series %d/%d %s: %s (%d rows, %d events, %v simulated)\n", prefix, t.i+1, len(groups[t.g].specs), sp.Series, status, len(res.Rows), res.Events, res.SimTime)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, t := range tasks {
			pool.Acquire()
			sp := start(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer pool.Release()
				res, err := runSeries(sp)
				finish(t, res, err)
			}()
		}
		wg.Wait()
	}()
	for {
		select {
		case <-done:
			return out, nil
		case g := <-fired:
			mu.Lock()
			over := left[g] > 0
			mu.Unlock()
			if over {
				return nil, wallAbort(groups, g, tasks, &mu, running, last)
			}
		}
	}
}

// wallAbort is the error of group g's watchdog: what is still running.
func wallAbort(groups []group, g int, tasks []task, mu *sync.Mutex, running map[task]bool, last map[task]string) error {
	mu.Lock()
	defer mu.Unlock()
	e := &wallError{scenario: groups[g].name, w: groups[g].w}
	for _, t := range tasks {
		if t.g != g || !running[t] {
			continue
		}
		at := "series " + groups[g].specs[t.i].Series
		if l, ok := last[t]; ok {
			at += fmt.Sprintf(" (last finished point: %s)", l)
		} else {
			at += " (no point finished yet)"
		}
		e.running = append(e.running, at)
	}
	return e
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
	if sp.Run == nil {
		return res, fmt.Errorf("internal error (a bug, please report it): series %s: workload %q not resolved", sp.Series, sp.Workload.Name)
	}
	return sp.Run(sp)
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
	evprofile := fs.String("eventprofile", "", "write the run's events counted by what each ran (a callback by its function, a process's resumption by why) to this CSV file: series,what,events,share")
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
	var ep *eventProfile
	var epFile *os.File
	if *evprofile != "" {
		f, err := os.Create(*evprofile) // before the run: a bad path is found at once
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: --eventprofile: %v\n", err)
			return exitUsage
		}
		epFile = f
		ep = &eventProfile{}
		ep.watch(sp)
	}
	start := time.Now()
	runs, err := execute(sh.pick(sp), *jobs, progress, wallLimit(s))
	wall := time.Since(start)
	if epFile != nil {
		werr := ep.write(epFile)
		if cerr := epFile.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil && err == nil {
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
	s, sp, errs := loadAll(arg, adjust)
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

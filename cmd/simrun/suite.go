package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// suiteScenario is one scenario of simrun suite, loaded and resolved.
type suiteScenario struct {
	name string
	s    *scenarios.Scenario
	sp   []workloads.Spec
}

// cost orders the scenarios of a suite, largest first: the declared cost
// (cost.wall_seconds), else the number of series (each at least a
// simulation), so that the long ones start first and the short ones fill
// the other workers' gaps.
func (x suiteScenario) cost() float64 {
	if c := x.s.Cost.WallSeconds; c > 0 {
		return c
	}
	return float64(len(x.sp)) * 1e-3
}

// builtinSelection returns the names of the built-in scenarios that match
// the optional pattern pos[0] (the only argument) and not the --skip
// expression, for simrun cmd. On a bad argument or a failure to list it
// reports to stderr and returns the exit code and false.
func builtinSelection(cmd string, pos []string, skip string, stderr io.Writer) ([]string, int, bool) {
	if len(pos) > 1 {
		wantArgs(cmd, pos, 1, stderr)
		return nil, exitUsage, false
	}
	var only, skipRE *regexp.Regexp
	var err error
	if len(pos) == 1 {
		if only, err = regexp.Compile(pos[0]); err != nil {
			fmt.Fprintf(stderr, "simrun %s: scenario pattern: %v\n", cmd, err)
			return nil, exitUsage, false
		}
	}
	if skip != "" {
		if skipRE, err = regexp.Compile(skip); err != nil {
			fmt.Fprintf(stderr, "simrun %s: --skip: %v\n", cmd, err)
			return nil, exitUsage, false
		}
	}
	names, err := scenarios.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun %s: %v\n", cmd, err)
		return nil, exitFailed, false
	}
	var sel []string
	for _, name := range names {
		if (only == nil || only.MatchString(name)) && (skipRE == nil || !skipRE.MatchString(name)) {
			sel = append(sel, name)
		}
	}
	return sel, exitOK, true
}

func cmdSuite(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	outDir := fs.String("out", "results", "directory for the outputs: DIR/<scenario>/ for each")
	jobs := fs.Int("j", 0, "simulations run at once, over all scenarios (default GOMAXPROCS)")
	skip := fs.String("skip", "", "skip the scenarios whose name matches this regular expression")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	pos, code, ok := parseFlags(fs, "suite", args, stdout, stderr)
	if !ok {
		return code
	}
	names, code, ok := builtinSelection("suite", pos, *skip, stderr)
	if !ok {
		return code
	}
	var all []suiteScenario
	bad := false
	for _, name := range names {
		s, sp, errs := loadAll(name, nil)
		if len(errs) > 0 {
			io.WriteString(stderr, joinLines(errs))
			bad = true
			continue
		}
		if err := writable(filepath.Join(*outDir, s.Name)); err != nil {
			fmt.Fprintf(stderr, "simrun suite: --out %s: %v\n", *outDir, err)
			return exitUsage
		}
		all = append(all, suiteScenario{name: name, s: s, sp: sp})
	}
	if bad {
		return exitUsage
	}
	if len(all) == 0 { // as simrun claims: nothing to run is not a failure
		fmt.Fprintf(stderr, "simrun suite: no built-in scenario matches\n")
		return exitOK
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	start := time.Now()
	cpu0 := cpuSeconds()
	results, err := runSuite(all, *jobs, progress)
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintf(stderr, "simrun suite: %v\n", err)
		return exitFailed
	}
	code = exitOK
	var events uint64
	for k, x := range all {
		runs := results[k]
		if errs := runInputErrors(x.s, runs); len(errs) > 0 {
			io.WriteString(stderr, joinLines(errs))
			code = max(code, exitUsage)
			continue
		}
		dropNonFinite(runs)
		v := judge(x.s, runs)
		dir := filepath.Join(*outDir, x.s.Name)
		if _, err := writeOutputs(dir, x.s, runs, v, stderr); err != nil {
			fmt.Fprintf(stderr, "simrun suite: %s: %v\n", x.name, err)
			code = max(code, exitFailed)
			continue
		}
		var ev uint64
		rows := 0
		for _, r := range runs {
			ev += r.res.Events
			rows += len(r.res.Rows)
		}
		events += ev
		for _, f := range v.failures {
			if v.code != exitOK {
				fmt.Fprintf(stdout, "  %s\n", f)
			}
		}
		verdict := v.message
		if v.code == exitOK && x.s.Expect != nil {
			verdict = "expected failure: " + x.s.Expect.Failure
		}
		fmt.Fprintf(stdout, "%-27s %4d rows %12d events  %s\n", x.name, rows, ev, verdict)
		code = max(code, v.code)
	}
	fmt.Fprintf(stdout, "suite: %d scenarios, %d events in %.2fs of wall time (%.3g events/s)", len(all), events, wall.Seconds(), float64(events)/max(wall.Seconds(), 1e-9))
	if c := cpuSeconds(); c >= 0 && cpu0 >= 0 {
		fmt.Fprintf(stdout, ", %.2fs of CPU time", c-cpu0)
	}
	fmt.Fprintf(stdout, "\noutputs in %s/<scenario>\n", *outDir)
	return code
}

// runSuite runs every series of every scenario on one pool of jobs
// workers, the scenarios largest first (suiteScenario.cost), and returns
// each scenario's outcomes in series order: the same as simrun run gives
// it alone, whatever the order and the parallelism.
func runSuite(all []suiteScenario, jobs int, progress io.Writer) ([][]seriesRun, error) {
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, cb := all[a].cost(), all[b].cost()
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return 0
	})
	groups := make([]group, len(all))
	for k, i := range order {
		groups[k] = group{name: all[i].name, specs: all[i].sp, w: wallLimit(all[i].s)}
	}
	runs, err := executeGroups(groups, jobs, progress)
	if err != nil {
		return nil, err
	}
	out := make([][]seriesRun, len(all))
	for k, i := range order {
		out[i] = runs[k]
	}
	return out, nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"

	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
)

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
	jobs := jobsFlag(fs, "`N` simulations run at once, over all scenarios (default GOMAXPROCS)")
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
	var all []runner.Scenario
	bad := false
	for _, name := range names {
		s, sp, errs := runner.Load(builtins(), name, runner.LoadOptions{})
		if len(errs) > 0 {
			io.WriteString(stderr, joinLines(errs))
			bad = true
			continue
		}
		if err := writable(filepath.Join(*outDir, s.Name)); err != nil {
			fmt.Fprintf(stderr, "simrun suite: --out %s: %v\n", *outDir, err)
			return exitUsage
		}
		all = append(all, runner.Scenario{Name: name, Scenario: s, Specs: sp})
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
		if errs := runInputErrors(x.Scenario, runs); len(errs) > 0 {
			io.WriteString(stderr, joinLines(errs))
			code = max(code, exitUsage)
			continue
		}
		dropNonFinite(runs)
		v := judge(x.Scenario, runs)
		dir := filepath.Join(*outDir, x.Scenario.Name)
		if _, err := writeOutputs(dir, x.Scenario, runs, v, stderr); err != nil {
			fmt.Fprintf(stderr, "simrun suite: %s: %v\n", x.Name, err)
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
		if v.code == exitOK && x.Scenario.Expect != nil {
			verdict = "expected failure: " + x.Scenario.Expect.Failure
		}
		fmt.Fprintf(stdout, "%-27s %4d rows %12d events  %s\n", x.Name, rows, ev, verdict)
		code = max(code, v.code)
	}
	fmt.Fprintf(stdout, "suite: %d scenarios, %d events in %.2fs of wall time (%.3g events/s)", len(all), events, wall.Seconds(), float64(events)/max(wall.Seconds(), 1e-9))
	if c := cpuSeconds(); c >= 0 && cpu0 >= 0 {
		fmt.Fprintf(stdout, ", %.2fs of CPU time", c-cpu0)
	}
	fmt.Fprintf(stdout, "\noutputs in %s/<scenario>\n", *outDir)
	return code
}

// runSuite runs the scenarios on one pool of jobs workers, the largest
// first (runner.Suite), and returns each one's outcomes in series order.
func runSuite(all []runner.Scenario, jobs int, progress io.Writer) ([][]seriesRun, error) {
	out, err := runner.Suite(all, jobs, progress)
	if err != nil {
		return nil, err
	}
	runs := make([][]seriesRun, len(out))
	for i, o := range out {
		runs[i] = seriesRuns(o)
	}
	return runs, nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
)

// The largest declared cost (scenarios.Cost) of a scenario that simrun
// claims --fast runs: the 128-PE T3D figures and ScaMPI's Table 1.2 take
// 6 s to over a minute each, the rest together a few seconds.
const (
	fastWallSeconds = 5
	fastMemoryGB    = 2
)

// loadClaims loads and checks the built-in scenario name for simrun
// claims. err is bad input.
func loadClaims(name string) (runner.Scenario, error) {
	s, err := scenarios.LoadBuiltin(name)
	if err != nil {
		return runner.Scenario{}, err
	}
	reg := builtins()
	sp, err := runner.Specs(reg, s)
	if err == nil {
		err = runner.Check(reg, s, sp)
	}
	if err != nil {
		return runner.Scenario{}, err
	}
	return runner.Scenario{Name: name, Scenario: s, Specs: sp}, nil
}

// slow reports why a scenario is too slow for simrun claims --fast, or "".
func slow(s *scenarios.Scenario) string {
	if s.Cost.WallSeconds > fastWallSeconds || s.Cost.MemoryGB > fastMemoryGB {
		return fmt.Sprintf("%s (~%gs, ~%g GB)", s.Name, s.Cost.WallSeconds, s.Cost.MemoryGB)
	}
	return ""
}

func cmdClaims(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("claims", flag.ContinueOnError)
	fast := fs.Bool("fast", false, fmt.Sprintf("skip scenarios whose declared cost exceeds %d s or %d GB", fastWallSeconds, fastMemoryGB))
	skip := fs.String("skip", "", "skip the scenarios whose name matches this regular expression")
	failing := fs.Bool("failing", false, "print only the claims that do not hold")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	pos, code, ok := parseFlags(fs, "claims", args, stdout, stderr)
	if !ok {
		return code
	}
	names, code, ok := builtinSelection("claims", pos, *skip, stderr)
	if !ok {
		return code
	}
	code = exitOK
	var total, holding, training, scen int
	var skipped []string
	var sel []runner.Scenario
	for _, name := range names {
		s, err := scenarios.LoadBuiltin(name)
		if err != nil {
			fmt.Fprintf(stderr, "simrun claims: %v\n", err)
			code = exitUsage
			continue
		}
		if len(s.Claims) == 0 {
			continue
		}
		if why := slow(s); *fast && why != "" {
			skipped = append(skipped, why)
			continue
		}
		x, err := loadClaims(name)
		if err != nil {
			fmt.Fprintf(stderr, "simrun claims: %v\n", err)
			code = exitUsage
			continue
		}
		sel = append(sel, x)
	}
	// Every selected scenario on one pool, the largest first; printed in
	// name order.
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	all, err := runner.SuiteClaims(sel, 0, progress)
	if err != nil { // a watchdog abandoned the run: so is the command
		fmt.Fprintf(stderr, "simrun claims: %v\n", err)
		return exitFailed
	}
	for i, sc := range all {
		name := sel[i].Name
		if sc.Err != nil {
			fmt.Fprintf(stderr, "simrun claims: %v\n", sc.Err)
			code = exitUsage
			continue
		}
		scen++
		var show []report.ClaimResult
		for _, r := range sc.Results {
			total++
			switch {
			case r.Training:
				training++
			case r.Holds:
				holding++
			}
			if !*failing || !r.Holds {
				show = append(show, r)
			}
		}
		fmt.Fprintf(stdout, "%s: %s\n", name, claimCount(sc.Results))
		if !sc.Verdict.OK {
			fmt.Fprintf(stdout, "  run: %s\n", sc.Verdict.Message)
			for _, f := range sc.Verdict.Failures {
				fmt.Fprintf(stdout, "  %s\n", firstLine(f))
			}
			code = max(code, exitFailed)
		}
		var b strings.Builder
		report.WriteClaims(&b, show)
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if l != "" {
				fmt.Fprintf(stdout, "  %s\n", l)
			}
		}
	}
	fmt.Fprintf(stdout, "%d claims in %d scenarios: %d hold, %d fail, %d training (fitted)\n", total, scen, holding, total-holding-training, training)
	if len(skipped) > 0 {
		fmt.Fprintf(stdout, "skipped (--fast): %s\n", strings.Join(skipped, ", "))
	}
	return code
}

package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim/explore"
	wexplore "github.com/msgsim/msgsim/workloads/explore"
)

// cmdExplore is simrun explore: run a scenario whose workload is explore
// (every schedule of a small multithreaded MPI program, sim/explore), with
// the same outputs as simrun run; the summary's notes hold the counts and
// the shortest failing schedule. With --schedule it replays one schedule
// of one series instead (the workload's schedule parameter).
func cmdExplore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default results/<scenario-name>, or results/<scenario-name>-<series> with --series, -schedule added with --schedule)")
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	schedule := fs.String("schedule", "", "replay this schedule (as a failing exploration prints it) instead of exploring; with several series, name one with --series")
	series := fs.String("series", "", "run only this series")
	maxInput := inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "explore", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("explore", pos, 1, stderr) {
		return exitUsage
	}
	if strings.Trim(*schedule, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		fmt.Fprintf(stderr, "simrun explore: --schedule %q: a schedule is the digits and letters 0-9a-z an exploration prints\n", *schedule)
		return exitUsage
	}
	if len(*schedule) > explore.MaxScheduleLen {
		fmt.Fprintf(stderr, "simrun explore: --schedule: %d characters; a schedule has at most %d choices\n", len(*schedule), explore.MaxScheduleLen)
		return exitUsage
	}
	var adjustErr error
	adjust := func(s *scenarios.Scenario) {
		if *series != "" {
			var keep []scenarios.Series
			var names []string
			for _, sr := range s.Series {
				names = append(names, sr.Name)
				if sr.Name == *series {
					keep = append(keep, sr)
				}
			}
			if keep == nil {
				adjustErr = fmt.Errorf("--series %s: scenario %s has no such series (it has: %s)", *series, s.Name, strings.Join(names, ", "))
				return
			}
			s.Series = keep
		}
		if *schedule == "" {
			return
		}
		if len(s.Series) > 1 {
			var names []string
			for _, sr := range s.Series {
				names = append(names, sr.Name)
			}
			adjustErr = fmt.Errorf("--schedule replays one series' schedule: name it with --series (one of: %s)", strings.Join(names, ", "))
			return
		}
		setParam(&s.Workload, "schedule", *schedule)
		for i := range s.Series {
			if w := s.Series[i].Workload; w != nil && w.HasParams() {
				setParam(w, "schedule", *schedule)
			}
		}
	}
	lfs := flag.NewFlagSet("explore", flag.ContinueOnError)
	inputfile.Flag(lfs)
	lfs.Set(inputfile.FlagName, strconv.FormatInt(*maxInput>>20, 10))
	sc, specs, code := load(pos[0], lfs, 0, -1, stderr, adjust)
	if adjustErr != nil {
		fmt.Fprintf(stderr, "simrun explore: %s: %v\n", pos[0], adjustErr)
		return exitUsage
	}
	if specs == nil {
		return code
	}
	for _, sp := range specs {
		if sp.Workload.Name != wexplore.Name {
			fmt.Fprintf(stderr, "simrun explore: %s: series %s runs workload %s, not %s (simrun run runs it)\n", pos[0], sp.Series, sp.Workload.Name, wexplore.Name)
			return exitUsage
		}
	}
	runArgs := []string{pos[0]}
	switch {
	case *out != "":
		runArgs = append(runArgs, "--out", *out)
	case *series != "":
		// One series (or its replay) goes beside the full run, not over it.
		dir := sc.Name + "-" + unsafeName.ReplaceAllString(*series, "_")
		if *schedule != "" {
			dir += "-schedule"
		}
		runArgs = append(runArgs, "--out", filepath.Join("results", dir))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			runArgs = append(runArgs, "--seed", strconv.FormatUint(*seed, 10))
		}
	})
	if *quiet {
		runArgs = append(runArgs, "--quiet")
	}
	runArgs = append(runArgs, "--"+inputfile.FlagName, strconv.FormatInt(*maxInput>>20, 10))
	return runWith(runArgs, stdout, stderr, adjust)
}

// setParam sets key to value in c's params (a mapping), adding the key
// or the mapping if absent.
func setParam(c *scenarios.Component, key, value string) {
	n := &c.Params
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	}
	if n.Kind != yaml.MappingNode {
		return // not a mapping: the workload's own decoding reports it
	}
	v := yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = &v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: n.Line, Column: n.Column}, &v)
}

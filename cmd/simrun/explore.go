package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/msgsim/msgsim/workloads/explore"
)

// cmdExplore is simrun explore: run a scenario whose workload is explore
// (every schedule of a small multithreaded MPI program, sim/explore), with
// the same outputs as simrun run; the summary's notes hold the counts and
// the shortest failing schedule.
func cmdExplore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.String("out", "", "output directory (default results/<scenario-name>)")
	fs.Uint64("seed", 0, "override the scenario's seed")
	fs.Bool("quiet", false, "no progress lines on stderr")
	pos, code, ok := parseFlags(fs, "explore", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("explore", pos, 1, stderr) {
		return exitUsage
	}
	_, specs, code := load(pos[0], flag.NewFlagSet("explore", flag.ContinueOnError), 0, -1, stderr)
	if specs == nil {
		return code
	}
	for _, sp := range specs {
		if sp.Workload.Name != explore.Name {
			fmt.Fprintf(stderr, "simrun explore: %s: series %s runs workload %s, not %s (simrun run runs it)\n", pos[0], sp.Series, sp.Workload.Name, explore.Name)
			return exitUsage
		}
	}
	return cmdRun(args, stdout, stderr)
}

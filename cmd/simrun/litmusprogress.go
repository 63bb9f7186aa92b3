package main

import (
	"fmt"
	"io"
	"time"

	"github.com/msgsim/msgsim/litmus"
)

// progressEvery is how often a long litmus run says how far it is.
const progressEvery = 2 * time.Second

// litmusProgress returns an Options.Progress that prints "simrun
// litmus: N of M runs (P %), S s" to w every `every` of wall time read
// from now (nothing for a run that ends sooner).
func litmusProgress(w io.Writer, runs int, now func() time.Time, every time.Duration) func(int) {
	start := now()
	next := start.Add(every)
	return func(done int) {
		if t := now(); !t.Before(next) && done < runs {
			fmt.Fprintf(w, "simrun litmus: %d of %d runs (%d %%), %.0f s\n", done, runs, 100*done/runs, t.Sub(start).Seconds())
			next = t.Add(every)
		}
	}
}

// oneStateNote says, for a sampled run on a machine whose every run
// ended in the same final state, that the machine model is
// deterministic where the jitters do not move it, and how to vary it; ""
// otherwise.
func oneStateNote(o *litmus.Outcome, machine string, runs int, opts litmus.Options) string {
	if machine == "" || runs < 2 || len(o.States) != 1 || o.Failed > 0 {
		return ""
	}
	return fmt.Sprintf("simrun litmus: all %d runs ended in one final state: machine %s is a timed model, the same for every run but for "+
		"its seeded jitters (start %.4g, instruction %.4g cycles), none of which changed which store a load sees; to vary it, "+
		"raise --start-jitter-cycles or --op-jitter-cycles, try another --seed or --place (--exhaustive lists every outcome of a --model "+
		"or a one-node machine)",
		runs, machine, opts.StartJitterCycles, opts.OpJitterCycles)
}

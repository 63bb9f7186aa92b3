package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/soak"
	"gopkg.in/yaml.v3"
)

// soakPairing is a machine and a stack (with one of its variants) whose
// ranks offer stacks.Comm.
type soakPairing struct {
	name string // "machine/stack" or "machine/stack{params}"
	open workloads.Opener
}

// soakPairings lists every registered pairing offering message passing.
func soakPairings(reg *registry.Registry) []soakPairing {
	var out []soakPairing
	for _, m := range reg.Machines() {
		for _, st := range reg.Stacks() {
			variants := st.Variants
			if len(variants) == 0 {
				variants = []string{""}
			}
			for _, v := range variants {
				var node *yaml.Node
				if v != "" {
					var doc yaml.Node
					if yaml.Unmarshal([]byte(v), &doc) == nil && len(doc.Content) > 0 {
						node = doc.Content[0]
					}
				}
				open, err := reg.Resolve("", registry.Ref{Name: m.Name}, registry.Ref{Name: st.Name, Params: node})
				if err != nil || open == nil {
					continue
				}
				w, err := open(sim.NewEngine(1), 2)
				if err != nil || !stacks.Offers[stacks.Comm](w) {
					continue
				}
				out = append(out, soakPairing{name: m.Name + "/" + st.Name + v, open: open})
			}
		}
	}
	return out
}

// soakStats are the counts of one pairing.
type soakStats struct {
	runs, messages, delivered int
	events                    uint64
	failures                  map[string]int
	first                     []string // replay lines of the first failures
}

func cmdSoak(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	runs := fs.Int("runs", 1000, "runs in all, spread over the pairings")
	seed := fs.Uint64("seed", 1, "seed of the first run (run i uses seed+i)")
	only := fs.String("only", "", "regexp: the pairings (machine/stack{params}) to soak")
	pos, code, ok := parseFlags(fs, "soak", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("soak", pos, 0, stderr) {
		return exitUsage
	}
	re, err := regexp.Compile(*only)
	if err != nil || *runs < 1 {
		fmt.Fprintf(stderr, "simrun soak: --only: %v; --runs must be at least 1\n", err)
		return exitUsage
	}
	var ps []soakPairing
	for _, p := range soakPairings(registry.Default()) {
		if re.MatchString(p.name) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		fmt.Fprintf(stderr, "simrun soak: no pairing offering message passing matches %q\n", *only)
		return exitUsage
	}
	lim := sim.Limits{MaxEvents: 5_000_000, MaxWall: 20 * time.Second}
	stats := make([]soakStats, len(ps))
	start := time.Now()
	failed := 0
	for i := range *runs {
		k := i % len(ps)
		s := *seed + uint64(i)
		procs := soak.Procs(s)
		o := soak.Run(ps[k].open, s, procs, lim)
		if o.Failure != nil && o.Failure.Kind == "error" && procs > 2 && o.Messages == 0 {
			procs = 2 // the machine cannot hold more ranks
			o = soak.Run(ps[k].open, s, procs, lim)
		}
		st := &stats[k]
		st.runs++
		st.messages += o.Messages
		st.delivered += o.Delivered
		st.events += o.Events
		if o.Failure != nil {
			failed++
			if st.failures == nil {
				st.failures = map[string]int{}
			}
			st.failures[o.Failure.Kind]++
			if len(st.first) < 3 {
				st.first = append(st.first, fmt.Sprintf("  seed %d (%d ranks): %s: %s\n    replay: simrun soak --only '^%s$' --seed %d --runs 1",
					s, procs, o.Failure.Kind, strings.ReplaceAll(o.Failure.Detail, "\n", "\n    "), regexp.QuoteMeta(ps[k].name), s))
			}
		}
	}
	for k, p := range ps {
		st := stats[k]
		status := "ok"
		if len(st.failures) > 0 {
			status = fmt.Sprintf("FAILURES %v", st.failures)
		}
		fmt.Fprintf(stdout, "%-34s %6d runs %7d messages %7d delivered once and intact  %s\n", p.name, st.runs, st.messages, st.delivered, status)
		for _, l := range st.first {
			fmt.Fprintln(stdout, l)
		}
	}
	fmt.Fprintf(stdout, "%d runs on %d pairings in %.1fs: %d failed (loss, duplication, corruption, deadlock, livelock, limit or error)\n",
		*runs, len(ps), time.Since(start).Seconds(), failed)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}

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
	name   string // "machine/stack", "machine/stack{params}" or "machine{faults}/stack"
	open   workloads.Opener
	faults bool // the machine runs under its fault params
}

// soakPairings lists every registered pairing offering message passing:
// each machine with its default params and with each of its fault params
// (registry.Faults: "sci{crc_error_rate: ...}/scampi"), each stack with
// each of its variants.
func soakPairings(reg *registry.Registry) []soakPairing {
	var out []soakPairing
	for _, m := range reg.Machines() {
		for _, mv := range append([]string{""}, m.Faults...) {
			for _, st := range reg.Stacks() {
				variants := st.Variants
				if len(variants) == 0 {
					variants = []string{""}
				}
				for _, v := range variants {
					open, err := reg.Resolve("", registry.Ref{Name: m.Name, Params: yamlNode(mv)}, registry.Ref{Name: st.Name, Params: yamlNode(v)})
					if err != nil || open == nil {
						continue
					}
					w, err := open(sim.NewEngine(1), 2)
					if err != nil || !stacks.Offers[stacks.Comm](w) {
						continue
					}
					out = append(out, soakPairing{name: m.Name + mv + "/" + st.Name + v, open: open, faults: mv != ""})
				}
			}
		}
	}
	return out
}

// yamlNode is the node of the YAML params src, nil for "".
func yamlNode(src string) *yaml.Node {
	var doc yaml.Node
	if src == "" || yaml.Unmarshal([]byte(src), &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
}

// soakStats are the counts of one pairing.
type soakStats struct {
	runs, messages, delivered int
	events                    uint64
	counters                  []string // the machine's counter names (faults injected), if it has any
	counts                    []uint64 // their sums over the runs
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
	for _, p := range soakPairings(builtins()) {
		if re.MatchString(p.name) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		fmt.Fprintf(stderr, "simrun soak: no pairing offering message passing matches %q\n", *only)
		return exitUsage
	}
	// Events only: a limit is reported as a failure of the run, which must
	// not depend on the machine's load.
	lim := sim.Limits{MaxEvents: 5_000_000}
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
		if st.counters == nil {
			st.counters, st.counts = o.Counters, make([]uint64, len(o.Counters))
		}
		for i := range min(len(st.counts), len(o.Counts)) {
			st.counts[i] += o.Counts[i]
		}
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
	width := 0
	for _, p := range ps {
		width = max(width, len(p.name))
	}
	for k, p := range ps {
		st := stats[k]
		status := "ok"
		if len(st.failures) > 0 {
			status = fmt.Sprintf("FAILURES %v", st.failures)
		}
		fmt.Fprintf(stdout, "%-*s %6d runs %7d messages %7d delivered once and intact  %s\n", width, p.name, st.runs, st.messages, st.delivered, status)
		if p.faults && len(st.counters) > 0 { // show that the faults happened
			var cs []string
			for i, n := range st.counters {
				cs = append(cs, fmt.Sprintf("%s %d", n, st.counts[i]))
			}
			fmt.Fprintf(stdout, "  machine counters: %s\n", strings.Join(cs, ", "))
		}
		for _, l := range st.first {
			fmt.Fprintln(stdout, l)
		}
	}
	fmt.Fprintf(stdout, "%d runs on %d pairings in %.1fs: %d failed (loss, duplication, corruption, deadlock, livelock, limit or error)\n",
		*runs, len(ps), time.Since(start).Seconds(), failed)
	fmt.Fprintf(stdout, "seeds %d to %d (run i: seed %d+i on pairing i mod %d); replay one: simrun soak --only 'PAIRING' --seed S --runs 1\n",
		*seed, *seed+uint64(*runs)-1, *seed, len(ps))
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}

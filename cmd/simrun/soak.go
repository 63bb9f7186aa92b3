package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	soakpkg "github.com/msgsim/msgsim/workloads/soak"
	"gopkg.in/yaml.v3"
)

// soakPairing is a machine and a stack (with one of its variants) whose
// ranks offer stacks.Comm.
type soakPairing struct {
	name   string // "machine/stack", "machine/stack{params}" or "machine{faults}/stack"
	open   workloads.Opener
	faults bool // the machine runs under its fault params
	stack  string
	rule   stacks.Progress // the stack's progress rule, which the programs follow
}

// soakSkip is a pairing the soak leaves out, and why.
type soakSkip struct{ name, why string }

// soakPairings lists every registered pairing offering message passing:
// each machine with its default params and with each of its fault params
// (registry.Faults: "sci{crc_error_rate: ...}/scampi"), each stack with
// each of its variants. A stack whose protocol assumes a reliable network
// (stacks.Progress.Reliable) is not run under fault params: those are
// returned as skipped, with the stack's rule.
func soakPairings(reg *registry.Registry) ([]soakPairing, []soakSkip) {
	var out []soakPairing
	var skip []soakSkip
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
					name := m.Name + mv + "/" + st.Name + v
					rule := stacks.ProgressOf(w)
					if mv != "" && rule.Reliable {
						skip = append(skip, soakSkip{name, "the stack assumes a network that lands every write exactly once, which these faults break (" + rule.Source + ")"})
						continue
					}
					out = append(out, soakPairing{name: name, open: open, faults: mv != "", stack: st.Name, rule: rule})
				}
			}
		}
	}
	return out, skip
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
	failures                  map[string]*soakFailure
	first                     []string // details and replay lines of the first failures
}

// soakFailure counts the failures of one kind on one pairing.
type soakFailure struct {
	count int
	seed  uint64 // the first failing run's
	procs int
}

// soakReplay is the command that replays the run of seed on pairing name.
func soakReplay(name string, seed uint64) string {
	return fmt.Sprintf("simrun soak --only '^%s$' --seed %d --runs 1", regexp.QuoteMeta(name), seed)
}

// soakProgress is the wall time between two progress lines of a soak.
const soakProgress = 5 * time.Second

func cmdSoak(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	runs := countFlag(fs, "runs", 1000, 1, "runs", "runs in all, spread over the pairings")
	seed := fs.Uint64("seed", 1, "seed of the first run (run i uses seed+i)")
	only := fs.String("only", "", "regexp: the pairings (machine/stack{params}) to soak")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
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
	all, skipped := soakPairings(builtins())
	var ps []soakPairing
	for _, p := range all {
		if re.MatchString(p.name) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		fmt.Fprintf(stderr, "simrun soak: no pairing offering message passing matches %q\n", *only)
		return exitUsage
	}
	said := map[string]bool{}
	for _, p := range ps {
		if !said[p.stack] {
			said[p.stack] = true
			fmt.Fprintf(stdout, "progress rule of %s: %s (%s)\n", p.stack, p.rule.Rule, p.rule.Source)
		}
	}
	for _, k := range skipped {
		if re.MatchString(k.name) {
			fmt.Fprintf(stdout, "skipped %s: %s\n", k.name, k.why)
		}
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	if soak(ps, *runs, *seed, stdout, progress) > 0 {
		return exitFailed
	}
	return exitOK
}

// soak runs runs programs over the pairings ps (run i: seed+i on pairing i
// mod len(ps)), prints a line per pairing, then one line per pairing and
// failure kind, and returns the number of failed runs. progress (if not
// nil) gets a line every soakProgress of wall time.
func soak(ps []soakPairing, runs int, seed uint64, stdout, progress io.Writer) int {
	// Events only: a limit is reported as a failure of the run, which must
	// not depend on the machine's load.
	lim := sim.Limits{MaxEvents: 5_000_000}
	stats := make([]soakStats, len(ps))
	start := time.Now()
	failed := 0
	said := start
	for i := range runs {
		if progress != nil && time.Since(said) >= soakProgress {
			said = time.Now()
			fmt.Fprintf(progress, "simrun soak: %d of %d runs, %d failed\n", i, runs, failed)
		}
		k := i % len(ps)
		s := seed + uint64(i)
		procs := soakpkg.Procs(s)
		o := soakpkg.Run(ps[k].open, s, procs, lim)
		if o.Failure != nil && o.Failure.Kind == "error" && procs > 2 && o.Messages == 0 {
			procs = 2 // the machine cannot hold more ranks
			o = soakpkg.Run(ps[k].open, s, procs, lim)
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
				st.failures = map[string]*soakFailure{}
			}
			f := st.failures[o.Failure.Kind]
			if f == nil {
				f = &soakFailure{seed: s, procs: procs}
				st.failures[o.Failure.Kind] = f
			}
			f.count++
			if len(st.first) < 3 {
				st.first = append(st.first, fmt.Sprintf("  seed %d (%d ranks): %s: %s\n    replay: %s",
					s, procs, o.Failure.Kind, strings.ReplaceAll(o.Failure.Detail, "\n", "\n    "), soakReplay(ps[k].name, s)))
			}
		}
	}
	width := 0
	for _, p := range ps {
		width = max(width, len(p.name))
	}
	type failLine struct {
		pairing, kind string
		runs          int
		f             *soakFailure
	}
	var fails []failLine
	for k, p := range ps {
		st := stats[k]
		status := "ok"
		if len(st.failures) > 0 {
			var ks []string
			for _, kind := range slices.Sorted(maps.Keys(st.failures)) {
				ks = append(ks, fmt.Sprintf("%s %d", kind, st.failures[kind].count))
				fails = append(fails, failLine{p.name, kind, st.runs, st.failures[kind]})
			}
			status = "FAILED: " + strings.Join(ks, ", ")
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
	if len(fails) > 0 {
		slices.SortFunc(fails, func(a, b failLine) int {
			return cmp.Or(strings.Compare(a.pairing, b.pairing), strings.Compare(a.kind, b.kind))
		})
		fmt.Fprintln(stdout, "failures by pairing and kind (tab-separated: FAIL, pairing, kind, failed runs, runs, first failing seed, its ranks, command that replays it):")
		for _, l := range fails {
			fmt.Fprintf(stdout, "FAIL\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", l.pairing, l.kind, l.f.count, l.runs, l.f.seed, l.f.procs, soakReplay(l.pairing, l.f.seed))
		}
	} else {
		// Said, so that a reader (or a script) looking for the FAIL lines
		// knows there are none rather than that they went missing.
		fmt.Fprintln(stdout, "failures by pairing and kind: none (each failing pairing and kind would have a tab-separated line here)")
	}
	fmt.Fprintf(stdout, "%d runs on %d pairings in %.1fs: %d failed (loss, duplication, corruption, deadlock, livelock, limit or error)\n",
		runs, len(ps), time.Since(start).Seconds(), failed)
	fmt.Fprintf(stdout, "seeds %d to %d (run i: seed %d+i on pairing i mod %d); replay one: simrun soak --only 'PAIRING' --seed S --runs 1\n",
		seed, seed+uint64(runs)-1, seed, len(ps))
	return failed
}

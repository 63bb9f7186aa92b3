// Command simrun runs msgsim scenarios and litmus tests.
//
//	simrun list [--machines] [--stacks] built-in scenarios and their titles
//	                                    (or machines, stacks and capabilities)
//	simrun show NAME                    print a built-in scenario's YAML
//	simrun validate FILE-or-NAME        strict load and check, exit 0 or 2
//	simrun run FILE-or-NAME [--out DIR] [--seed N] [--quiet] [--cpuprofile FILE] [--memprofile FILE] [--eventprofile FILE] [-j N] [--shard I/N]
//	simrun merge [--out DIR] SHARD-DIR... the outputs of a sharded run
//	simrun compare A B [--tolerance R]  two runs point by point (exit 1 if they differ)
//	simrun suite [REGEXP] [--out DIR] [-j N] every built-in scenario, on all cores
//	simrun claims [REGEXP] [--fast] [--skip REGEXP] [--failing]
//	                                    the papers' claims of the built-ins, checked
//	simrun calibrate FILE-or-NAME [--out DIR] [-j N] [--quiet] [--dry-run] (calibrate --check [FILES...], --list)
//	                                    fit a calibration file's parameters, judge them
//	simrun litmus TEST|FILE.litmus --model M [--exhaustive] [--machine NAME [--param KEY=VALUE]] (litmus --list)
//	simrun trace FILE-or-NAME [--out trace.json] [--seed N]
//	simrun report [DIR]                 a static HTML report of results directories
//	simrun soak [--runs N] [--seed S]    random message programs, every delivery checked
//	simrun bench                        engine speed on this machine
//
// Exit status: 0 success (or the failure the scenario expects), 1 a run
// failed (corruption, loss, deadlock, livelock, limit, a NaN or infinite
// result) or an expected failure did not happen, 2 bad input (usage, an
// unknown scenario or test, a scenario, params or model that does not
// validate, a stack needing a capability the machine lacks).
//
// simrun is flag parsing and printing over the library: it imports
// registry/all (every built-in), runner (running series and suites),
// scenarios, report, and the packages whose errors and listings it prints;
// no library package imports it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// gcPercent is the garbage collector's target while the heap a collection
// leaves live is under smallHeap, unless GOGC or GOMEMLIMIT says
// otherwise, and gcPercentLarge from there on (gcSizer switches between
// them after each collection). A small heap is mostly the run's working
// objects (processes, messages, links), and collecting it at 25 % growth
// costs t3d-fig4 about a twelfth of its CPU (123.8 CPU-s and 191 MB peak
// RSS, against 114.4 and 301 MB at 100 %). Most of a big run's
// heap is simulated memory, live and without pointers, so collecting at
// 25 % costs little there and keeps the peak near the live size
// (t3d-fig9: 5.0 -> 3.2 GB peak RSS for about the same CPU time when its
// payloads were copies; with shared payloads, 1.0 -> 0.8 GB at its largest
// point; sci-table1-2: 1.0 GB at 25 %, 1.5 GB at 100 % for the same CPU:
// docs/sharding.md).
const (
	gcPercent      = 100
	gcPercentLarge = 25
	smallHeap      = 256 << 20
)

// percentFor is the GC percent for a heap that a collection left live
// bytes.
func percentFor(live uint64) int {
	if live < smallHeap {
		return gcPercent
	}
	return gcPercentLarge
}

func main() {
	grow, err := growPacing(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "simrun: %v\n", err)
		os.Exit(exitUsage)
	}
	if p, ok := gcPolicy(os.Getenv); ok {
		debug.SetGCPercent(p)
		switch {
		case p != gcPercent: // GOGC and GOMEMLIMIT win
		case grow:
			g := &gcPacer{percent: debug.SetGCPercent, limit: debug.SetMemoryLimit, read: heapNow}
			afterEachGC(g.cycle)
		default:
			g := &gcSizer{percent: debug.SetGCPercent, read: heapNow, cur: p}
			afterEachGC(g.cycle)
		}
	}
	os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPolicy is the GC percent simrun sets, if any: none when GOGC is set
// (the runtime applies it); off (-1) when only GOMEMLIMIT is set, so that
// the limit alone paces the collector (the runtime applies the limit):
// a run given a memory budget collects only as its heap nears it, which
// saves the collections a growing, mostly live heap would pay at 25 %
// (a third of the CPU time of the what-if broadcast, docs/scale.md);
// else gcPercent.
func gcPolicy(getenv func(string) string) (int, bool) {
	switch {
	case getenv("GOGC") != "":
		return 0, false
	case getenv("GOMEMLIMIT") != "":
		return -1, true
	}
	return gcPercent, true
}

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // a run failed, or an expected failure did not happen
	exitUsage  = 2 // bad input
)

// command is one subcommand.
type command struct {
	name    string
	args    string // synopsis after the name
	summary string
	help    string // long help with an example
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"list", "[--machines] [--stacks]", "list the built-in scenarios with their titles", `With --machines: every registered machine, the hardware verbs it offers
(remote-write, remote-read, shared-segments, ...; checked on a small
instance) and those it lacks. With --stacks: every registered stack, the
verbs it needs, and on each machine (one line per pairing and variant: "on
MACHINE [params]: offers ..." or ": missing VERB ...") what its ranks offer
(comm, one-sided, bcast, ...) or which verb is missing.
Example:
  simrun list
  simrun list --machines --stacks`, cmdList},
		{"params", "[MACHINE|STACK|WORKLOAD]", "list a machine's, stack's or workload's parameters: default, range, unit, source", `Without a name: every machine, stack and workload that has parameters.
With one: each parameter a scenario may set under machine.params,
stack.params or workload.params, with its default, its plausible range and
unit (values outside it are refused by validate) and its documentation,
which says where the default comes from: a sentence of the paper, a
published hardware figure, or what it was calibrated to.
Example:
  simrun params t3d
  simrun params pingpong`, cmdParams},
		{"show", "NAME", "print the YAML of a built-in scenario", `Copy a built-in to start your own scenario:
  simrun show litmus-mp > mine.yaml`, cmdShow},
		{"validate", "FILE-or-NAME [--max-events N]", "check a scenario strictly (exit 0 if valid, 2 if not)", `Every problem of the file is listed at once (up to 50), in file order, each
with file:line:column, the field's full path (series[2].machine.params.x)
and what was expected: types and unknown fields, then what is checked after
decoding (ranges of machine, stack and workload params, pairings, memory
fits, workload names, name and title lengths), then each series' size: its
workload estimates its events (messages times their events, to within a
factor of ten or so) and a series above --max-events (default 1e10, half an
hour of CPU) is refused at the param that drives it. The ok line gives the
scenario's estimate. A misspelt top-level param
is reported once at its own field, not again for every series that
inherits it. run and trace do the same checks before running: a file that
validates does not fail on its input later.
Example:
  simrun validate mine.yaml`, cmdValidate},
		{"run", "FILE-or-NAME [--out DIR] [--seed N] [--quiet] [--cpuprofile FILE] [--memprofile FILE] [--eventprofile FILE] [-j N] [--shard I/N] [--max-events N]", "run a scenario and write results, figures and a summary", `Writes DIR/results.csv (series,x_name,x,metric,value,unit), DIR/results.json
(scenario, seed, rows, references, comparisons, failures, notes), one PNG and
SVG per figure, and DIR/summary.txt (also printed). Default DIR:
results/<scenario-name>. Same scenario and seed: byte-identical files.
Exit 1 if a run fails (corruption, loss, deadlock, livelock, limit, a NaN
or infinite result) unless the scenario's expect.failure says so, or if an
expected failure is missing; exit 2 on bad input, before anything is written.
Series run in parallel, -j at a time (default: GOMAXPROCS; a 128-PE T3D
point can take up to a GB); outputs do not depend on -j. --shard I/N runs only the
series I, I+N, ... and writes DIR/shard.json; simrun merge turns the N shards
into the outputs of a run without shards (docs/sharding.md: Slurm, Kubernetes).
--eventprofile FILE counts the run's events by what each ran and writes
them as CSV (series,what,events,share; the series "(all)" first): a
callback by its Go function (sim.(*Proc).step: a step of a SleepSteps),
a process's resumption by why (its Sleep ended, or it was woken),
and the Sleeps and steps that moved time forward in place. The counts sum
to the events the summary reports; the outputs do not change.
Example:
  simrun run litmus-mp
  simrun run mine.yaml --out /tmp/out --seed 3
  simrun run t3d-fig5 --shard 0/2 --out /tmp/s0
  simrun run t3d-table2 --eventprofile /tmp/events.csv`, cmdRun},
		{"suite", "[REGEXP] [--out DIR] [-j N] [--skip REGEXP] [--quiet]", "run every built-in scenario (or those matching REGEXP) on all cores", `Every series of every scenario goes into one pool of -j workers (default
GOMAXPROCS), the scenarios with the largest declared cost first, and the
sweep points of a series onto free workers: the cores stay busy until the
last simulation ends. Each scenario's outputs go to DIR/<scenario>/, byte
for byte those of "simrun run NAME --out DIR/NAME" (whatever -j and the
order). Prints one line per scenario and the events, wall time and CPU
time of the whole suite. Each scenario's limits.max_wall_seconds is its
watchdog from its first series' start: when one fires the suite stops and
writes nothing. Exit 1 if a scenario failed (or its expected failure did
not happen), 2 on bad input.
Example:
  simrun suite --out /tmp/all
  simrun suite 'sci-|sx4-' --quiet`, cmdSuite},
		{"merge", "[--out DIR] SHARD-DIR...", "merge the shard.json of every shard of a run into its outputs", `Every series must come from exactly one shard of the same scenario and seed;
the outputs are those of a run without shards, byte for byte.
Example:
  simrun merge --out results/t3d-fig5 /tmp/s0 /tmp/s1`, cmdMerge},
		{"compare", compareArgs, compareSummary, compareHelp, cmdCompare},
		{"claims", "[REGEXP] [--fast] [--skip REGEXP] [--failing]", "run the built-in scenarios that carry claims and say which hold", `Each claim is a statement of a paper (quoted, with its section) checked on
the results: a ratio of two series, one series above or below another, a
monotone trend, a fit (a*ln(x)+b or a*x+b) with a minimum R², a crossover,
a value within a band. Prints every claim with the measured figure and
"holds" or "FAILS"; a failing claim does not change the exit status (a
failed run does: 1). REGEXP selects scenarios by name; --fast skips those
whose declared cost (cost.wall_seconds, cost.memory_gb) exceeds 5 s or
2 GB (the 128-PE T3D figures and ScaMPI's 96-node all-to-all, 6 s to a
minute and a half each, up to about 1 GB; simrun show NAME gives a
scenario's cost). A scenario's claims are also in its summary.txt and
results.json.
Example:
  simrun claims --fast
  simrun claims 't3d-fig[59]' --failing`, cmdClaims},
		{"calibrate", "FILE-or-NAME [--out DIR] [-j N] [--quiet] [--dry-run] | --check [FILE-or-NAME...] | --list", "fit a calibration file's free parameters to its training data and judge them on its validation", calibrateHelp, cmdCalibrate},
		{"litmus", "TEST|FILE.litmus --model M [--exhaustive] [--runs N] [--seed N] | --list", "run a litmus test: sample runs (litmus7-style counts) or enumerate every outcome (herd7-style)", `TEST is a built-in test or a herd7 .litmus file (X86 subset or C syntax:
WRITE_ONCE, READ_ONCE, smp_mb, smp_wmb, smp_rmb, xchg, ...).
M is a built-in model (sc, tso, pso, noncoherent, nmca) or a YAML file of
sim/mem Config fields, optionally starting from a built-in:
  base: tso
  store_buffer: {order: reordered}
--exhaustive enumerates every final state the operational model allows
(every interleaving, store-buffer drain order and cached copy), so Never
means never; otherwise runs are sampled with seeded jitter.
The last line is "Observation TEST Never|Sometimes|Always POS NEG", or
"Observation TEST None 0 0 (no run finished)" when every run failed.
The jitters default to twice the time the test's programs and store drains
take one after another, each drain varies by as much, and one run in four
runs the threads one after another in a random order: the default sampling
shows every outcome --exhaustive finds for the built-in tests (a test
checks it on every model). Every run's engine is bounded in events (never
in wall time: the counts do not depend on load).
Exit 1 if runs deadlock, livelock or hit a limit (MP+spin on noncoherent
livelocks); exit 2 on an unknown test, a bad file or a bad model.
Example:
  simrun litmus MP --model pso --runs 10000 --seed 1
  simrun litmus litmus/testdata/IRIW.litmus --model nmca --exhaustive
  simrun litmus --list`, cmdLitmus},
		{"explore", "FILE-or-NAME [--out DIR] [--seed N] [--quiet] [--series NAME] [--schedule S]", "run the schedules of a multithreaded MPI program (workload explore), bounded", `Counts schedules, scheduling points and failing schedules, and prints the
shortest failing schedule (a string, one character per choice) with the
report of its hang or wrong result; --schedule S --series NAME replays it.
Explored: the order of threads ready at the same simulated time; the
stack's declared points (MPICH: entering an MPI call, taking a thread
lock); with the workload's memory_points, every load, store, atomic and
copy through a CPU and every put, get and remote atomic verb; with
preempt, descheduling a thread at any of these. At most bound choices off
the engine's order per schedule. Not explored: timing, the machine's
random choices (store-buffer drains), the network's delivery order, a
machine's lower-level operations called directly. A livelock is a repeated state where
the stack hashes its state (MPICH's context-id loop), else a retry limit.
Example:
  simrun explore threads-fig2
  simrun explore threads-fig3 --series naive-lock
  simrun explore threads-fig3 --series naive-lock --schedule 0000000000001`, cmdExplore},
		{"trace", "FILE-or-NAME [--out trace.json] [--seed N]", "run a scenario and write a Chrome trace of its first engine", `Open the JSON in https://ui.perfetto.dev or chrome://tracing: one line per
simulated process, with its busy, waiting and spinning spans, and the
models' instant marks. A wait or spin the run ended in (a deadlock, a
livelock) never ends: it is drawn to the end of the trace and marked "did
not end". The counts printed are those of the events written.
Example:
  simrun trace litmus-mp-spin-noncoherent --out trace.json`, cmdTrace},
		{"report", "[DIR] [--out FILE] [--title T] [--pages]", "write a static HTML report of results directories (default results/)", `Reads every results directory in DIR (DIR itself, or each DIR/NAME written
by simrun run) and writes one page, DIR/index.html (DIR.html when DIR is
itself a results directory; --out FILE elsewhere): a titled index of the
scenarios with their results, then for each its figures, a table of its
values (x down, series across, per metric), the paper-vs-simulated table,
the claims, failures and notes. Nothing is written into the results
directories unless --pages asks for a page in each (DIR/NAME/index.html).
Static files: open them in any browser, no server, no network.
Example:
  simrun run sx4-fig7 && simrun run litmus-mp
  simrun report --title "SX-4 and litmus"`, cmdReport},
		{"soak", "[--runs N] [--seed S] [--only REGEXP]", "run random message programs on every pairing offering message passing and check every delivery", `Each run draws from its seed a program of 1 to 12 messages among 2 to 4
ranks (sizes across every protocol threshold, 4 tags, AnyTag receives,
blocking and nonblocking sends, every receive posted first) and checks
that every message arrives once and intact; runs go round-robin over the
machine/stack pairings (each MPICH device apart; a machine that models
faults, sci, also under its fault params: CRC errors and wider packet
reordering, with the faults counted). Reports per pairing the runs,
messages and any loss, duplication, corruption, deadlock, livelock or
limit, each with the command that replays it, and the seeds run. Exit 1
if any run failed.
Example:
  simrun soak --runs 3000
  simrun soak --runs 1000000 --seed 7        # a long soak, hours
  simrun soak --only '^sci/' --runs 500`, cmdSoak},
		{"bench", "", "measure the engine's events/s and process switches/s here", `Example:
  simrun bench`, cmdBench},
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `simrun runs msgsim scenarios: 1990s parallel machines with the real protocol
code of their messaging stacks, and memory-model litmus tests.

Usage: simrun COMMAND [arguments]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
First steps:
  simrun list                          what is built in
  simrun run litmus-mp                 run one; see results/litmus-mp/
  simrun litmus SB --model tso         a litmus test on a CPU model
  simrun help run                      help on one command
  simrun --version                     the version it was built from

Exit status: 0 ok (validate: valid), 1 a run failed (unless the scenario
expects it), 2 bad input (usage, scenario, params, model; validate: invalid).
`)
}

func commandUsage(w io.Writer, c command) {
	fmt.Fprintf(w, "Usage: simrun %s %s\n\n%s.\n\n%s\n", c.name, c.args, strings.ToUpper(c.summary[:1])+c.summary[1:], c.help)
}

// cli runs simrun with args and returns the exit status.
func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "--version", "-version", "version":
		return printVersion(stdout)
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					// The command prints its usage and its flags, exactly
					// as "simrun CMD --help" does.
					return c.run([]string{"--help"}, stdout, stderr)
				}
			}
			fmt.Fprintf(stderr, "simrun: no command %q\n", args[1])
			return exitUsage
		}
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "simrun: unknown command %q\n\n", name)
	usage(stderr)
	return exitUsage
}

// flags parses flags that may come before or after the positional
// arguments; it returns the positional ones. -h/--help prints c's usage.
func parseFlags(fs *flag.FlagSet, c string, args []string, stdout, stderr io.Writer) ([]string, int, bool) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			for _, cmd := range commands() {
				if cmd.name == c {
					commandUsage(stdout, cmd)
					nflags := 0
					fs.VisitAll(func(*flag.Flag) { nflags++ })
					if nflags > 0 {
						fmt.Fprintln(stdout, "\nFlags:")
						fs.SetOutput(stdout)
						fs.PrintDefaults()
					}
				}
			}
			return nil, exitOK, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "simrun %s: %v (see simrun %s --help)\n", c, err, c)
			return nil, exitUsage, false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(c string, pos []string, n int, stderr io.Writer) bool {
	if len(pos) != n {
		for _, cmd := range commands() {
			if cmd.name == c {
				fmt.Fprintf(stderr, "simrun %s: expected %d argument(s), got %d\nUsage: simrun %s %s (see simrun %s --help)\n", c, n, len(pos), c, cmd.args, c)
			}
		}
		return false
	}
	return true
}

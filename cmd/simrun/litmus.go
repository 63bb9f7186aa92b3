package main

import (
	"flag"
	"fmt"
	"github.com/msgsim/msgsim/internal/suggest"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/litmus"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/sim/mem"
)

func cmdLitmus(args []string, stdout, stderr io.Writer) int {
	return litmusCmd(builtins(), args, stdout, stderr)
}

// adapterFlag is a named flag of one or more litmus adapters: the machine
// param it sets on each machine that has it, and the value given.
type adapterFlag struct {
	params map[string]string // machine -> param
	owners []string          // the machines, in the registry's order
	shown  string            // the default -h shows
	value  string
	set    bool
}

func (f *adapterFlag) String() string {
	if f == nil {
		return ""
	}
	if f.set {
		return f.value
	}
	return f.shown
}

func (f *adapterFlag) Set(v string) error { f.value, f.set = v, true; return nil }

// paramFlags are the --param KEY=VALUE flags, in order.
type paramFlags []registry.LitmusParam

func (p *paramFlags) String() string { return "" }

func (p *paramFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q: want KEY=VALUE, a machine param's YAML key and value", v)
	}
	*p = append(*p, registry.LitmusParam{Key: strings.TrimSpace(k), Value: val})
	return nil
}

// either joins names as "a, b or c" (last word conj).
func either(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// litmusCmd is simrun litmus with the machines and litmus adapters of
// reg.
func litmusCmd(reg *registry.Registry, args []string, stdout, stderr io.Writer) int {
	adapters := reg.LitmusMachines()
	var machineNames []string
	for _, a := range adapters {
		machineNames = append(machineNames, a.Machine)
	}
	fs := flag.NewFlagSet("litmus", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the tests, the built-in models and the machines")
	model := fs.String("model", "sc", "CPU model: a built-in (sc, tso, pso, noncoherent, nmca) or a YAML file")
	exhaustive := fs.Bool("exhaustive", false, "enumerate every final state the model allows (herd7-style output) instead of sampling runs")
	runs := countFlag(fs, "runs", litmus.DefaultRuns, 1, "runs", "number of runs (estimated, like a scenario's series, against --max-events)")
	maxEvents := maxEventsFlag(fs)
	seed := fs.Uint64("seed", 1, "seed of the runs")
	startJ := fs.Float64("start-jitter-cycles", 0, "random start delay range per thread, in CPU cycles (default: from the model)")
	opJ := fs.Float64("op-jitter-cycles", 0, "random delay range before each instruction, in CPU cycles (default: from the model)")
	drainJ := fs.Float64("drain-jitter-cycles", 0, "random extra delay range of each store-buffer drain, in CPU cycles (default: the model's, or, if the model's drains are fixed, the instruction jitter's span)")
	machine := fs.String("machine", "", "run on a machine instead of --model: "+either(machineNames, "or")+" (--list says how each runs a test)")
	home := fs.String("home", "", "with a --machine whose locations live in one node's memory: the PE or node holding each location, e.g. x=1,y=1 (default: the first thread that loads it)")
	place := fs.String("place", "", "with --machine: the processor each thread runs on, e.g. P0=0,P1=3 (a CPU of a one-node machine, else a PE, node or process; a word before the number is allowed: P1=node3, P1=pe9); one thread per processor; default: thread i on i")
	var params paramFlags
	fs.Var(&params, "param", "with --machine: a machine param, `KEY=VALUE` with the YAML key and value of the machine's params (as in a scenario's machine.params); repeatable")
	named := adapterFlags(fs, adapters)
	cold := fs.Bool("cold", false, "start with empty caches (default: each thread has loaded its locations)")
	maxInput := inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "litmus", args, stdout, stderr)
	if !ok {
		return code
	}
	if *list {
		litmusList(adapters, stdout)
		return exitOK
	}
	if !wantArgs("litmus", pos, 1, stderr) {
		return exitUsage
	}
	if e := litmus.EstimateRuns(*runs); !*exhaustive && *maxEvents >= 0 && e > *maxEvents {
		fmt.Fprintf(stderr, "simrun litmus: --runs %d would take about %.1e events (at ~100 ns an event, %s of CPU), more than the limit of %.0e: lower --runs, or raise the limit with --max-events\n",
			*runs, e, runner.CPUTime(e*100e-9), *maxEvents)
		return exitUsage
	}
	t, err := litmus.LoadTestCapped(pos[0], "", *maxInput)
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	cfg, ok := litmusModel(fs, *model, stderr)
	if !ok {
		return exitUsage
	}
	set, ok := machineParams(named, *machine, params, stderr)
	if !ok {
		return exitUsage
	}
	var placed []int
	if *place != "" {
		if *machine == "" {
			fmt.Fprintf(stderr, "simrun litmus: --place %q: placement needs a --machine (%s); the --model CPUs are all alike\n", *place, either(machineNames, "or"))
			return exitUsage
		}
		if placed, err = litmus.ParsePlace(t, *place); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --place %v\n", err)
			return exitUsage
		}
	}
	var mc litmus.Machine
	remote := false
	if *machine != "" {
		if mc, remote, err = litmusMachine(reg, *machine, set, len(t.Threads), machineNames); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
			return exitUsage
		}
	}
	if remote {
		return litmusRemote(t, mc, remoteFlags{home: *home, place: *place, placed: placed, exhaustive: *exhaustive, runs: *runs, seed: *seed, warm: !*cold, startJ: *startJ, opJ: *opJ}, fs, stdout, stderr)
	}
	if *home != "" {
		fmt.Fprintf(stderr, "simrun litmus: --home applies to --machine %s only\n", either(homeMachines(reg, adapters), "and"))
		return exitUsage
	}
	if *machine != "" {
		if cfg, err = mc.OneNode(len(t.Threads)); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --machine: %v\n", err)
			return exitUsage
		}
		if placed != nil && !onePlacement(mc, t, placed, *machine, *place, stdout, stderr) {
			return exitUsage
		}
		*model = *machine
	}
	opts := litmus.DefaultOptions(t, cfg)
	opts.Runs, opts.Seed, opts.Warm = *runs, *seed, !*cold
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "start-jitter-cycles":
			opts.StartJitterCycles = *startJ
		case "op-jitter-cycles":
			opts.OpJitterCycles = *opJ
		case "drain-jitter-cycles":
			opts.DrainJitterCycles = *drainJ
		}
	})
	return litmusRun(t, *model, *machine, cfg, opts, *exhaustive, stdout, stderr)
}

// litmusRun runs (or, exhaustive, explores) test t on a model and writes
// its outcome: exit 1 when a run failed.
func litmusRun(t litmus.Test, model, machine string, cfg mem.Config, opts litmus.Options, exhaustive bool, stdout, stderr io.Writer) int {
	var err error
	start := time.Now()
	opts.Progress = litmusProgress(stderr, opts.Runs, time.Now, progressEvery)
	var o *litmus.Outcome
	if exhaustive {
		o, err = litmus.Explore(t, model, cfg, opts.Warm)
	} else {
		o, err = litmus.RunTest(t, model, cfg, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	wall := time.Since(start)
	if err := litmus.Write(stdout, o); err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitFailed
	}
	if exhaustive {
		fmt.Fprintf(stderr, "simrun litmus: %d states explored in %.3fs\n", o.Explored, wall.Seconds())
	} else {
		fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events in %.3fs\n", opts.Runs, o.Events, wall.Seconds())
		if n := oneStateNote(o, machine, opts.Runs, opts); n != "" {
			fmt.Fprintln(stderr, n)
		}
	}
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

// adapterFlags defines on fs the litmus adapters' named flags, each once
// for every machine that has it, and returns them by name.
func adapterFlags(fs *flag.FlagSet, adapters []registry.LitmusEntry) map[string]*adapterFlag {
	named := map[string]*adapterFlag{}
	for _, a := range adapters {
		for _, f := range a.Flags {
			nf := named[f.Name]
			if nf == nil {
				nf = &adapterFlag{params: map[string]string{}, shown: f.Shown}
				named[f.Name] = nf
				fs.Var(nf, f.Name, f.Usage)
			}
			nf.params[a.Machine] = f.Param
			nf.owners = append(nf.owners, a.Machine)
		}
	}
	return named
}

// litmusMachine resolves --machine name with the params set for a test of
// threads threads, and says whether it is a machine of remote writes.
func litmusMachine(reg *registry.Registry, name string, set []registry.LitmusParam, threads int, machineNames []string) (litmus.Machine, bool, error) {
	if _, ok := reg.LookupLitmus(name); !ok {
		return litmus.Machine{}, false, fmt.Errorf("--machine: unknown machine %q%s (machines: %s)", name, suggest.Hint(name, machineNames), strings.Join(machineNames, ", "))
	}
	mc, err := reg.LitmusMachine(name, set)
	if err != nil {
		return litmus.Machine{}, false, err
	}
	remote, err := mc.Remote(threads)
	if err != nil {
		return litmus.Machine{}, false, fmt.Errorf("--machine %s: %w", name, err)
	}
	return mc, remote, nil
}

// litmusModel loads --model (warning when neither it nor --machine was
// given); on a bad model it reports to stderr and returns false.
func litmusModel(fs *flag.FlagSet, model string, stderr io.Writer) (mem.Config, bool) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["model"] && set["machine"] {
		fmt.Fprintf(stderr, "simrun litmus: --model %s and --machine: give one; a machine runs the test on its own CPUs and memory (its model is its parameters: --list)\n", model)
		return mem.Config{}, false
	}
	if !set["model"] && !set["machine"] {
		fmt.Fprintf(stderr, "simrun litmus: no --model given: using %s (sequential consistency, which never shows a relaxed outcome); try --model tso, pso, noncoherent or nmca\n", model)
	}
	cfg, err := litmus.LoadModelCapped(model, "", inputfile.FromFlags(fs))
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: --model: %v\n", err)
		return cfg, false
	}
	return cfg, true
}

// litmusList is simrun litmus --list: the tests, the models and the
// machines with their flags.
func litmusList(adapters []registry.LitmusEntry, stdout io.Writer) {
	fmt.Fprintln(stdout, "Tests:")
	for _, t := range litmus.Tests() {
		fmt.Fprintf(stdout, "  %-16s %s (%s)\n", t.Name, t.Cond.Quant, t.CondString())
		for _, l := range t.Program() {
			fmt.Fprintf(stdout, "  %-16s   %s\n", "", l)
		}
	}
	fmt.Fprintln(stdout, "Models:")
	for _, m := range litmus.Models() {
		fmt.Fprintf(stdout, "  %-12s %s; shows %s\n", m.Name, m.What, m.Shows)
	}
	fmt.Fprintf(stdout, "  or a YAML file of sim/mem Config fields (base: <one of %s> to start from one)\n", strings.Join(mem.BuiltinNames(), ", "))
	fmt.Fprintln(stdout, "Machines (--machine):")
	for _, a := range adapters {
		fmt.Fprintf(stdout, "  %-12s %s\n", a.Machine, a.Summary)
		for _, f := range a.Flags {
			fmt.Fprintf(stdout, "  %-12s --%s sets %s (default %s)\n", "", f.Name, f.Param, f.Shown)
		}
	}
	fmt.Fprintln(stdout, "  --place P0=N,P1=M puts threads on chosen CPUs, PEs or nodes (on the T3D, far PEs are more torus hops away)")
	fmt.Fprintln(stdout, "  --param KEY=VALUE sets any machine param (a YAML key of the machine's params, as in a scenario's machine.params)")
	fmt.Fprintln(stdout, "Or a herd7 .litmus file (X86 or C syntax): simrun litmus FILE.litmus --model tso")
}

// machineParams are the machine params the adapters' flags and --param
// set, for --machine machine; on a flag that does not apply it reports to
// stderr and returns false.
func machineParams(named map[string]*adapterFlag, machine string, params paramFlags, stderr io.Writer) ([]registry.LitmusParam, bool) {
	// The adapters' flags set params of their machines only.
	var set []registry.LitmusParam
	for _, name := range slices.Sorted(maps.Keys(named)) {
		nf := named[name]
		if !nf.set {
			continue
		}
		param, ok := nf.params[machine]
		if !ok {
			fmt.Fprintf(stderr, "simrun litmus: --%s applies to --machine %s only\n", name, either(nf.owners, "or"))
			return nil, false
		}
		set = append(set, registry.LitmusParam{Key: param, Value: nf.value})
	}
	if len(params) > 0 && machine == "" {
		fmt.Fprintln(stderr, "simrun litmus: --param sets a machine param: it needs a --machine")
		return nil, false
	}
	return append(set, params...), true
}

// onePlacement checks --place on a one-node machine and prints where the
// threads run; on a bad placement it reports to stderr and returns false.
func onePlacement(mc litmus.Machine, t litmus.Test, placed []int, machine, place string, stdout, stderr io.Writer) bool {
	// A one-node machine's CPUs reach the node's one memory alike:
	// where a thread runs changes nothing but its name.
	unit, _, err := mc.Units(len(t.Threads))
	if err == nil {
		_, err = litmus.CheckPlace(t, placed, machine, unit, mc.MaxUnits)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: --place %q: %v\n", place, err)
		return false
	}
	var at []string
	for th, c := range placed {
		at = append(at, fmt.Sprintf("P%d on %s %d", th, unit, c))
	}
	head, note := mc.Head, mc.Note
	if head == "" {
		head = machine
	}
	if note == "" {
		note = " (one node: its CPUs share one memory)"
	}
	fmt.Fprintf(stdout, "%% %s: %s%s\n", head, strings.Join(at, ", "), note)
	return true
}

// homeMachines are the machines of reg whose locations have homes (those
// litmus runs as machines of remote writes, with their default params).
func homeMachines(reg *registry.Registry, adapters []registry.LitmusEntry) []string {
	var out []string
	for _, a := range adapters {
		mc, err := reg.LitmusMachine(a.Machine, nil)
		if err != nil {
			continue
		}
		if remote, err := mc.Remote(registry.ProbeProcs); err == nil && remote {
			out = append(out, a.Machine)
		}
	}
	return out
}

// remoteFlags are the flags of a run on a machine of remote writes.
type remoteFlags struct {
	home, place      string
	placed           []int // parsed --place (nil: thread i on i)
	exhaustive, warm bool
	runs             int
	seed             uint64
	startJ, opJ      float64
}

// litmusRemote runs a test on a machine of remote writes (a T3D
// partition, an SCI cluster, an SP...), one thread per process (sampled
// only: the machines are timed, with a network).
func litmusRemote(t litmus.Test, mc litmus.Machine, f remoteFlags, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	if f.exhaustive {
		fmt.Fprintf(stderr, "simrun litmus: --exhaustive explores the untimed models (--model, or a --machine of one node); --machine %s is sampled only\n", mc.Name)
		return exitUsage
	}
	where, unit, err := mc.Units(len(t.Threads))
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %s: %v\n", mc.Name, err)
		return exitFailed
	}
	if f.placed != nil {
		if _, err := litmus.CheckPlace(t, f.placed, mc.Name, where, mc.MaxUnits); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --place %q: %v\n", f.place, err)
			return exitUsage
		}
	}
	homes, err := mc.Homes(t, f.placed)
	var j, opDef float64
	if err == nil {
		j, err = mc.JitterCycles()
	}
	if err == nil {
		opDef, err = mc.OpJitter(j)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %s: %v\n", mc.Name, err)
		return exitFailed
	}
	if f.home != "" {
		for _, kv := range strings.Split(f.home, ",") {
			name, n, ok := strings.Cut(strings.TrimSpace(kv), "=")
			v, err := strconv.Atoi(n)
			l := slices.Index(t.Locs, name)
			if !ok || err != nil || l < 0 {
				fmt.Fprintf(stderr, "simrun litmus: --home %q: want LOCATION=%s with a location of the test (%s)\n", kv, strings.ToUpper(where), strings.Join(t.Locs, ", "))
				return exitUsage
			}
			homes[l] = v
		}
		units, _ := litmus.CheckPlace(t, f.placed, mc.Name, where, 0)
		for l, h := range homes {
			if h < 0 || h >= units {
				fmt.Fprintf(stderr, "simrun litmus: --home %q: %s on %s %d, but the test's threads run on %ss 0..%d (see --place)\n", f.home, t.Locs[l], where, h, where, units-1)
				return exitUsage
			}
		}
	}
	opts := litmus.Options{Runs: f.runs, Seed: f.seed, Warm: f.warm, StartJitterCycles: j, OpJitterCycles: opDef, Place: f.placed}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "start-jitter-cycles":
			opts.StartJitterCycles = f.startJ
		case "op-jitter-cycles":
			opts.OpJitterCycles = f.opJ
		}
	})
	start := time.Now()
	opts.Progress = litmusProgress(stderr, opts.Runs, time.Now, progressEvery)
	o, err := litmus.RunMachine(t, mc, homes, opts)
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	wall := time.Since(start)
	var at []string
	for th := range t.Threads {
		p := th
		if f.placed != nil {
			p = f.placed[th]
		}
		at = append(at, fmt.Sprintf("P%d on %s %d", th, unit, p))
	}
	for l, h := range homes {
		at = append(at, fmt.Sprintf("%s on %s %d", t.Locs[l], where, h))
	}
	head := mc.Head
	if head == "" {
		head = mc.Name
	}
	fmt.Fprintf(stdout, "%% %s: %s\n", head, strings.Join(at, ", "))
	if err := litmus.Write(stdout, o); err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events, %v simulated, in %.3fs\n", f.runs, o.Events, o.SimTime, wall.Seconds())
	if n := oneStateNote(o, mc.Name, f.runs, opts); n != "" {
		fmt.Fprintln(stderr, n)
	}
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads/litmus"
)

func cmdLitmus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("litmus", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the tests and the built-in models")
	model := fs.String("model", "sc", "CPU model: a built-in (sc, tso, pso, noncoherent, nmca) or a YAML file")
	exhaustive := fs.Bool("exhaustive", false, "enumerate every final state the model allows (herd7-style output) instead of sampling runs")
	runs := fs.Int("runs", litmus.DefaultRuns, "number of runs")
	seed := fs.Uint64("seed", 1, "seed of the runs")
	startJ := fs.Float64("start-jitter-cycles", 0, "random start delay range per thread, in CPU cycles (default: from the model)")
	opJ := fs.Float64("op-jitter-cycles", 0, "random delay range before each instruction, in CPU cycles (default: from the model)")
	drainJ := fs.Float64("drain-jitter-cycles", 0, "random extra delay range of each store-buffer drain, in CPU cycles (default: the model's, 0 on the built-ins; R on tso needs it in sampling)")
	machine := fs.String("machine", "", "run on a machine instead of --model: sx4 (threads on CPUs of one node), t3d (thread i on PE i; see --home), sci (thread i on node i; see --home) or sp (thread i on node i; see --home)")
	home := fs.String("home", "", "with --machine t3d, sci or sp: the PE or node holding each location, e.g. x=1,y=1 (default: the first thread that loads it)")
	place := fs.String("place", "", "with --machine: the processor each thread runs on, e.g. P0=0,P1=3 (a CPU of the SX-4, a PE of the T3D, a node of the SCI cluster or the SP; a word before the number is allowed: P1=node3, P1=pe9); one thread per processor; default: thread i on i")
	reorder := fs.Float64("reorder-ns", sci.DefaultParams().ReorderNs, "with --machine sci: the largest extra delay of an SCI packet in the fabric (reorder_ns; the teaching scenarios use 3000)")
	progress := fs.String("progress", sp.DefaultParams().Progress, "with --machine sp: how LAPI handles incoming messages, interrupt or polling (a node's program polls only inside LAPI calls)")
	swJitter := fs.Float64("switch-jitter-us", litmusSwitchJitterUs, "with --machine sp: the largest extra delay of a packet in the SP switch (switch_jitter_us: other traffic on the packet's route); 0 is a quiet switch, which delivers in order")
	cold := fs.Bool("cold", false, "start with empty caches (default: each thread has loaded its locations)")
	pos, code, ok := parseFlags(fs, "litmus", args, stdout, stderr)
	if !ok {
		return code
	}
	if *list {
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
		fmt.Fprintln(stdout, "  sx4          each thread on a CPU of one node: non-coherent write-through scalar caches, stores to different lines drain out of order, the node's own costs")
		fmt.Fprintln(stdout, "  t3d          thread i on PE i, each location in one PE's memory (--home): remote stores are puts, remote loads gets, local loads go through a cache that puts do not update; smp_mb is shmem_quiet + cache flush")
		fmt.Fprintln(stdout, "  sci          thread i on node i of a Scali SCI cluster, each location in one node's memory (--home): remote stores are posted writes the fabric reorders (--reorder-ns), remote loads round trips; smp_mb is MemBarrier; shows MP, SB, 2+2W across nodes, not their MemBarrier versions")
		fmt.Fprintln(stdout, "  sp           thread i on node i of an IBM SP, each location in one node's memory (--home): remote stores are LAPI_Puts, which LAPI does not order and the switch may reorder (--switch-jitter-us), remote loads LAPI_Get + LAPI_Waitcntr; smp_mb is LAPI_Fence; shows MP, SB, 2+2W, MP+spin across nodes, not their fenced versions (nor LB, IRIW, WRC); on a quiet switch (--switch-jitter-us 0) only SB")
		fmt.Fprintln(stdout, "  --place P0=N,P1=M puts threads on chosen CPUs, PEs or nodes (on the T3D, far PEs are more torus hops away)")
		fmt.Fprintln(stdout, "Or a herd7 .litmus file (X86 or C syntax): simrun litmus FILE.litmus --model tso")
		return exitOK
	}
	if !wantArgs("litmus", pos, 1, stderr) {
		return exitUsage
	}
	t, err := litmus.LoadTest(pos[0], "")
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	modelSet := false
	fs.Visit(func(f *flag.Flag) { modelSet = modelSet || f.Name == "model" || f.Name == "machine" })
	if !modelSet {
		fmt.Fprintf(stderr, "simrun litmus: no --model given: using %s (sequential consistency, which never shows a relaxed outcome); try --model tso, pso, noncoherent or nmca\n", *model)
	}
	cfg, err := litmus.LoadModel(*model, "")
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: --model: %v\n", err)
		return exitUsage
	}
	var placed []int
	if *place != "" {
		if *machine == "" {
			fmt.Fprintf(stderr, "simrun litmus: --place %q: placement needs a --machine (sx4, t3d, sci or sp); the --model CPUs are all alike\n", *place)
			return exitUsage
		}
		if placed, err = litmus.ParsePlace(t, *place); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --place %v\n", err)
			return exitUsage
		}
	}
	switch *machine {
	case "t3d", "sci", "sp":
		return litmusRemote(t, remoteFlags{machine: *machine, home: *home, place: *place, placed: placed, reorderNs: *reorder, switchJitterUs: *swJitter, progress: *progress, exhaustive: *exhaustive, runs: *runs, seed: *seed, warm: !*cold, startJ: *startJ, opJ: *opJ}, fs, stdout, stderr)
	}
	if *home != "" {
		fmt.Fprintln(stderr, "simrun litmus: --home applies to --machine t3d, sci and sp only")
		return exitUsage
	}
	if *machine != "" {
		if cfg, err = machineModel(*machine, len(t.Threads)); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --machine: %v\n", err)
			return exitUsage
		}
		if placed != nil {
			// The SX-4's CPUs reach the node's one memory through the same
			// crossbar: where a thread runs changes nothing but its name.
			if _, err := litmus.CheckPlace(t, placed, *machine, "CPU", sx4.MaxCPUs); err != nil {
				fmt.Fprintf(stderr, "simrun litmus: --place %q: %v\n", *place, err)
				return exitUsage
			}
			var at []string
			for th, c := range placed {
				at = append(at, fmt.Sprintf("P%d on CPU %d", th, c))
			}
			fmt.Fprintf(stdout, "%% SX-4: %s (the CPUs are alike: one memory through one crossbar)\n", strings.Join(at, ", "))
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
	start := time.Now()
	var o *litmus.Outcome
	if *exhaustive {
		o, err = litmus.Explore(t, *model, cfg, opts.Warm)
	} else {
		o, err = litmus.RunTest(t, *model, cfg, opts)
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
	if *exhaustive {
		fmt.Fprintf(stderr, "simrun litmus: %d states explored in %.3fs\n", o.Explored, wall.Seconds())
	} else {
		fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events in %.3fs\n", *runs, o.Events, wall.Seconds())
	}
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

// machineModel is the processor model of a machine's own configuration
// (default params), with threads processors of it sharing its memory.
func machineModel(name string, threads int) (mem.Config, error) {
	switch name {
	case "sx4":
		m, err := sx4.New(sim.NewEngine(0), threads, sx4.DefaultParams())
		if err != nil {
			return mem.Config{}, err
		}
		return m.CPU(0).Config(), nil
	}
	return mem.Config{}, fmt.Errorf("unknown machine %q (machines: sx4, t3d, sci, sp)", name)
}

// remoteFlags are the flags of a run on a T3D, SCI cluster or SP.
type remoteFlags struct {
	machine, home, place      string
	progress                  string // --machine sp
	placed                    []int  // parsed --place (nil: thread i on i)
	reorderNs, switchJitterUs float64
	exhaustive, warm          bool
	runs                      int
	seed                      uint64
	startJ, opJ               float64
}

// litmusSwitchJitterUs is --switch-jitter-us's default: a packet queued
// behind one full packet of other traffic at an adapter (1088 bytes at
// adapter_mbps 34: 32 us), rounded up.
const litmusSwitchJitterUs = 40

// litmusRemote runs a test on a T3D partition, an SCI cluster or an SP,
// one thread per PE or node (sampled only: the machines are timed, with
// a network).
func litmusRemote(t litmus.Test, f remoteFlags, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	if f.exhaustive {
		fmt.Fprintf(stderr, "simrun litmus: --exhaustive explores the untimed models (sc, tso, pso, noncoherent, nmca, --machine sx4); --machine %s is sampled only\n", f.machine)
		return exitUsage
	}
	for flagName, only := range map[string]string{"reorder-ns": "sci", "switch-jitter-us": "sp", "progress": "sp"} {
		set := false
		fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == flagName })
		if set && f.machine != only {
			fmt.Fprintf(stderr, "simrun litmus: --%s applies to --machine %s only\n", flagName, only)
			return exitUsage
		}
	}
	where := "PE"
	var (
		homes    []int
		j, opDef float64
		run      func(litmus.Options) (*litmus.Outcome, error)
		head     string
		err      error
	)
	switch f.machine {
	case "t3d":
		var (
			build litmus.Builder
			cfg   litmus.T3DConfig
		)
		homes = litmus.DefaultHomes(t, f.placed)
		build, cfg, err = t3dLitmus()
		if err == nil {
			j, err = litmus.T3DJitterCycles(build, cfg)
		}
		opDef = j
		run = func(o litmus.Options) (*litmus.Outcome, error) { return litmus.RunT3D(t, build, cfg, homes, o) }
		head = "T3D"
	case "sci":
		where = "node"
		params := sci.DefaultParams()
		params.ReorderNs = f.reorderNs
		if err := params.Validate(); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --reorder-ns: %v\n", err)
			return exitUsage
		}
		build, cfg := sciLitmus(params)
		one := params
		one.ProcsPerNode = 1
		build1, _ := sciLitmus(one)
		homes = litmus.DefaultSCIHomes(t, cfg, f.placed)
		j, err = litmus.SCIJitterCycles(build1, cfg)
		opDef = litmus.SCIOpJitterCycles(cfg)
		run = func(o litmus.Options) (*litmus.Outcome, error) { return litmus.RunSCI(t, build, cfg, homes, o) }
		head = fmt.Sprintf("SCI, reorder_ns %g", f.reorderNs)
	case "sp":
		where = "node"
		params := sp.DefaultParams()
		params.SwitchJitterUs = f.switchJitterUs
		params.Progress = f.progress
		if err := params.Validate(); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --switch-jitter-us or --progress: %v\n", err)
			return exitUsage
		}
		build := func(eng *sim.Engine, procs int) (machines.Machine, error) { return sp.New(eng, procs, params) }
		cfg := litmus.SPConfig{ClockMHz: params.ClockMHz, SwitchJitterUs: params.SwitchJitterUs, Polling: params.Progress == "polling"}
		homes = litmus.DefaultHomes(t, f.placed)
		j, err = litmus.SPJitterCycles(build, cfg)
		opDef = litmus.SPOpJitterCycles(cfg)
		run = func(o litmus.Options) (*litmus.Outcome, error) { return litmus.RunSP(t, build, cfg, homes, o) }
		head = fmt.Sprintf("SP, LAPI in %s mode, switch_jitter_us %g", params.Progress, f.switchJitterUs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %s: %v\n", f.machine, err)
		return exitFailed
	}
	if f.placed != nil {
		limit := map[string]int{"t3d": t3d.MaxPEs, "sp": sp.MaxNodes, "sci": sci.DefaultParams().TorusW * sci.DefaultParams().TorusH}[f.machine]
		if _, err := litmus.CheckPlace(t, f.placed, f.machine, where, limit); err != nil {
			fmt.Fprintf(stderr, "simrun litmus: --place %q: %v\n", f.place, err)
			return exitUsage
		}
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
		units, _ := litmus.CheckPlace(t, f.placed, f.machine, where, 0)
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
	o, err := run(opts)
	if err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitUsage
	}
	wall := time.Since(start)
	unit := where
	if f.machine == "sci" {
		unit = "process"
	}
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
	fmt.Fprintf(stdout, "%% %s: %s\n", head, strings.Join(at, ", "))
	if err := litmus.Write(stdout, o); err != nil {
		fmt.Fprintf(stderr, "simrun litmus: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "simrun litmus: %d runs, %d events, %v simulated, in %.3fs\n", f.runs, o.Events, o.SimTime, wall.Seconds())
	if o.Failed > 0 {
		return exitFailed
	}
	return exitOK
}

// t3dLitmus is the builder and config of litmus.RunT3D on a T3D of its
// default params, built through the registry.
func t3dLitmus() (litmus.Builder, litmus.T3DConfig, error) {
	e, ok := registry.Default().LookupMachine(t3d.Name)
	if !ok {
		return nil, litmus.T3DConfig{}, fmt.Errorf("machine %s is not registered", t3d.Name)
	}
	return e.Build, litmus.T3DConfig{ClockMHz: t3d.DefaultParams().ClockMHz}, nil
}

// sciLitmus is the builder and config of litmus.RunSCI on an SCI cluster
// of params.
func sciLitmus(params sci.Params) (litmus.Builder, litmus.SCIConfig) {
	build := func(eng *sim.Engine, procs int) (machines.Machine, error) { return sci.New(eng, procs, params) }
	return build, litmus.SCIConfig{ClockMHz: params.ClockMHz, LoadNs: params.LoadNs, ReorderNs: params.ReorderNs, ProcsPerNode: params.ProcsPerNode}
}

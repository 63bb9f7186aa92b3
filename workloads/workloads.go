// Package workloads holds what every workload takes and returns. Each
// workload (litmus, pingpong, ...) is a sub-package with a Run function of
// type Runner; the registry (package registry/all) maps workload names to
// them.
//
// A workload decodes its own params (Spec.Workload) and nothing else: the
// machine and the stack come resolved (package registry, called by
// runner.Load) as Spec.Open, which builds the machine and opens the stack
// on it, and the workload asks the ranks it gets for the interfaces of
// package stacks it needs.
//
// Layer: imports stacks, report, sim and internal/strictyaml. Each workload
// sub-package imports workloads, stacks, machines (verbs and their errors),
// sim, sim/mem, report, workloads/payload and internal/strictyaml as it
// needs: never a concrete machine or stack, the registry or scenarios.
package workloads

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Component is a workload named in a scenario, with its raw parameters
// (decoded strictly by the workload itself, so errors name the scenario
// file, line and field).
type Component struct {
	Name   string
	Params *yaml.Node // may be nil or an empty node: use defaults
	// Field is the component's YAML path in the scenario file, e.g.
	// "workload" or "series[1].workload" (errors name Field+".params.x").
	Field string
}

// ParamsField is the YAML path of c's params for error messages
// ("workload.params" when Field is empty and def is "workload").
func (c Component) ParamsField(def string) string {
	if c.Field != "" {
		return c.Field + ".params"
	}
	return def + ".params"
}

// Spec is one series of a scenario, resolved: what to build and run.
type Spec struct {
	Scenario string // scenario name
	Series   string // series name (the curve's legend)
	File     string // scenario file, for error messages
	Seed     uint64
	Limits   sim.Limits
	// Machine and Stack are the names of the series' machine and stack,
	// for messages; Open builds and opens them.
	Machine, Stack string
	Workload       Component
	// Open builds the machine with procs processes in eng and opens the
	// stack on it (params decoded and the pairing checked already); nil
	// when the series names no machine and stack (litmus tests).
	Open Opener
	// Run is the workload's runner, as the registry resolved its name
	// (simrun runs the series with it).
	Run Runner
	// Progress, if not nil, receives a line per finished sweep point.
	Progress func(msg string)
	// Observe, if not nil, is called with every engine the workload creates,
	// before it runs (simrun trace uses it to enable tracing). With a Pool
	// it may be called from several goroutines at once (Points).
	Observe func(e *sim.Engine)
	// Pool, if not nil, is the run's pool of simulation tokens, of which
	// the series holds one: Points runs sweep points on the free ones.
	Pool *Pool
	// Setup is the memory the machine and the stack state their set-up
	// takes (per process and per pair of processes); MaxSetupBytes, if
	// positive, is the most OpenWorld lets a world take: a larger one is
	// refused before anything is built.
	Setup         machines.Setup
	MaxSetupBytes float64
}

// Opener builds a machine and opens a stack on it: one rank per process.
type Opener = func(eng *sim.Engine, procs int) (*stacks.World, error)

// OpenWorld opens the series' stack on its machine with procs processes in
// eng; a series without them is an input error naming the field.
func (s Spec) OpenWorld(eng *sim.Engine, procs int) (*stacks.World, error) {
	if s.Open == nil {
		return nil, strictyaml.Errorf(s.File, nil, "machine", "workload %s needs a machine and a stack (machine.name, stack.name)", s.Workload.Name)
	}
	if b := s.Setup.Bytes(procs); s.MaxSetupBytes > 0 && b > s.MaxSetupBytes && (s.Setup.MaxProcs == 0 || procs <= s.Setup.MaxProcs) {
		at := s.Workload.Params
		if at != nil && at.Kind == 0 {
			at = nil
		}
		return nil, strictyaml.Errorf(s.File, at, s.Workload.ParamsField("workload"),
			"series %s: setting up %d processes takes about %s of memory (%s: %s), more than the limit of %s: at most %d processes fit; lower the workload's processes, or raise the limit with --max-memory",
			s.Series, procs, machines.Bytes(b), s.Setup.Describe(), s.Setup.What, machines.Bytes(s.MaxSetupBytes), s.Setup.Fit(s.MaxSetupBytes))
	}
	return s.Open(eng, procs)
}

// NewEngine creates an engine for s with its seed and limits, and lets the
// observer see it. Workloads create their engines with it.
func (s Spec) NewEngine(seed uint64) *sim.Engine {
	e := sim.NewEngine(seed)
	e.SetLimits(s.Limits)
	if s.Observe != nil {
		s.Observe(e)
	}
	return e
}

// Failure kinds a workload or run reports.
const (
	Corruption = "corruption" // a delivery's bytes differ from what was sent
	Loss       = "loss"       // a message never arrived
	Livelock   = "livelock"
	Deadlock   = "deadlock"
)

// Failure is a detected protocol failure: never a silent wrong number.
type Failure struct {
	Kind   string
	Detail string // who, where (rank, offset) and when (simulated time)
}

func (f Failure) String() string { return fmt.Sprintf("%s: %s", f.Kind, f.Detail) }

// File is an output a workload writes beside the results (a trace
// replay's communication matrix and its heatmap), Name relative to the
// output directory.
type File struct {
	Name string
	Data []byte
}

// Result is what a workload run produced.
type Result struct {
	Rows     []report.Row
	Failures []Failure
	Notes    []string
	// Files are written to the output directory as they are.
	Files   []File
	Events  uint64   // engine events executed, summed over runs
	SimTime sim.Time // simulated time, summed over runs
}

// Runner runs one series.
type Runner func(s Spec) (Result, error)

// DecodeParams decodes the workload's params into p, which holds the
// defaults, then checks them with validate. Errors name the scenario file,
// the line and the field.
func (s Spec) DecodeParams(p any, validate func() error) error {
	field := s.Workload.ParamsField("workload")
	if err := strictyaml.DecodeAt(s.File, field, s.Workload.Params, p); err != nil {
		return err
	}
	if err := validate(); err != nil {
		return fmt.Errorf("%s: %s: %w", s.File, field, err)
	}
	return nil
}

// StuckKind classifies an engine error that ended a run: Livelock,
// Deadlock or "limit" (a *sim.LimitError); ok is false for any other error.
func StuckKind(err error) (kind string, ok bool) {
	var lim *sim.LimitError
	switch {
	case sim.IsLivelock(err):
		return Livelock, true
	case sim.IsDeadlock(err):
		return Deadlock, true
	case errors.As(err, &lim):
		return "limit", true
	}
	return "", false
}

// Estimate is a workload's forecast of a series' size before it runs, so
// that a scenario asking for years of simulation is refused with the
// field to change rather than run for hours in silence.
type Estimate struct {
	// Events is the number of simulation events, to within a factor of
	// ten or so: a workload counts its messages and charges each
	// MessageEvents.
	Events float64
	// Param is the workload param that drives it (e.g. "repetitions").
	Param string
	// Procs, if not 0, is the most processes a point of the series opens
	// (its machine's and stack's set-up memory is checked at that size
	// before anything is built), and ProcsParam the param that sets it.
	Procs      int
	ProcsParam string
	// Sizes, if any, are the messages' lengths, equally likely: under a
	// machine's faults a stack that retries pays the expected attempts of
	// a transfer of each (machines.Setup.Attempts), on average.
	Sizes []int
}

// Attempts is the expected attempts of e's messages under attempts (1
// when either is unknown): their mean over e.Sizes.
func (e Estimate) Attempts(attempts func(n int) float64) float64 {
	if attempts == nil || len(e.Sizes) == 0 {
		return 1
	}
	sum := 0.0
	for _, n := range e.Sizes {
		sum += attempts(n)
	}
	return sum / float64(len(e.Sizes))
}

// MessageEvents is the rough number of events one message of n bytes
// costs a machine with a network: the protocol's control messages and
// the message's units crossing a few links each (a T3D all-to-all
// measures 340 to 650 events a message, units of 4 KiB).
func MessageEvents(n int) float64 { return 300 + float64(n)/512 }

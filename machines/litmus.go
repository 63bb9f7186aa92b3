package machines

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// LitmusTraits are what a machine tells the litmus package about itself:
// the choices the generic mapping of a litmus test on the machine's verbs
// cannot make alone (how its units are called, when threads start, what a
// barrier is on it, why it refuses atomics). A machine offers them by a
// method LitmusTraits() LitmusTraits on the instance its constructor returns
// (the litmus package's Tuned interface); the instance knows its params, so
// the traits may depend on them. Every field is optional: its zero value is
// the generic mapping's choice. The litmus package is above the machines in
// DESIGN's layers, so these are in the machines' own terms: a test is its
// number of locations. What a machine does at a run (a barrier of its
// own, a note on a spin that cannot end) are methods of its instance that
// the litmus package asks for (its Fencer and SpinNoter interfaces).
type LitmusTraits struct {
	// Summary is one line for simrun litmus --list: how a test runs on the
	// machine (default: a description of the generic mapping on the verbs
	// the machine offers).
	Summary string
	// Flags are simrun litmus flags that set params of this machine only,
	// e.g. --reorder-ns (reorder_ns).
	Flags []LitmusFlag
	// Head labels the first line of simrun litmus's output (default: the
	// machine's name), e.g. "SCI, reorder_ns 3000".
	Head string
	// Unit is what a home (and a placement) is called: default "node" on a
	// machine with shared segments, else "PE"; "CPU" on a one-node machine.
	Unit string
	// ThreadUnit is what a thread runs on (default Unit), e.g. "process".
	ThreadUnit string
	// MaxUnits bounds a placement (0: the machine's constructor rejects
	// what is too big).
	MaxUnits int
	// Note ends a one-node machine's placement line, saying why placement
	// changes nothing (default: its CPUs share one memory).
	Note string
	// NoAtomics says why atomic instructions are refused (default: atomics
	// are not mapped to the machine's verbs).
	NoAtomics string
	// Start is when the threads of a test of locs locations start, after
	// the warm-up loads (default: four of the slowest loads of cpu per
	// location).
	Start func(locs int, cpu mem.Config) sim.Time
	// StartJitterCycles is the default start jitter span in CPU cycles
	// (default: twice the time, measured on the machine, for a one-word
	// remote write to another node to land).
	StartJitterCycles func() (float64, error)
	// OpJitterCycles is the default instruction jitter span given the start
	// jitter's (default: the same).
	OpJitterCycles func(start float64, cpu mem.Config) float64
}

// LitmusFlag is a simrun litmus flag of a machine: it sets machine param
// Param.
type LitmusFlag struct {
	Name  string // the flag, without dashes, e.g. "reorder-ns"
	Param string // the machine param (YAML key) it sets, e.g. "reorder_ns"
	Usage string
	// Default is the param's value for litmus runs (YAML) when neither the
	// flag nor --param sets it; "": the machine's own default.
	Default string
}

// Package scenarios holds the scenario file format, its strict loader and
// validator, and the built-in scenarios embedded from builtin/*.yaml.
//
// A scenario names a machine, a stack and a workload, each with raw YAML
// params that the component decodes itself (so its errors keep file and
// line), and optionally several series that override those params, figures
// to draw and reference points from the papers. See README.md for the format.
//
// Layer: imports report (claims, references) and internal/strictyaml only:
// it knows no machine, stack or workload, whose params stay raw YAML until
// the registry resolves them. runner and commands import it.
package scenarios

import (
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"gopkg.in/yaml.v3"
)

// Scenario is one scenario file.
type Scenario struct {
	Name        string      `yaml:"name" required:"true"` // identifier, e.g. "mpich-sx4-latency"
	Title       string      `yaml:"title"`                // one-line human title
	Description string      `yaml:"description"`          // what it shows and why
	Seed        uint64      `yaml:"seed"`                 // engine seed; default 1
	Machine     Component   `yaml:"machine"`              // name + params, decoded by the machine
	Stack       Component   `yaml:"stack"`                // name + params (options), decoded by the stack
	Workload    Component   `yaml:"workload" required:"true"`
	Series      []Series    `yaml:"series"`     // several configurations in one run (curves of one figure)
	Figures     []Figure    `yaml:"figures"`    // figures to draw from the results
	References  []Reference `yaml:"references"` // published points to overlay and score
	Claims      []Claim     `yaml:"claims"`     // the paper's statements, checked on the results
	Expect      *Expect     `yaml:"expect"`     // set when the run is expected to fail
	Limits      Limits      `yaml:"limits"`     // bounds so that no run hangs
	Cost        Cost        `yaml:"cost"`       // approximate host cost of a run, for picking fast scenarios
	// Calibration names calibration files (calibration/NAME.yaml) whose
	// fitted values are the defaults of every series whose machine or
	// stack they fit; the scenario's own params win. The runner turns
	// them into Settings.
	Calibration []string `yaml:"calibration"`
	File        string   `yaml:"-"` // where it was loaded from ("builtin/NAME.yaml" for built-ins)
	// Settings are param values applied to every series whose machine or
	// stack is their component, when the series are resolved: the
	// included calibrations' fitted values (under the scenario's params),
	// or a fit's trial values (over them).
	Settings []Setting `yaml:"-"`

	root *yaml.Node // parsed document, for positions in validation errors
}

// Component selects a machine, stack or workload by Name and carries its
// params as a raw YAML node (with line numbers) that the component decodes
// with DecodeParams into its own Params struct.
type Component struct {
	Name   string    `yaml:"name"`
	Params yaml.Node `yaml:"params"` // Kind 0 when absent

	File  string `yaml:"-"` // file the params come from (set by Parse)
	Field string `yaml:"-"` // YAML path of the component, e.g. "machine" or "series[1].machine"
}

// DecodeParams strictly decodes c.Params into out (a pointer, usually to a
// struct already holding the defaults): only the params present are
// overwritten; an unknown or mistyped param is an error naming file, line
// and field (e.g. "machine.params.semop_us").
func (c *Component) DecodeParams(out any) error {
	return strictyaml.DecodeAt(c.File, join(c.Field, "params"), &c.Params, out)
}

// HasParams reports whether params were given (not absent, not null).
func (c *Component) HasParams() bool {
	return c.Params.Kind != 0 && !(c.Params.Kind == yaml.ScalarNode && c.Params.ShortTag() == "!!null")
}

// Series is one configuration of a multi-configuration scenario (one curve
// of a figure). Each component given here overrides the scenario's: a
// non-empty Name replaces the component name, and Params are deep-merged
// over the scenario's params (strictyaml.Merge: keys here win, nested
// mappings merge, lists replace).
type Series struct {
	Name     string     `yaml:"name" required:"true"`
	Machine  *Component `yaml:"machine"`
	Stack    *Component `yaml:"stack"`
	Workload *Component `yaml:"workload"`
}

// Figure is one output figure made of panels.
type Figure struct {
	File   string  `yaml:"file" required:"true"` // output base name, e.g. "fig4.png" (relative)
	Title  string  `yaml:"title"`
	Panels []Panel `yaml:"panels"`
}

// Panel is one plot of a figure.
type Panel struct {
	Title  string   `yaml:"title"`
	Metric string   `yaml:"metric" required:"true"` // result metric plotted on y, e.g. "latency_us"
	X      string   `yaml:"x"`                      // x quantity; default "bytes"
	XLabel string   `yaml:"x_label"`
	YLabel string   `yaml:"y_label"`
	XScale string   `yaml:"x_scale"` // "linear" (default) or "log"
	YScale string   `yaml:"y_scale"` // "linear" (default) or "log"
	Series []string `yaml:"series"`  // series drawn, in order; empty means all
	XMin   float64  `yaml:"x_min"`   // 0 with XMax 0: automatic range
	XMax   float64  `yaml:"x_max"`
}

// Reference is a published value to compare with: Metric of Series at X.
type Reference struct {
	Series  string  `yaml:"series" required:"true"` // a series name, or the scenario name when there are no series
	Metric  string  `yaml:"metric" required:"true"`
	X       float64 `yaml:"x" required:"true"`
	Value   float64 `yaml:"value" required:"true"`
	Unit    string  `yaml:"unit"`
	Source  string  `yaml:"source"`   // where the number comes from, e.g. "mpich-sx4.txt, Table 2"
	HeldOut bool    `yaml:"held_out"` // not used for calibration; the model is judged on it
	// System, when set, is the machine the value was measured on when it
	// is not the simulated one (a paper's point of comparison, e.g. "Cray
	// Origin 2000"): Series then names a reference-only series, which no
	// simulated series may be called; it is drawn on the figures and
	// listed in the summary, never compared with a simulated value.
	System string `yaml:"system"`
}

// Claim is a statement of the scenario's paper turned into a check on its
// results (report.Claim: kinds ratio, above, below, monotone, fit,
// crossover, band); the loader checks its fields and series names.
type Claim = report.Claim

// Failure kinds a scenario may expect (the kinds workloads report).
const (
	FailureCorruption = "corruption"
	FailureLoss       = "loss"
	FailureLivelock   = "livelock"
	FailureDeadlock   = "deadlock"
)

// Expect marks a run that must fail (teaching demonstrations: a protocol
// without its fence must corrupt a message).
type Expect struct {
	Failure string `yaml:"failure" required:"true"` // corruption | loss | livelock | deadlock
	Why     string `yaml:"why"`
}

// Limits bound a run; zero means the runner's default. MaxEvents and
// MaxSimTimeUS bound each simulation in simulated terms (a series that
// reaches one fails with a "limit", the same on every machine);
// MaxWallSeconds is only the run's watchdog, which abandons the whole run
// and never changes a result (scenarios/README.md, Limits).
type Limits struct {
	MaxEvents      uint64  `yaml:"max_events"`
	MaxSimTimeUS   float64 `yaml:"max_sim_time_us"`
	MaxWallSeconds float64 `yaml:"max_wall_seconds"`
}

// Cost is the approximate host cost of running a scenario once (all its
// series), as measured by its author; zero means small. It bounds nothing:
// tools use it to skip slow scenarios (simrun claims --fast).
type Cost struct {
	WallSeconds float64 `yaml:"wall_seconds"` // on one core of a 2020s machine
	MemoryGB    float64 `yaml:"memory_gb"`    // peak resident memory
}

// Setting is one param value for every series whose machine or stack is
// named Component: Field set to Node, under the series' own params
// (Override false: a default, as a calibration file's fitted value) or
// over them (Override true: a fit's trial value, which must move the
// param whatever the scenario says).
type Setting struct {
	Component string
	Field     string
	Node      *yaml.Node
	Override  bool
}

// apply merges the settings for component c's name into its params.
func apply(c *Component, settings []Setting) {
	for _, st := range settings {
		if st.Component != c.Name || c.Name == "" {
			continue
		}
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.Field}, st.Node,
		}}
		var n *yaml.Node
		if st.Override {
			n = strictyaml.Merge(&c.Params, m)
		} else {
			n = strictyaml.Merge(m, &c.Params)
		}
		if n != nil {
			c.Params = *n
		}
	}
}

// Resolved is one configuration to run: the scenario's components with a
// series' overrides applied.
type Resolved struct {
	Name     string // series name, or the scenario name when there are no series
	Index    int    // index in Scenario.Series, or -1
	Machine  Component
	Stack    Component
	Workload Component
}

// Resolved returns the configurations to run, one per series in order, or a
// single one named after the scenario when it has no series. Params are
// merged with strictyaml.Merge, so every value keeps its line number.
func (s *Scenario) Resolved() []Resolved {
	if len(s.Series) == 0 {
		return []Resolved{{
			Name:     s.Name,
			Index:    -1,
			Machine:  s.component(s.Machine, nil, "machine", -1),
			Stack:    s.component(s.Stack, nil, "stack", -1),
			Workload: s.component(s.Workload, nil, "workload", -1),
		}}
	}
	out := make([]Resolved, len(s.Series))
	for i, se := range s.Series {
		out[i] = Resolved{
			Name:     se.Name,
			Index:    i,
			Machine:  s.component(s.Machine, se.Machine, "machine", i),
			Stack:    s.component(s.Stack, se.Stack, "stack", i),
			Workload: s.component(s.Workload, se.Workload, "workload", i),
		}
	}
	return out
}

// component applies an optional series override to a base component.
func (s *Scenario) component(base Component, over *Component, key string, i int) (c Component) {
	c = Component{Name: base.Name, File: s.File, Field: key}
	defer apply(&c, s.Settings)
	if over == nil {
		if n := strictyaml.Merge(&base.Params, nil); n != nil {
			c.Params = *n
		}
		return c
	}
	if over.Name != "" {
		c.Name = over.Name
	}
	if over.HasParams() {
		c.Field = seriesField(i, key)
	}
	if n := strictyaml.Merge(&base.Params, &over.Params); n != nil {
		c.Params = *n
	}
	return c
}

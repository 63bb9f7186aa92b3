package litmus

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/litmus"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// Params are the litmus workload's scenario params:
//
//	workload: {name: litmus, params: {test: MP, model: pso, runs: 1000}}
type Params struct {
	Test  string `yaml:"test" required:"true"` // a test name (see Names), e.g. MP or SB+fences, or a .litmus file
	Model string `yaml:"model"`                // built-in CPU model or YAML file; default sc
	Runs  int    `yaml:"runs"`                 // default DefaultRuns
	// The jitters default to DefaultJitterCycles of the test on the model.
	StartJitterCycles *float64 `yaml:"start_jitter_cycles"`
	OpJitterCycles    *float64 `yaml:"op_jitter_cycles"`
	DrainJitterCycles *float64 `yaml:"drain_jitter_cycles"` // default: the model's (0 on the built-ins)
	Warm              bool     `yaml:"warm"`                // default true: caches hold the locations at the start
	// Exhaustive: enumerate every final state the model allows (Explore)
	// instead of sampling runs; "count" is then 1 per reachable state.
	Exhaustive bool `yaml:"exhaustive"`
}

// DefaultParams are the params a scenario overrides.
func DefaultParams() Params {
	return Params{Model: "sc", Runs: litmus.DefaultRuns, Warm: true}
}

// Decode decodes and checks a scenario's litmus params.
func Decode(s workloads.Spec) (Params, litmus.Test, error) {
	p := DefaultParams()
	field := s.Workload.ParamsField("workload")
	if err := strictyaml.DecodeAt(s.File, field, s.Workload.Params, &p); err != nil {
		return p, litmus.Test{}, err
	}
	dir := ""
	if s.File != "" && !strings.HasPrefix(s.File, "builtin/") {
		dir = filepath.Dir(s.File)
	}
	t, err := litmus.LoadTest(p.Test, dir)
	if err != nil {
		var pe *litmus.ParseError
		if errors.As(err, &pe) { // the test file itself is bad: its own file and line
			return p, litmus.Test{}, fmt.Errorf("%s.test: %w", field, err)
		}
		return p, litmus.Test{}, strictyaml.Errorf(s.File, find(s, "test"), field+".test", "%v", err)
	}
	if p.Runs <= 0 {
		return p, litmus.Test{}, strictyaml.Errorf(s.File, find(s, "runs"), field+".runs", "must be positive, got %d", p.Runs)
	}
	for _, j := range []struct {
		key string
		v   *float64
	}{{"start_jitter_cycles", p.StartJitterCycles}, {"op_jitter_cycles", p.OpJitterCycles}, {"drain_jitter_cycles", p.DrainJitterCycles}} {
		if j.v != nil && !(*j.v >= 0 && !math.IsInf(*j.v, 0)) {
			return p, litmus.Test{}, strictyaml.Errorf(s.File, find(s, j.key), field+"."+j.key, "must be a finite number ≥ 0, got %g", *j.v)
		}
	}
	return p, t, nil
}

func find(s workloads.Spec, key string) *yaml.Node {
	if s.Workload.Params == nil {
		return nil
	}
	return strictyaml.Find(s.Workload.Params, key)
}

// job is a decoded, checked litmus series.
type job struct {
	p   Params
	t   litmus.Test
	cfg mem.Config
}

func prepare(s workloads.Spec) (job, error) {
	p, t, err := Decode(s)
	if err != nil {
		return job{}, err
	}
	dir := ""
	if s.File != "" && !strings.HasPrefix(s.File, "builtin/") {
		dir = filepath.Dir(s.File)
	}
	cfg, err := litmus.LoadModel(p.Model, dir)
	if err != nil {
		var se *strictyaml.Error
		if errors.As(err, &se) { // the model file itself is bad: its own file and line
			return job{}, fmt.Errorf("%s.model: %w", s.Workload.ParamsField("workload"), err)
		}
		return job{}, strictyaml.Errorf(s.File, find(s, "model"), s.Workload.ParamsField("workload")+".model", "%v", err)
	}
	return job{p, t, cfg}, nil
}

// Run is the litmus workload's workloads.Runner. It runs the test params.runs
// times and returns rows (metric "count" in runs per final state, with
// x_name Test.StateName() and x the state's Code, e.g. x_name "state_r0r1",
// x 10 for r0=1, r1=0, and x report.NoFinalState (-1) for the runs that
// ended with no final state (deadlock, livelock or limit), so that the
// counts sum to the runs; and at x_name "runs", x = runs, the
// metrics "positive", "negative" and "observed" (1 if the condition was
// seen); metric report.Witness (1) at each final state reached that
// satisfies the condition), the litmus7-style output as notes, and, if some run deadlocked or
// livelocked, the first such error (wrapping the engine's error). With
// params.exhaustive it explores instead: "count" is 1 per reachable final
// state, x at x_name "runs" the number of states, and the notes are
// herd7-style.
func Run(s workloads.Spec) (workloads.Result, error) {
	j, err := prepare(s)
	if err != nil {
		return workloads.Result{}, err
	}
	p, t, cfg := j.p, j.t, j.cfg
	opts := litmus.DefaultOptions(t, cfg)
	opts.Runs, opts.Seed, opts.Warm = p.Runs, s.Seed, p.Warm
	s.Limits = litmus.WithDefaultLimits(s.Limits) // the scenario's limits, per run
	opts.NewEngine = s.NewEngine
	if p.StartJitterCycles != nil {
		opts.StartJitterCycles = *p.StartJitterCycles
	}
	if p.OpJitterCycles != nil {
		opts.OpJitterCycles = *p.OpJitterCycles
	}
	if p.DrainJitterCycles != nil {
		opts.DrainJitterCycles = *p.DrainJitterCycles
	}
	var o *litmus.Outcome
	if p.Exhaustive {
		o, err = litmus.Explore(t, p.Model, cfg, p.Warm)
	} else {
		o, err = litmus.RunTest(t, p.Model, cfg, opts)
	}
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	var rows report.Results
	for _, st := range o.States {
		if st.Code < 0 {
			return workloads.Result{}, fmt.Errorf("litmus %s: state %s has values too wide for a state code (x of the count rows)", t.Name, st.Text)
		}
		rows.Add(s.Series, t.StateName(), float64(st.Code), "count", float64(st.Count), "runs")
	}
	for _, st := range o.States {
		if st.Cond {
			// The states the condition asks about, which the figures mark.
			rows.Add(s.Series, t.StateName(), float64(st.Code), report.Witness, 1, "bool")
		}
	}
	if o.Failed > 0 {
		n := o.Failed
		if p.Exhaustive {
			n = 1 // "no final state" is one more outcome
		}
		rows.Add(s.Series, t.StateName(), report.NoFinalState, "count", float64(n), "runs")
	}
	observed := 0.0
	if o.Observed() {
		observed = 1
	}
	n := float64(p.Runs)
	if p.Exhaustive {
		n = float64(len(o.States))
	}
	rows.Add(s.Series, "runs", n, "positive", float64(o.Positive), "runs")
	rows.Add(s.Series, "runs", n, "negative", float64(o.Negative), "runs")
	rows.Add(s.Series, "runs", n, "observed", observed, "bool")
	res.Rows = rows
	var buf bytes.Buffer
	if err := litmus.Write(&buf, o); err != nil {
		return res, err
	}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		res.Notes = append(res.Notes, s.Series+": "+line)
	}
	res.Events, res.SimTime = o.Events, o.SimTime
	if o.FirstFailure != nil {
		if p.Exhaustive {
			return res, fmt.Errorf("%d paths cannot finish; first: %w", o.Failed, o.FirstFailure)
		}
		return res, fmt.Errorf("%d of %d runs failed; first: %w", o.Failed, p.Runs, o.FirstFailure)
	}
	return res, nil
}

// Check decodes and checks a scenario's litmus params and model without
// running anything (simrun validate).
func Check(s workloads.Spec) error {
	_, err := prepare(s)
	return err
}

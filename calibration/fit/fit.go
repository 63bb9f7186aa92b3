// Package fit fits a calibration file's free parameters to its training
// targets by running their scenarios, and judges the fitted values on
// its validation data.
//
// The objective is the sum over training targets of weight × (relative
// residual)², the relative residual being (simulated − value)/value; a
// claim used as training contributes its relative distance to its band
// (0 when it holds). The search is gonum's Nelder–Mead on the parameters
// mapped into [0, 1] by their bounds (clamped; six significant digits, an
// integer param an integer), from a fixed start simplex, within a bounded
// number of evaluations; its best point is rounded to each parameter's
// step and polished on the steps' grid (the points one step away along
// each parameter, evaluated at once, while one improves). The same file
// gives the same values, byte for byte. Every simulation of an evaluation
// (each target's series) runs in parallel on -j workers, and so do the
// start simplex's and each polishing round's evaluations.
//
// Layer: imports calibration, runner, registry, scenarios and report;
// cmd/simrun imports it.
package fit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"gonum.org/v1/gonum/optimize"
)

// Options adjust a fit.
type Options struct {
	Jobs     int       // simulations at once (<= 0: GOMAXPROCS)
	Progress io.Writer // one line per evaluation (nil: none)
	// MaxEvaluations bounds the objective's evaluations (0:
	// DefaultMaxEvaluations); runs repeated at a point already evaluated
	// (after rounding) are not counted.
	MaxEvaluations int
}

// DefaultMaxEvaluations is the most evaluations a fit makes: enough for
// Nelder–Mead to settle a few parameters to well under a percent.
const DefaultMaxEvaluations = 150

// Evaluation is one point the search evaluated.
type Evaluation struct {
	N         int       // 1, 2, ... in the order the search asked
	Params    []float64 // in the order of the file's free:, rounded
	Objective float64
}

// Residual is one training target at the fitted values.
type Residual struct {
	Target    calibration.Target
	Label     string
	Simulated float64 // the metric's value, or the claim's key figure
	Relative  float64 // (simulated − value)/value, or the claim's distance to its band
	Claim     *report.ClaimResult
}

// Result is a fit.
type Result struct {
	File        *calibration.File
	Values      map[string]float64 // each free parameter's fitted value, rounded
	Params      []float64          // the same, in the order of free:
	Objective   float64
	Evaluations []Evaluation // every point evaluated, in order
	Residuals   []Residual
	Status      string // why the search stopped
}

// Check checks what the file names against the registry and the built-in
// scenarios: every free parameter is a param of a registered machine or
// stack, used by a training target's series; every scenario, series and
// claim exists. Every problem, located in the file.
func Check(reg *registry.Registry, f *calibration.File) error {
	var errs []error
	scen := map[string]*scenarios.Scenario{}
	load := func(name, field string) *scenarios.Scenario {
		if s, ok := scen[name]; ok {
			return s
		}
		s, err := scenarios.LoadBuiltin(name)
		if err != nil {
			errs = append(errs, f.FieldError(field, "%v", err))
			s = nil
		}
		scen[name] = s
		return s
	}
	used := map[string]bool{} // components the training series run
	for i, t := range f.Training {
		at := fmt.Sprintf("training[%d]", i)
		s := load(t.Scenario, at+".scenario")
		if s == nil {
			continue
		}
		series := []string{t.Series}
		if t.Claim != "" {
			k := slices.IndexFunc(s.Claims, func(c scenarios.Claim) bool { return c.Name == t.Claim })
			if k < 0 {
				errs = append(errs, f.FieldError(at+".claim", "scenario %s has no claim %q (it has: %s)", t.Scenario, t.Claim, claimNames(s)))
				continue
			}
			series = claimSeries(s.Claims[k])
		}
		found := false
		for _, r := range s.Resolved() {
			if slices.Contains(series, r.Name) {
				found = true
				used[r.Machine.Name] = true
				used[r.Stack.Name] = true
			}
		}
		if !found && t.Claim == "" {
			errs = append(errs, f.FieldError(at+".series", "scenario %s has no series %q (it has: %s)", t.Scenario, t.Series, seriesNames(s)))
		}
	}
	for i, p := range f.Free {
		for k, name := range p.Params() {
			at := fmt.Sprintf("free[%d].param", i)
			if k > 0 {
				at = fmt.Sprintf("free[%d].also[%d]", i, k-1)
			}
			comp, field, _ := strings.Cut(name, ".")
			def, kind, err := defaults(reg, comp)
			if err != nil {
				errs = append(errs, f.FieldError(at, "%v", err))
				continue
			}
			if _, ok := fieldValue(def, field); !ok {
				errs = append(errs, f.FieldError(at, "%s %s has no numeric param %q (simrun params %s lists them)", kind, comp, field, comp))
				continue
			}
			if !used[comp] {
				errs = append(errs, f.FieldError(at, "no training target runs %s: the fit could not move %s", comp, name))
			}
		}
	}
	for i, sel := range f.Validation.Claims {
		at := fmt.Sprintf("validation.claims[%d]", i)
		s := load(sel.Scenario, at+".scenario")
		if s != nil && sel.Claim != "" && !slices.ContainsFunc(s.Claims, func(c scenarios.Claim) bool { return c.Name == sel.Claim }) {
			errs = append(errs, f.FieldError(at+".claim", "scenario %s has no claim %q (it has: %s)", sel.Scenario, sel.Claim, claimNames(s)))
		}
	}
	for i, sel := range f.Validation.References {
		at := fmt.Sprintf("validation.references[%d]", i)
		s := load(sel.Scenario, at+".scenario")
		if s != nil && len(s.References) == 0 {
			errs = append(errs, f.FieldError(at+".scenario", "scenario %s has no references", sel.Scenario))
		}
		if sel.Claim != "" {
			errs = append(errs, f.FieldError(at+".claim", "a references selector takes no claim"))
		}
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		var x, y *strictyaml.Error
		errors.As(a, &x)
		errors.As(b, &y)
		if x == nil || y == nil {
			return 0
		}
		if x.Line != y.Line {
			return x.Line - y.Line
		}
		return x.Column - y.Column
	})
	return errors.Join(errs...)
}

func claimNames(s *scenarios.Scenario) string {
	var n []string
	for _, c := range s.Claims {
		n = append(n, c.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

func seriesNames(s *scenarios.Scenario) string {
	var n []string
	for _, r := range s.Resolved() {
		n = append(n, r.Name)
	}
	return strings.Join(n, ", ")
}

// claimSeries are the series a claim reads.
func claimSeries(c scenarios.Claim) []string {
	if c.Other != "" && c.Other != c.Series {
		return []string{c.Series, c.Other}
	}
	return []string{c.Series}
}

// defaults are the default params of the machine or stack name.
func defaults(reg *registry.Registry, name string) (any, string, error) {
	if m, ok := reg.LookupMachine(name); ok {
		d, err := m.Defaults()
		return d, "machine", err
	}
	if s, ok := reg.LookupStack(name); ok {
		d, err := s.Defaults()
		return d, "stack", err
	}
	return nil, "", fmt.Errorf("no machine or stack %q (simrun params lists them)", name)
}

// Default is the default value of param (COMPONENT.FIELD) in reg, as a
// number.
func Default(reg *registry.Registry, param string) (float64, error) {
	c, fl, _ := strings.Cut(param, ".")
	def, kind, err := defaults(reg, c)
	if err != nil {
		return 0, err
	}
	v, ok := fieldValue(def, fl)
	if !ok {
		return 0, fmt.Errorf("%s %s has no numeric param %q", kind, c, fl)
	}
	return v, nil
}

// isInt reports whether the field of the struct v whose yaml tag is name
// is an integer.
func isInt(v any, name string) bool {
	if _, ok := fieldValue(v, name); !ok {
		return false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		rv = rv.Elem()
	}
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == name {
			k := t.Field(i).Type.Kind()
			return k != reflect.Float32 && k != reflect.Float64
		}
	}
	return false
}

// fieldValue is the numeric field of the struct v whose yaml tag is name.
func fieldValue(v any, name string) (float64, bool) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return 0, false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return 0, false
	}
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") || (sf.Anonymous && tag == "") {
			if x, ok := fieldValue(rv.Field(i).Interface(), name); ok {
				return x, true
			}
			continue
		}
		if tag != name {
			continue
		}
		switch fv := rv.Field(i); fv.Kind() {
		case reflect.Float32, reflect.Float64:
			return fv.Float(), true
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return float64(fv.Int()), true
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return float64(fv.Uint()), true
		}
		return 0, false
	}
	return 0, false
}

// target is a training target ready to run: its scenario reduced to the
// series it reads and its reduce merged over the workload params.
type target struct {
	t calibration.Target
	s *scenarios.Scenario
	c *report.Claim
}

// prepare loads and reduces each target's scenario.
func prepare(f *calibration.File) ([]target, error) {
	var out []target
	for i, t := range f.Training {
		s, err := scenarios.LoadBuiltin(t.Scenario)
		if err != nil {
			return nil, f.FieldError(fmt.Sprintf("training[%d].scenario", i), "%v", err)
		}
		x := target{t: t, s: s}
		keep := []string{t.Series}
		if t.Claim != "" {
			k := slices.IndexFunc(s.Claims, func(c scenarios.Claim) bool { return c.Name == t.Claim })
			if k < 0 {
				return nil, f.FieldError(fmt.Sprintf("training[%d].claim", i), "scenario %s has no claim %q", t.Scenario, t.Claim)
			}
			c := s.Claims[k]
			x.c = &c
			keep = claimSeries(c)
		}
		if len(s.Series) > 0 {
			s.Series = slices.DeleteFunc(s.Series, func(se scenarios.Series) bool { return !slices.Contains(keep, se.Name) })
		}
		if t.Reduce.Kind != 0 {
			r := t.Reduce
			merge := func(c *scenarios.Component) {
				if n := strictyaml.Merge(&c.Params, &r); n != nil {
					c.Params = *n
				}
			}
			merge(&s.Workload)
			for k := range s.Series {
				if w := s.Series[k].Workload; w != nil && w.HasParams() {
					merge(w)
				}
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// evaluator runs the targets at parameter values, remembering each point.
type evaluator struct {
	reg     *registry.Registry
	f       *calibration.File
	targets []target
	jobs    int
	ints    []bool // which free params are integers
	// recorded are the points already in the result's evaluations.
	recorded map[string]bool

	mu    sync.Mutex
	cache map[string]point
	evals []Evaluation
}

// point is the outcome of the targets at one parameter vector.
type point struct {
	obj  float64
	res  []Residual
	err  error
	done bool
}

func key(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		b.WriteByte(' ')
	}
	return b.String()
}

// values maps a point of [0,1]^n to parameter values: clamped, rounded
// to six significant digits (what a scenario's YAML carries), and to an
// integer for an integer param. The search runs on these; only its result
// is rounded to each parameter's step (Run).
func (e *evaluator) values(u []float64) []float64 {
	v := make([]float64, len(u))
	for i, p := range e.f.Free {
		x := math.Min(math.Max(u[i], 0), 1)
		v[i] = round6(*p.Min + x*(*p.Max-*p.Min))
		if e.ints[i] {
			v[i] = math.Round(v[i])
		}
	}
	return v
}

// rounded is v rounded to each parameter's step.
func (e *evaluator) rounded(v []float64) []float64 {
	r := make([]float64, len(v))
	for i, p := range e.f.Free {
		r[i] = p.Round(v[i])
		if e.ints[i] {
			r[i] = math.Round(r[i])
		}
	}
	return r
}

func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

// run evaluates several parameter vectors at once (their simulations on
// one pool), each at most once.
func (e *evaluator) run(vs [][]float64) ([]point, error) {
	type todo struct {
		k      string
		v      []float64
		groups []int // indexes in groups, one per target
	}
	var jobs []todo
	var groups []runner.Group
	seen := map[string]bool{}
	for _, v := range vs {
		k := key(v)
		e.mu.Lock()
		_, ok := e.cache[k]
		e.mu.Unlock()
		if ok || seen[k] {
			continue
		}
		seen[k] = true
		j := todo{k: k, v: v}
		for _, t := range e.targets {
			s := *t.s
			s.Settings = nil
			s.Settings = settings(e.f, v, false)
			sp, err := runner.Specs(e.reg, &s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.t.Label(), err)
			}
			j.groups = append(j.groups, len(groups))
			groups = append(groups, runner.Group{Name: t.t.Scenario, Specs: sp})
		}
		jobs = append(jobs, j)
	}
	if len(groups) > 0 {
		outs, err := runner.Run(groups, e.jobs, nil)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			p := point{done: true}
			for ti, g := range j.groups {
				r, err := e.residual(e.targets[ti], outs[g])
				if err != nil && p.err == nil {
					p.err = err
				}
				p.res = append(p.res, r)
				p.obj += e.targets[ti].t.WeightValue() * r.Relative * r.Relative
			}
			e.mu.Lock()
			e.cache[j.k] = p
			e.mu.Unlock()
		}
	}
	out := make([]point, len(vs))
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, v := range vs {
		out[i] = e.cache[key(v)]
		if out[i].err != nil {
			return nil, out[i].err
		}
	}
	return out, nil
}

// residual is target t's residual on its runs.
func (e *evaluator) residual(t target, runs []runner.Outcome) (Residual, error) {
	r := Residual{Target: t.t, Label: t.t.Label()}
	var rows []report.Row
	for i := range runs {
		o := &runs[i]
		if o.Err != nil {
			return r, fmt.Errorf("%s: series %s: %w", r.Label, o.Spec.Series, o.Err)
		}
		if len(o.Result.Failures) > 0 {
			fl := o.Result.Failures[0]
			return r, fmt.Errorf("%s: series %s: %s: %s", r.Label, o.Spec.Series, fl.Kind, fl.Detail)
		}
		runner.DropNonFinite(&o.Result)
		rows = append(rows, o.Result.Rows...)
	}
	if t.c != nil {
		cr := report.EvaluateClaims(rows, []report.Claim{*t.c})[0]
		r.Claim = &cr
		r.Simulated = cr.Value
		r.Relative = ClaimDistance(cr)
		return r, nil
	}
	for _, row := range rows {
		if row.Series == t.t.Series && row.Metric == t.t.Metric && row.X == *t.t.X {
			r.Simulated = row.Value
			r.Relative = (row.Value - *t.t.Value) / *t.t.Value
			return r, nil
		}
	}
	var have []string
	for _, row := range rows {
		if row.Series == t.t.Series && !slices.Contains(have, row.Metric) {
			have = append(have, row.Metric)
		}
	}
	return r, fmt.Errorf("%s: the run gave no %s at %s=%g (metrics of series %s: %s; does reduce keep that point?)", r.Label, t.t.Metric, xName(rows, t.t.Series), *t.t.X, t.t.Series, strings.Join(have, ", "))
}

func xName(rows []report.Row, series string) string {
	for _, r := range rows {
		if r.Series == series {
			return r.XName
		}
	}
	return "x"
}

// ClaimDistance is how far a claim's verdict is from holding: 0 when it
// holds, the relative distance of its key figure to the violated bound,
// else 1.
func ClaimDistance(r report.ClaimResult) float64 {
	if r.Holds {
		return 0
	}
	c := r.Claim
	if r.Missing == "" {
		if c.Min != nil && r.Value < *c.Min {
			return (*c.Min - r.Value) / math.Max(math.Abs(*c.Min), 1e-12)
		}
		if c.Max != nil && r.Value > *c.Max {
			return (r.Value - *c.Max) / math.Max(math.Abs(*c.Max), 1e-12)
		}
	}
	return 1
}

// Run fits the file's free parameters (the file must have passed Check).
func Run(reg *registry.Registry, f *calibration.File, o Options) (*Result, error) {
	targets, err := prepare(f)
	if err != nil {
		return nil, err
	}
	e := &evaluator{reg: reg, f: f, targets: targets, jobs: o.Jobs, cache: map[string]point{}}
	for _, p := range f.Free {
		def, _, _ := defaults(reg, p.Component())
		e.ints = append(e.ints, isInt(def, p.Field()))
	}
	maxEval := o.MaxEvaluations
	if maxEval <= 0 {
		maxEval = DefaultMaxEvaluations
	}
	n := len(f.Free)
	u0 := make([]float64, n)
	for i, p := range f.Free {
		u0[i] = (p.StartValue() - *p.Min) / (*p.Max - *p.Min)
	}
	// The start simplex: the start, and a step of simplexSize along each
	// parameter (inwards at an upper bound), evaluated at once.
	verts := [][]float64{slices.Clone(u0)}
	for i := range n {
		v := slices.Clone(u0)
		if v[i]+simplexSize <= 1 {
			v[i] += simplexSize
		} else {
			v[i] -= simplexSize
		}
		verts = append(verts, v)
	}
	var vals [][]float64
	for _, v := range verts {
		vals = append(vals, e.values(v))
	}
	pts, err := e.run(vals)
	if err != nil {
		return nil, err
	}
	var firstErr error
	res := &Result{File: f}
	e.recorded = map[string]bool{}
	record := func(v []float64, obj float64) {
		e.recorded[key(v)] = true
		res.Evaluations = append(res.Evaluations, Evaluation{N: len(res.Evaluations) + 1, Params: v, Objective: obj})
		if o.Progress != nil {
			var ps []string
			for i, p := range f.Free {
				ps = append(ps, p.Param+"="+calibration.FormatValue(v[i], 0))
			}
			fmt.Fprintf(o.Progress, "simrun calibrate %s: evaluation %d: %s: objective %.4g\n", f.Name, len(res.Evaluations), strings.Join(ps, " "), obj)
		}
	}
	initVals := make([]float64, len(pts))
	for i, p := range pts {
		initVals[i] = p.obj
		record(vals[i], p.obj)
	}
	problem := optimize.Problem{Func: func(u []float64) float64 {
		if firstErr != nil {
			return math.Inf(1)
		}
		v := e.values(u)
		e.mu.Lock()
		p, ok := e.cache[key(v)]
		e.mu.Unlock()
		if !ok {
			ps, err := e.run([][]float64{v})
			if err != nil {
				firstErr = err
				return math.Inf(1)
			}
			p = ps[0]
			record(v, p.obj)
		}
		return p.obj
	}}
	method := &optimize.NelderMead{InitialVertices: verts, InitialValues: initVals}
	settings := &optimize.Settings{
		FuncEvaluations: 4 * maxEval, // cached repeats included; the fresh ones are bounded below
		Converger: &budget{max: maxEval, evals: func() int { return len(res.Evaluations) },
			conv:  &optimize.FunctionConverge{Absolute: 1e-9, Relative: 1e-4, Iterations: 10},
			round: func(u []float64) string { return key(e.rounded(e.values(u))) }, stall: 4 + 2*n},
	}
	r, err := optimize.Minimize(problem, u0, settings, method)
	if firstErr != nil {
		return nil, firstErr
	}
	if err != nil && r == nil {
		return nil, fmt.Errorf("calibrate %s: %w", f.Name, err)
	}
	// The best point evaluated, rounded to the steps; then the rounded
	// points one step away along each parameter, all at once: the best
	// of them is the fit (the first among equals).
	best := 0
	for i, ev := range res.Evaluations {
		if ev.Objective < res.Evaluations[best].Objective {
			best = i
		}
	}
	centre := e.rounded(res.Evaluations[best].Params)
	cp, err := e.run([][]float64{centre})
	if err != nil {
		return nil, err
	}
	if _, seen := e.recorded[key(centre)]; !seen {
		record(centre, cp[0].obj)
	}
	obj := cp[0].obj
	for round := 0; round < maxPolish; round++ {
		var cands [][]float64
		for i, p := range f.Free {
			if p.Step <= 0 {
				continue
			}
			for _, d := range []float64{-p.Step, p.Step} {
				c := slices.Clone(centre)
				c[i] = p.Round(c[i] + d)
				if c[i] != centre[i] {
					cands = append(cands, c)
				}
			}
		}
		if len(cands) == 0 {
			break
		}
		cp, err := e.run(cands)
		if err != nil {
			return nil, err
		}
		pick := -1
		for i, c := range cands {
			if _, seen := e.recorded[key(c)]; !seen {
				record(c, cp[i].obj)
			}
			if cp[i].obj < obj && (pick < 0 || cp[i].obj < cp[pick].obj) {
				pick = i
			}
		}
		if pick < 0 {
			break
		}
		centre, obj = cands[pick], cp[pick].obj
	}
	res.Params = centre
	res.Objective = obj
	res.Status = r.Status.String()
	res.Values = map[string]float64{}
	for i, p := range f.Free {
		res.Values[p.Param] = res.Params[i]
	}
	p := e.cache[key(res.Params)]
	res.Residuals = p.res
	return res, nil
}

// Settings are the scenario settings that put each free parameter (and
// its also: params) at v[i], rounded to its step, over every value the
// scenario sets.
func Settings(f *calibration.File, v []float64) []scenarios.Setting { return settings(f, v, true) }

// settings are Settings, the values rounded to their steps or (a search's
// trial) written as they are (six significant digits).
func settings(f *calibration.File, v []float64, steps bool) []scenarios.Setting {
	var out []scenarios.Setting
	for i, p := range f.Free {
		step := 0.0
		if steps {
			step = p.Step
		}
		for _, name := range p.Params() {
			c, fl, _ := strings.Cut(name, ".")
			cv := calibration.Value{Component: c, Field: fl, Value: v[i], Step: step}
			out = append(out, scenarios.Setting{Component: c, Field: fl, Node: cv.Node(), Override: true})
		}
	}
	return out
}

// maxPolish bounds the rounds of the search on the steps' grid that
// follows Nelder–Mead: each round evaluates the points one step away along
// each parameter (at once) and moves to the best if it improves.
const maxPolish = 30

// simplexSize is the start simplex's edge, in the [0, 1] range of each
// parameter.
const simplexSize = 0.05

// budget stops the search after max fresh evaluations, when the best
// point, rounded to the steps, has not changed for stall iterations (a
// finer search could not change the result), or when conv says it
// converged.
type budget struct {
	max   int
	evals func() int
	conv  optimize.Converger
	round func([]float64) string
	stall int

	last string
	same int
}

func (b *budget) Init(dim int) { b.conv.Init(dim); b.last, b.same = "", 0 }

func (b *budget) Converged(loc *optimize.Location) optimize.Status {
	if b.evals() >= b.max {
		return optimize.FunctionEvaluationLimit
	}
	if r := b.round(loc.X); r == b.last {
		b.same++
		if b.same >= b.stall {
			return optimize.FunctionConvergence
		}
	} else {
		b.last, b.same = r, 0
	}
	return b.conv.Converged(loc)
}

package runner

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// DefaultMaxEvents is the largest number of events a scenario's series
// may be estimated to take (Estimate) unless the caller raises it: about
// half an hour of CPU at the engine's cost per event of a networked
// machine, 25 times the largest built-in (t3d-fig4, 390 M events).
const DefaultMaxEvents = 1e10

// LoadOptions adjust what Load loads.
type LoadOptions struct {
	// Adjust, if not nil, changes the scenario before it is resolved (a
	// seed given on the command line).
	Adjust func(*scenarios.Scenario)
	// MaxEvents is the largest estimated size of a series, in events
	// (0: DefaultMaxEvents; negative: no limit).
	MaxEvents float64
}

// Load loads the scenario arg (a file, or a built-in's name: see
// scenarios.Lookup), adjusts it, resolves its series into specs through
// reg and checks them, their estimated size included (CheckCost): every
// problem, each once, in file order (at most strictyaml.MaxErrors).
// Validating and running a scenario both go through Load, so that a run
// never fails on an input validation accepted.
func Load(reg *registry.Registry, arg string, o LoadOptions) (*scenarios.Scenario, []workloads.Spec, []error) {
	s, err := scenarios.Lookup(arg)
	if s == nil {
		return nil, nil, InputErrors(nil, err)
	}
	errs := []error{err}
	if o.Adjust != nil {
		o.Adjust(s)
	}
	sp, err := Specs(reg, s)
	check := Check(reg, s, sp)
	errs = append(errs, err, check)
	if err == nil && check == nil {
		errs = append(errs, CheckCost(reg, s, sp, o.MaxEvents))
	}
	all := InputErrors(s, errors.Join(errs...))
	sortByPosition(all)
	if len(all) > strictyaml.MaxErrors {
		all = append(all[:strictyaml.MaxErrors], fmt.Errorf("%s: too many errors (the first %d are listed); fix them and validate again", s.File, strictyaml.MaxErrors))
	}
	return s, sp, all
}

// errUnresolved is the Open of a spec whose machine or stack did not
// resolve (already reported): workload checks that open it say nothing.
// It is a *strictyaml.Error so that workloads pass it on unchanged.
var errUnresolved error = &strictyaml.Error{Msg: "machine or stack not resolved (reported above)"}

// Check decodes every series' params with its workload's checker in reg,
// if it has one, and returns all the errors (joined, as the checkers gave
// them: inputErrors attributes and deduplicates them).
func Check(reg *registry.Registry, s *scenarios.Scenario, sp []workloads.Spec) error {
	var errs []error
	for _, x := range sp {
		if w, _ := reg.LookupWorkload(x.Workload.Name); w.Check != nil {
			err := w.Check(x)
			var se *strictyaml.Error
			var mc *machines.MissingCapability
			switch {
			case err == nil || errors.Is(err, errUnresolved):
			case !errors.As(err, &se) && errors.As(err, &mc):
				// The stack lacks what the workload needs: point at the
				// workload's name.
				pos := s.FieldError(x.Workload.Field+".name", "").(*strictyaml.Error)
				errs = append(errs, &registry.PairingError{Pos: pos, Err: mc})
			default:
				errs = append(errs, locateParams(x, err))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckCost refuses every series whose workload estimates it at more than
// maxEvents events (0: DefaultMaxEvents; negative: no limit), naming the
// workload param that drives the estimate, at its line.
func CheckCost(reg *registry.Registry, s *scenarios.Scenario, sp []workloads.Spec, maxEvents float64) error {
	if maxEvents == 0 {
		maxEvents = DefaultMaxEvents
	}
	if maxEvents < 0 {
		return nil
	}
	var errs []error
	for _, x := range sp {
		w, _ := reg.LookupWorkload(x.Workload.Name)
		if w.Estimate == nil {
			continue
		}
		e, err := w.Estimate(x)
		if err != nil || e.Events <= maxEvents {
			continue // a bad param is Check's to report
		}
		errs = append(errs, s.FieldError(x.Workload.Field+".params."+e.Param,
			"series %s would take about %.1e events (at ~100 ns an event, %s of CPU), more than the limit of %.0e: lower %s, or raise the limit with --max-events",
			x.Series, e.Events, cpuTime(e.Events*100e-9), maxEvents, e.Param))
	}
	return errors.Join(errs...)
}

// Estimated is the scenario's estimated size in events: the sum of its
// series' workload estimates (those that have one).
func Estimated(reg *registry.Registry, sp []workloads.Spec) float64 {
	total := 0.0
	for _, x := range sp {
		if w, _ := reg.LookupWorkload(x.Workload.Name); w.Estimate != nil {
			if e, err := w.Estimate(x); err == nil {
				total += e.Events
			}
		}
	}
	return total
}

// cpuTime says seconds in the largest fitting unit.
func cpuTime(sec float64) string {
	switch {
	case sec >= 365*86400:
		return fmt.Sprintf("%.2g years", sec/(365*86400))
	case sec >= 86400:
		return fmt.Sprintf("%.2g days", sec/86400)
	case sec >= 3600:
		return fmt.Sprintf("%.2g hours", sec/3600)
	}
	return fmt.Sprintf("%.2g minutes", sec/60)
}

// Specs resolves the scenario's series into workload specs: each series'
// workload, machine and stack through the registry (params decoded,
// pairing checked: the one path of both validate and run). It fails when a workload has no
// runner, and with every series' resolution error. The engines' limits
// are the scenario's limits in events and simulated time only, the same
// on every machine: limits.max_wall_seconds is the run's watchdog
// (WallLimit), which abandons a run rather than change its results.
func Specs(reg *registry.Registry, s *scenarios.Scenario) ([]workloads.Spec, error) {
	lim := sim.Limits{
		MaxEvents: s.Limits.MaxEvents,
		MaxTime:   sim.Micro(s.Limits.MaxSimTimeUS),
	}
	var out []workloads.Spec
	settings, errs := Included(s)
	rs := *s
	rs.Settings = append(settings, s.Settings...)
	for _, r := range rs.Resolved() {
		w, ok := reg.LookupWorkload(r.Workload.Name)
		if !ok {
			var names []string
			for _, w := range reg.Workloads() {
				names = append(names, w.Name)
			}
			slices.Sort(names)
			field := r.Workload.Field + ".name"
			msg := fmt.Sprintf("unknown workload %q", r.Workload.Name)
			if sg := closest(r.Workload.Name, names); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			errs = append(errs, s.FieldError(field, "%s; workloads: %s", msg, strings.Join(names, ", ")))
			continue
		}
		open, err := reg.Resolve(s.File, ref(s, r, r.Machine, "machine"), ref(s, r, r.Stack, "stack"))
		if err != nil {
			errs = append(errs, err)
			// The workload's params are still checked (every problem at once).
			open = func(*sim.Engine, int) (*stacks.World, error) { return nil, errUnresolved }
		}
		out = append(out, workloads.Spec{
			Scenario: s.Name, Series: r.Name, File: s.File, Seed: s.Seed, Limits: lim,
			Machine: r.Machine.Name, Stack: r.Stack.Name, Open: open, Run: w.Run,
			Workload: component(r.Workload),
		})
	}
	return out, errors.Join(errs...)
}

// Included are the fitted values of the calibration files the scenario
// includes (calibration: [NAME]), as defaults under its own params, and
// an error at the name of each file that cannot be loaded or was never
// fitted.
func Included(s *scenarios.Scenario) ([]scenarios.Setting, []error) {
	var out []scenarios.Setting
	var errs []error
	for i, name := range s.Calibration {
		field := fmt.Sprintf("calibration[%d]", i)
		f, err := calibration.LoadBuiltin(name)
		switch {
		case err != nil:
			errs = append(errs, s.FieldError(field, "%v", err))
			continue
		case len(f.Values()) == 0:
			errs = append(errs, s.FieldError(field, "calibration %q has no fitted values: run simrun calibrate %s", name, name))
			continue
		}
		for _, v := range f.Values() {
			out = append(out, scenarios.Setting{Component: v.Component, Field: v.Field, Node: v.Node()})
		}
	}
	return out, errs
}

func component(c scenarios.Component) workloads.Component {
	p := c.Params
	return workloads.Component{Name: c.Name, Params: &p, Field: c.Field}
}

// ref is series r's machine or stack (key) for the registry. A series
// that names its own machine or stack owns the errors about it (an
// unknown name, a missing capability): they name the series' field;
// InputErrors moves an inherited param's error back to the top level.
func ref(s *scenarios.Scenario, r scenarios.Resolved, c scenarios.Component, key string) registry.Ref {
	p := c.Params
	field := c.Field
	if r.Index >= 0 {
		se := s.Series[r.Index]
		if over := map[string]*scenarios.Component{"machine": se.Machine, "stack": se.Stack}[key]; over != nil && over.Name != "" {
			field = fmt.Sprintf("series[%d].%s", r.Index, key)
		}
	}
	return registry.Ref{Name: c.Name, Params: &p, Field: field, Node: s.Node(field)}
}

// InputError reports whether err is the user's fault (bad params, a
// pairing that cannot work) rather than a run's failure.
func InputError(err error) bool {
	var se *strictyaml.Error
	var mc *machines.MissingCapability
	return errors.As(err, &se) || errors.As(err, &mc)
}

// seriesParams matches the field path of a series' component params, e.g.
// "series[2].workload.params.mode": index, component, rest.
var seriesParams = regexp.MustCompile(`^series\[(\d+)\]\.(machine|stack|workload)\.params(\..*)?$`)

// InputErrors flattens err (joined errors) into a list in which each
// problem appears once. A series' params are the scenario's params with the
// series' overrides merged over them, so the same misspelt top-level param
// is found again in every series: an error positioned on a node that is not
// in the series' own override is attributed to the top-level component
// ("workload.params.mdoe", not "series[1].workload.params.mdoe"), and then
// identical errors are kept once.
func InputErrors(s *scenarios.Scenario, err error) []error {
	var out []error
	seen := map[string]bool{}
	for _, e := range strictyaml.Errors(err) {
		e = attribute(s, e)
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, e)
		}
	}
	return out
}

// attribute returns e with its field moved from a series' params to the
// top-level component's params when the node it points at comes from the
// top level (see inputErrors). Other errors are returned unchanged.
func attribute(s *scenarios.Scenario, e error) error {
	se, ok := e.(*strictyaml.Error)
	if !ok || s == nil || se.File != s.File || se.Line == 0 {
		return e
	}
	m := seriesParams.FindStringSubmatch(se.Field)
	if m == nil {
		return e
	}
	i, err := strconv.Atoi(m[1])
	if err != nil || i >= len(s.Series) {
		return e
	}
	var over *scenarios.Component
	switch se := s.Series[i]; m[2] {
	case "machine":
		over = se.Machine
	case "stack":
		over = se.Stack
	case "workload":
		over = se.Workload
	}
	if over != nil && hasPosition(&over.Params, se.Line, se.Column, 0) {
		return e
	}
	c := *se
	c.Field = m[2] + ".params" + m[3]
	return &c
}

// hasPosition reports whether a node of the tree n (aliases not followed)
// starts at line:col.
func hasPosition(n *yaml.Node, line, col, depth int) bool {
	if n == nil || depth > 100 {
		return false
	}
	if n.Kind != 0 && n.Line == line && (col == 0 || n.Column == col) {
		return true
	}
	for _, c := range n.Content {
		if hasPosition(c, line, col, depth+1) {
			return true
		}
	}
	return false
}

// closest is the name of names nearest to name (a prefix or within two
// edits), or "".
func closest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) {
			return n
		}
		if d := levenshtein(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}

// paramsMsg matches a workload's unpositioned error "FILE: PATH: MSG" where
// PATH is its params ("workload.params", "series[1].workload.params.procs[2]").
var paramsMsg = regexp.MustCompile(`^(?s)(.*?): ((?:series\[\d+\]\.)?workload\.params)((?:\.[A-Za-z0-9_]+|\[\d+\])*): (.*)$`)

// locateParams gives a workload's validation error without a position
// the line and column of the parameter it is about, under the series'
// own field path. Workloads report "FILE: workload.params: ranks must be
// at least 2"; the parameter is the path's tail or, when the path stops at
// the params, the message's first word when the params name it. An error
// that names no parameter points at the params (or the workload). Errors
// with a position already are returned unchanged.
func locateParams(sp workloads.Spec, err error) error {
	var out []error
	for _, e := range strictyaml.Errors(err) {
		var se *strictyaml.Error
		if errors.As(e, &se) || sp.Workload.Params == nil {
			out = append(out, e)
			continue
		}
		m := paramsMsg.FindStringSubmatch(e.Error())
		if m == nil || m[1] != sp.File {
			out = append(out, e)
			continue
		}
		sub, msg := strings.TrimPrefix(m[3], "."), m[4]
		if sub == "" {
			word, _, _ := strings.Cut(msg, " ")
			word = strings.TrimRight(word, ":,;")
			if strictyaml.Find(sp.Workload.Params, word) != nil {
				sub = word
			}
		}
		at := sp.Workload.Params
		if sub != "" {
			if n := strictyaml.Find(sp.Workload.Params, sub); n != nil {
				at = n
			}
		}
		field := sp.Workload.ParamsField("workload")
		if sub != "" {
			if strings.HasPrefix(sub, "[") {
				field += sub
			} else {
				field += "." + sub
			}
		}
		if at.Kind == 0 { // no params written: the defaults are used
			at = nil
		}
		out = append(out, strictyaml.Errorf(sp.File, at, field, "%s", msg))
	}
	return errors.Join(out...)
}

// sortByPosition orders errors by line and column, those without a line
// last (stable), so that a user reads them top to bottom.
func sortByPosition(errs []error) {
	key := func(e error) (string, int, int) {
		var se *strictyaml.Error
		if errors.As(e, &se) {
			line := se.Line
			if line == 0 {
				line = 1 << 30
			}
			return se.File, line, se.Column
		}
		return "", 1 << 30, 0
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		_, la, ca := key(a)
		_, lb, cb := key(b)
		if la != lb {
			return la - lb
		}
		return ca - cb
	})
}

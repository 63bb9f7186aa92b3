package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	ms := fs.Bool("machines", false, "list the machines and their capabilities instead")
	ss := fs.Bool("stacks", false, "list the stacks, what they need and offer on each machine, instead")
	pos, code, ok := parseFlags(fs, "list", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("list", pos, 0, stderr) {
		return exitUsage
	}
	if *ms || *ss {
		reg := builtins()
		if *ms {
			listMachines(reg, stdout)
		}
		if *ss {
			listStacks(reg, stdout)
		}
		return exitOK
	}
	names, err := scenarios.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun list: %v\n", err)
		return exitFailed
	}
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		title := ""
		if s, err := scenarios.LoadBuiltin(n); err != nil {
			title = "(invalid: " + firstLine(err.Error()) + ")"
		} else {
			title = s.Title
			if s.Expect != nil {
				title += " [expects " + s.Expect.Failure + "]"
			}
		}
		fmt.Fprintf(stdout, "%-*s  %s\n", width, n, title)
	}
	return exitOK
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func cmdShow(args []string, stdout, stderr io.Writer) int {
	pos, code, ok := parseFlags(flag.NewFlagSet("show", flag.ContinueOnError), "show", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("show", pos, 1, stderr) {
		return exitUsage
	}
	names, err := scenarios.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun show: listing the built-in scenarios: %v\n", err)
		return exitFailed
	}
	if !slices.Contains(names, pos[0]) {
		fmt.Fprintf(stderr, "simrun show: no built-in scenario %s; built-ins: %s\n(show prints built-ins only; a scenario file is already YAML)\n", pos[0], strings.Join(names, ", "))
		return exitUsage
	}
	data, err := scenarios.BuiltinSource(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "simrun show: %v\n", err)
		return exitFailed
	}
	stdout.Write(data)
	return exitOK
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	pos, code, ok := parseFlags(flag.NewFlagSet("validate", flag.ContinueOnError), "validate", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("validate", pos, 1, stderr) {
		return exitUsage
	}
	s, sp, errs := loadAll(pos[0], nil)
	if len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return exitUsage
	}
	fmt.Fprintf(stdout, "%s: ok (%d series)\n", s.File, len(sp))
	return exitOK
}

// loadAll loads the scenario arg, lets adjust change it (the --seed flag),
// resolves its series into specs and checks them: every problem, each
// once, in file order. validate, run and trace all call it, so that run
// never fails on an input validate accepted.
func loadAll(arg string, adjust func(*scenarios.Scenario)) (*scenarios.Scenario, []workloads.Spec, []error) {
	s, err := scenarios.Lookup(arg)
	if s == nil {
		return nil, nil, inputErrors(nil, err)
	}
	errs := []error{err}
	if adjust != nil {
		adjust(s)
	}
	reg := builtins()
	sp, err := specs(reg, s)
	errs = append(errs, err, check(reg, s, sp))
	all := inputErrors(s, errors.Join(errs...))
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

// check decodes every series' params with its workload's checker in reg,
// if it has one, and returns all the errors (joined, as the checkers gave
// them: inputErrors attributes and deduplicates them).
func check(reg *registry.Registry, s *scenarios.Scenario, sp []workloads.Spec) error {
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

// specs resolves the scenario's series into workload specs: each series'
// workload, machine and stack through the registry (params decoded,
// pairing checked: the one path of both validate and run). It fails when a workload has no
// runner, and with every series' resolution error. The engines' limits
// are the scenario's limits in events and simulated time only, the same
// on every machine: limits.max_wall_seconds is the run's watchdog
// (runner.WallLimit), which abandons a run rather than change its results.
func specs(reg *registry.Registry, s *scenarios.Scenario) ([]workloads.Spec, error) {
	lim := sim.Limits{
		MaxEvents: s.Limits.MaxEvents,
		MaxTime:   sim.Micro(s.Limits.MaxSimTimeUS),
	}
	var out []workloads.Spec
	var errs []error
	for _, r := range s.Resolved() {
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

func component(c scenarios.Component) workloads.Component {
	p := c.Params
	return workloads.Component{Name: c.Name, Params: &p, Field: c.Field}
}

// ref is series r's machine or stack (key) for the registry. A series
// that names its own machine or stack owns the errors about it (an
// unknown name, a missing capability): they name the series' field;
// inputErrors moves an inherited param's error back to the top level.
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

// inputError reports whether err is the user's fault (bad params, a
// pairing that cannot work) rather than a run's failure.
func inputError(err error) bool {
	var se *strictyaml.Error
	var mc *machines.MissingCapability
	return errors.As(err, &se) || errors.As(err, &mc)
}

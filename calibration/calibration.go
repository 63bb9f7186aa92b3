// Package calibration holds the calibration files (embedded from
// calibration/*.yaml), their strict located parser, and the rewriting of
// a file's fitted: block. A calibration file names the parameters that no
// source gives (free: each with its bounds and the reason it is unknown),
// the data they are fitted to (training: a scenario's series, metric and
// x with the value and its source, or a claim), and the data the fit is
// judged on and never fitted to (validation). simrun calibrate fits the
// free parameters and writes their values under fitted:; a scenario
// includes them by name (calibration: [NAME]).
//
// Layer: imports internal/strictyaml and yaml.v3 only. The fit itself,
// which runs scenarios, is package calibration/fit.
package calibration

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"gopkg.in/yaml.v3"
)

// File is one calibration file.
type File struct {
	Name        string     `yaml:"name" required:"true"` // the file's base name
	Title       string     `yaml:"title"`                // one line
	Description string     `yaml:"description"`          // why the parameters are unknown, what bounds them, what judges the fit
	Quick       bool       `yaml:"quick"`                // cheap to fit: simrun calibrate --check (and CI) fit it by default
	Free        []Free     `yaml:"free" required:"true"`
	Training    []Target   `yaml:"training" required:"true"`
	Validation  Validation `yaml:"validation"`
	Fitted      *Fitted    `yaml:"fitted"` // written by simrun calibrate

	Path string `yaml:"-"` // where it was loaded from ("calibration/NAME.yaml" for the built-ins)

	root *yaml.Node
	data []byte
}

// Free is a parameter the fit may move.
type Free struct {
	// Param is COMPONENT.FIELD: a registered machine or stack, then the
	// YAML name of one of its params (e.g. sx4.semop_us).
	Param string   `yaml:"param" required:"true"`
	Min   *float64 `yaml:"min" required:"true"`
	Max   *float64 `yaml:"max" required:"true"`
	Start *float64 `yaml:"start"` // the first guess (default: the midpoint)
	Step  float64  `yaml:"step"`  // >0: values are rounded to a multiple of it (an integer param: 1)
	// Also are params (COMPONENT.FIELD) that take the same value: a cost
	// split evenly between two params by assumption (say so in why).
	Also []string `yaml:"also"`
	Why  string   `yaml:"why" required:"true"`
}

// Params is Param and the params of Also.
func (f Free) Params() []string { return append([]string{f.Param}, f.Also...) }

// Component is the machine or stack of the parameter (before the first dot).
func (f Free) Component() string { c, _, _ := strings.Cut(f.Param, "."); return c }

// Field is the parameter's YAML name (after the first dot).
func (f Free) Field() string { _, p, _ := strings.Cut(f.Param, "."); return p }

// StartValue is Start, or the midpoint of the bounds.
func (f Free) StartValue() float64 {
	if f.Start != nil {
		return *f.Start
	}
	return (*f.Min + *f.Max) / 2
}

// Round is v clamped to the bounds and rounded to a multiple of Step.
func (f Free) Round(v float64) float64 {
	if f.Step > 0 {
		v = math.Round(v/f.Step) * f.Step
		for v < *f.Min {
			v += f.Step
		}
		for v > *f.Max {
			v -= f.Step
		}
	}
	return math.Min(math.Max(v, *f.Min), *f.Max)
}

// Target is one training target: a value of a scenario's series (Metric
// at X), or one of the scenario's claims (Claim).
type Target struct {
	Scenario string   `yaml:"scenario" required:"true"` // a built-in scenario
	Series   string   `yaml:"series"`                   // default: the scenario's name (a scenario without series)
	Metric   string   `yaml:"metric"`
	X        *float64 `yaml:"x"`
	Value    *float64 `yaml:"value"`
	Source   string   `yaml:"source"` // where the value comes from: a table or a sentence
	Weight   *float64 `yaml:"weight"` // default 1
	// Reduce is YAML merged over the workload params (the scenario's and
	// every series'), so that the target's run measures only what it needs
	// (its one size: {bytes: [0]}).
	Reduce yaml.Node `yaml:"reduce"`
	// Claim names a claim of the scenario used as training: it counts as
	// "training (fitted)", never as holding.
	Claim string `yaml:"claim"`
}

// WeightValue is Weight, or 1.
func (t Target) WeightValue() float64 {
	if t.Weight != nil {
		return *t.Weight
	}
	return 1
}

// Label names the target in outputs: "scenario/series metric@x" or
// "scenario claim NAME".
func (t Target) Label() string {
	if t.Claim != "" {
		return t.Scenario + " claim " + t.Claim
	}
	return fmt.Sprintf("%s/%s %s@%g", t.Scenario, t.Series, t.Metric, *t.X)
}

// Validation is what the fit is judged on.
type Validation struct {
	Claims     []Selector `yaml:"claims"`
	References []Selector `yaml:"references"`
}

// Selector is a scenario's claims or references: all of them, or the one
// named.
type Selector struct {
	Scenario string `yaml:"scenario" required:"true"`
	Claim    string `yaml:"claim"`
}

// Fitted is what simrun calibrate found: each free parameter's value, and
// how far a re-fit may move it (relative) before --check fails.
type Fitted struct {
	Tolerance float64            `yaml:"tolerance"`
	Values    map[string]float64 `yaml:"values"`
}

// DefaultTolerance is a fitted block's tolerance when the file gives none.
const DefaultTolerance = 0.02

// files holds the built-in calibration files.
//
//go:embed *.yaml
var files embed.FS

// Builtin returns the names of the built-in calibration files, sorted.
func Builtin() ([]string, error) {
	fl, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(fl))
	for i, f := range fl {
		names[i] = strings.TrimSuffix(f, ".yaml")
	}
	slices.Sort(names)
	return names, nil
}

// BuiltinSource is the YAML text of the built-in file name.
func BuiltinSource(name string) ([]byte, error) {
	data, err := files.ReadFile(name + ".yaml")
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, unknown(name)
	}
	return data, nil
}

// LoadBuiltin parses the built-in file name; errors name the file
// "calibration/NAME.yaml".
func LoadBuiltin(name string) (*File, error) {
	data, err := BuiltinSource(name)
	if err != nil {
		return nil, err
	}
	return Parse("calibration/"+name+".yaml", data)
}

// Lookup loads a calibration file given a path or a built-in name: an
// argument naming an existing file, or ending in .yaml or .yml, is a file.
func Lookup(nameOrFile string) (*File, error) {
	ext := strings.ToLower(path.Ext(nameOrFile))
	if st, err := os.Stat(nameOrFile); (err == nil && !st.IsDir()) || ext == ".yaml" || ext == ".yml" {
		data, err := os.ReadFile(nameOrFile)
		if err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
		return Parse(nameOrFile, data)
	}
	return LoadBuiltin(nameOrFile)
}

func unknown(name string) error {
	names, err := Builtin()
	if err != nil {
		return fmt.Errorf("calibration %q: not a file, and the built-ins cannot be listed: %w", name, err)
	}
	return fmt.Errorf("calibration %q: no such file and no such built-in calibration; built-ins: %s", name, strings.Join(names, ", "))
}

// Parse decodes and checks the calibration file in data; file names it in
// errors. Every problem is reported at once (errors.Join of
// *strictyaml.Error, each with file, line, column and field); the file is
// returned as far as it decoded, but must not be used when err is not nil.
// Parse checks the file on its own; what needs the registry and the
// scenarios (that the parameters, scenarios, series and claims exist) is
// fit.Check's.
func Parse(file string, data []byte) (*File, error) {
	root, err := strictyaml.Parse(file, data)
	if err != nil {
		return nil, err
	}
	f := &File{Path: file, root: root, data: data}
	errs := strictyaml.Errors(strictyaml.Decode(file, root, f))
	if len(errs) == 0 {
		errs = append(errs, strictyaml.Errors(f.validate())...)
	}
	if len(errs) > strictyaml.MaxErrors {
		errs = append(errs[:strictyaml.MaxErrors], fmt.Errorf("%s: too many errors (the first %d are listed)", file, strictyaml.MaxErrors))
	}
	if len(errs) > 0 {
		return f, errors.Join(errs...)
	}
	if f.Fitted != nil && f.Fitted.Tolerance == 0 {
		f.Fitted.Tolerance = DefaultTolerance
	}
	for i := range f.Training {
		if t := &f.Training[i]; t.Series == "" && t.Claim == "" {
			t.Series = t.Scenario
		}
	}
	return f, nil
}

// FieldError is an error at field of the file (at the nearest enclosing
// node present when field is absent).
func (f *File) FieldError(field, format string, args ...any) error {
	return strictyaml.FieldError(f.Path, f.root, field, format, args...)
}

// Data is the file's text as it was parsed.
func (f *File) Data() []byte { return f.data }

// Index returns the free parameter named param, or -1.
func (f *File) Index(param string) int {
	return slices.IndexFunc(f.Free, func(p Free) bool { return p.Param == param })
}

// validate checks what decoding does not: names, bounds, targets.
func (f *File) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, f.FieldError(field, format, args...))
	}
	if base := strings.TrimSuffix(strings.TrimSuffix(path.Base(f.Path), ".yaml"), ".yml"); f.Name != base && (strings.HasSuffix(f.Path, ".yaml") || strings.HasSuffix(f.Path, ".yml")) {
		bad("name", "name %q must equal the file's base name %q", f.Name, base)
	}
	if f.Name == "" || strings.ContainsAny(f.Name, "/\\ \t\n") || len(f.Name) > 100 {
		bad("name", "name %q must be a non-empty file name (no slashes or spaces, at most 100 bytes)", f.Name)
	}
	if len(f.Free) == 0 {
		bad("free", "at least one free parameter is needed")
	}
	seen := map[string]bool{}
	fitted := map[string]bool{} // the params fitted: values are stored
	for i, p := range f.Free {
		at := fmt.Sprintf("free[%d]", i)
		for k, name := range p.Params() {
			field := at + ".param"
			if k > 0 {
				field = fmt.Sprintf("%s.also[%d]", at, k-1)
			}
			if c, fl, ok := strings.Cut(name, "."); !ok || c == "" || fl == "" {
				bad(field, "%q must be COMPONENT.FIELD: a machine or stack name, a dot, then its param's YAML name (e.g. sx4.semop_us)", name)
			}
			if seen[name] {
				bad(field, "%q is listed twice", name)
			}
			seen[name] = true
		}
		fitted[p.Param] = true
		if p.Min == nil || p.Max == nil {
			bad(at, "a free parameter needs param, min, max and why")
			continue
		}
		lo, hi := *p.Min, *p.Max
		if !finite(lo) || !finite(hi) || lo >= hi {
			bad(at+".max", "the bounds must be finite numbers with min < max (min %g, max %g)", lo, hi)
			continue
		}
		if p.Start != nil && (!finite(*p.Start) || *p.Start < lo || *p.Start > hi) {
			bad(at+".start", "start %g must lie within [min, max] = [%g, %g]", *p.Start, lo, hi)
		}
		if !finite(p.Step) || p.Step < 0 || p.Step > hi-lo {
			bad(at+".step", "step %g must be 0 (none) or positive, at most max - min (%g)", p.Step, hi-lo)
		}
		if strings.TrimSpace(p.Why) == "" {
			bad(at+".why", "say why the parameter is unknown and what bounds it")
		}
	}
	if len(f.Training) == 0 {
		bad("training", "at least one training target is needed")
	}
	for i, t := range f.Training {
		at := fmt.Sprintf("training[%d]", i)
		if t.Weight != nil && (!finite(*t.Weight) || *t.Weight <= 0) {
			bad(at+".weight", "weight %g must be a positive number", *t.Weight)
		}
		if t.Claim != "" {
			for _, x := range []struct {
				name string
				set  bool
			}{{"series", t.Series != ""}, {"metric", t.Metric != ""}, {"x", t.X != nil}, {"value", t.Value != nil}} {
				if x.set {
					bad(at+"."+x.name, "a claim target takes no %s: the claim names its series, metric and bounds", x.name)
				}
			}
			continue
		}
		if t.Metric == "" {
			bad(at+".metric", "a value target needs a metric (or name a claim)")
		}
		if t.X == nil || !finite(*t.X) {
			bad(at+".x", "a value target needs x: the point measured")
		}
		if t.Value == nil || !finite(*t.Value) || *t.Value == 0 {
			bad(at+".value", "a value target needs a finite, non-zero value (its residual is relative to it)")
		}
		if strings.TrimSpace(t.Source) == "" {
			bad(at+".source", "say where the value comes from (a table, a sentence)")
		}
		if t.Reduce.Kind != 0 && t.Reduce.Kind != yaml.MappingNode {
			bad(at+".reduce", "reduce must be a mapping of workload params")
		}
	}
	if fd := f.Fitted; fd != nil {
		if !finite(fd.Tolerance) || fd.Tolerance < 0 || fd.Tolerance >= 1 {
			bad("fitted.tolerance", "tolerance %g must be a relative change in [0, 1) (0: the default %g)", fd.Tolerance, DefaultTolerance)
		}
		// Keys hold dots (sx4.semop_us): found by hand, not by path.
		at := func(k string) *yaml.Node {
			if m := strictyaml.Find(f.root, "fitted.values"); m != nil && m.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(m.Content); i += 2 {
					if m.Content[i].Value == k {
						return m.Content[i]
					}
				}
			}
			return strictyaml.Find(f.root, "fitted.values")
		}
		for _, k := range sortedKeys(fd.Values) {
			if !fitted[k] {
				errs = append(errs, strictyaml.Errorf(f.Path, at(k), "fitted.values."+k, "%q is not a free parameter of this file (free[].param)", k))
			} else if v := fd.Values[k]; !finite(v) {
				errs = append(errs, strictyaml.Errorf(f.Path, at(k), "fitted.values."+k, "value %g is not a finite number", v))
			}
		}
	}
	return errors.Join(errs...)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

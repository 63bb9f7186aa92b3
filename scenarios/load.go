package scenarios

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"gopkg.in/yaml.v3"
)

// Load reads, decodes and validates a scenario file.
func Load(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(file, data)
}

// Parse decodes and validates the scenario in data; file names it in errors.
// Decoding is strict (unknown fields, wrong types, duplicate keys and
// missing required fields are errors) and every error is a
// *strictyaml.Error, or several joined by errors.Join, carrying file, line
// and field. Every problem is reported: when some fields do not decode the
// others are still validated, and the scenario is returned with the error,
// as far as it decoded, so that a caller can check the rest too (simrun
// validate resolves its machines and stacks); it must not be run.
func Parse(file string, data []byte) (*Scenario, error) {
	root, err := strictyaml.Parse(file, data)
	if err != nil {
		return nil, err
	}
	s := &Scenario{Seed: 1, File: file, root: root}
	derr := strictyaml.Decode(file, root, s)
	s.setOrigins()
	s.setDefaults()
	errs := strictyaml.Errors(derr)
	bad := map[string]bool{} // fields that did not decode: not validated again
	for _, e := range errs {
		if se, ok := e.(*strictyaml.Error); ok {
			bad[se.Field] = true
		}
	}
	var verrs []error
	if len(errs) < strictyaml.MaxErrors {
		verrs = strictyaml.Errors(s.Validate())
	}
	for _, e := range verrs {
		if se, ok := e.(*strictyaml.Error); !ok || !covered(bad, se.Field) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return s, errors.Join(errs...)
	}
	return s, nil
}

// covered reports whether field, a field containing it or one it contains,
// or another field of the same list item (references[3].x for
// references[3].series) is in bad: what did not decode is not validated
// again.
func covered(bad map[string]bool, field string) bool {
	item := func(f string) string {
		if i := strings.Index(f, "]"); i >= 0 {
			return f[:i+1]
		}
		return ""
	}
	for f := range bad {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") || strings.HasPrefix(f, field+".") || strings.HasPrefix(f, field+"[") {
			return true
		}
		if it := item(f); it != "" && it == item(field) {
			return true
		}
	}
	return false
}

// setOrigins records file and YAML path in every component.
func (s *Scenario) setOrigins() {
	set := func(c *Component, field string) {
		if c != nil {
			c.File, c.Field = s.File, field
		}
	}
	set(&s.Machine, "machine")
	set(&s.Stack, "stack")
	set(&s.Workload, "workload")
	for i := range s.Series {
		se := &s.Series[i]
		set(se.Machine, seriesField(i, "machine"))
		set(se.Stack, seriesField(i, "stack"))
		set(se.Workload, seriesField(i, "workload"))
	}
}

// setDefaults fills the defaults of fields decoded from list items.
func (s *Scenario) setDefaults() {
	for i := range s.Figures {
		for j := range s.Figures[i].Panels {
			p := &s.Figures[i].Panels[j]
			if p.X == "" {
				p.X = "bytes"
			}
			if p.XScale == "" {
				p.XScale = ScaleLinear
			}
			if p.YScale == "" {
				p.YScale = ScaleLinear
			}
		}
	}
}

// Axis scales of a panel.
const (
	ScaleLinear = "linear"
	ScaleLog    = "log"
)

// Length limits of free-text fields: a name becomes a directory and file
// names (most file systems allow 255 bytes per name), a title is one line
// of a report, a figure caption and a progress line.
const (
	MaxNameLen  = 100
	MaxTitleLen = 200
	MaxDescLen  = 20000
)

// Node is the YAML node at field (for example "series[1].stack") in the
// scenario's file, or nil when the field is absent or the scenario was
// not parsed from YAML. Errors found after loading point at it.
func (s *Scenario) Node(field string) *yaml.Node {
	return strictyaml.Find(s.root, field)
}

// FieldError is an error at field of the scenario's file (at the nearest
// enclosing node present when field is absent).
func (s *Scenario) FieldError(field, format string, args ...any) error {
	return strictyaml.FieldError(s.File, s.root, field, format, args...)
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate checks what strict decoding cannot: names, enums, references to
// series, figure files, limits. All problems are reported, joined, each
// with file, line and field when the scenario was parsed from YAML.
func (s *Scenario) Validate() error {
	v := &validator{s: s}
	v.text()
	v.series()
	v.components()
	v.figures()
	v.references()
	v.claims()
	v.expect()
	v.limits()
	v.calibration()
	return errors.Join(v.errs...)
}

// text checks the name, title and description.
func (v *validator) text() {
	s := v.s
	if s.Name == "" {
		v.errorf("name", "must not be empty")
	} else if len(s.Name) > MaxNameLen {
		v.errorf("name", "%d characters long; at most %d (it names the output directory)", len(s.Name), MaxNameLen)
	} else if !nameRE.MatchString(s.Name) {
		v.errorf("name", "%q: use letters, digits, '.', '_' and '-' only (it names output files)", s.Name)
	}
	if len(s.Title) > MaxTitleLen {
		v.errorf("title", "%d characters long; at most %d (a one-line title; put the rest in description)", len(s.Title), MaxTitleLen)
	} else if strings.ContainsAny(strings.TrimSpace(s.Title), "\n\r") {
		v.errorf("title", "must be one line (put the rest in description)")
	}
	if len(s.Description) > MaxDescLen {
		v.errorf("description", "%d characters long; at most %d", len(s.Description), MaxDescLen)
	}
}

// series checks the components' params and the series' names, and
// records the names (v.names).
func (v *validator) series() {
	s := v.s
	v.params(&s.Machine, "machine")
	v.params(&s.Stack, "stack")
	v.params(&s.Workload, "workload")
	v.names = map[string]int{}
	for i, se := range s.Series {
		f := fmt.Sprintf("series[%d]", i)
		if strings.TrimSpace(se.Name) == "" {
			v.errorf(f+".name", "must not be empty")
		} else if j, dup := v.names[se.Name]; dup {
			v.errorf(f+".name", "series %q is already defined (series[%d])", se.Name, j)
		} else {
			v.names[se.Name] = i
		}
		v.params(se.Machine, seriesField(i, "machine"))
		v.params(se.Stack, seriesField(i, "stack"))
		v.params(se.Workload, seriesField(i, "workload"))
	}
}

// components checks that every series resolves to a named workload, and
// that no machine or stack has params without a name.
func (v *validator) components() {
	s := v.s
	for _, r := range s.Resolved() {
		for _, c := range []struct {
			comp     Component
			key      string
			required bool
		}{{r.Machine, "machine", false}, {r.Stack, "stack", false}, {r.Workload, "workload", true}} {
			where := "the scenario"
			if r.Index >= 0 {
				where = fmt.Sprintf("series %q", r.Name)
			}
			if c.comp.Name == "" && (c.required || c.comp.HasParams()) {
				msg := "a name is required"
				if !c.required {
					msg = "params are given but no name"
				}
				v.errorf(c.key+".name", "%s: %s for %s", c.key, msg, where)
			}
		}
	}
}

// valid reports whether name is a series of the scenario (or, without
// series, the scenario's own name).
func (v *validator) valid(name string) bool {
	if len(v.s.Series) == 0 {
		return name == v.s.Name
	}
	_, ok := v.names[name]
	return ok
}

// known lists the series names, for an error about an unknown one.
func (v *validator) known() string {
	s := v.s
	if len(s.Series) == 0 {
		return fmt.Sprintf("the scenario has no series; use its name %q", s.Name)
	}
	l := make([]string, len(s.Series))
	for i, se := range s.Series {
		l[i] = se.Name
	}
	return "series: " + strings.Join(l, ", ")
}

// figures checks the figures' files, panels, series and axes.
func (v *validator) figures() {
	s := v.s
	files := map[string]int{}
	for i, fig := range s.Figures {
		f := fmt.Sprintf("figures[%d]", i)
		switch ext := strings.ToLower(path.Ext(fig.File)); {
		case fig.File == "":
			v.errorf(f+".file", "must not be empty")
		case path.IsAbs(fig.File) || strings.HasPrefix(fig.File, "\\") || slices.Contains(strings.Split(fig.File, "/"), ".."):
			v.errorf(f+".file", "%q must be a relative path inside the output directory", fig.File)
		case ext != "" && ext != ".png" && ext != ".svg" && ext != ".pdf":
			v.errorf(f+".file", "%q: extension must be .png, .svg or .pdf (or none for both PNG and SVG)", fig.File)
		}
		if j, dup := files[fig.File]; dup && fig.File != "" {
			v.errorf(f+".file", "%q is already written by figures[%d]", fig.File, j)
		}
		files[fig.File] = i
		for j, p := range fig.Panels {
			pf := fmt.Sprintf("%s.panels[%d]", f, j)
			if strings.TrimSpace(p.Metric) == "" {
				v.errorf(pf+".metric", "must not be empty")
			}
			v.scale(pf+".x_scale", p.XScale)
			v.scale(pf+".y_scale", p.YScale)
			for k, name := range p.Series {
				if !v.valid(name) {
					v.errorf(fmt.Sprintf("%s.series[%d]", pf, k), "unknown series %q (%s)", name, v.known())
				}
			}
			if math.IsNaN(p.XMin) || math.IsNaN(p.XMax) || math.IsInf(p.XMin, 0) || math.IsInf(p.XMax, 0) {
				v.errorf(pf+".x_min", "x_min and x_max must be finite numbers")
			} else if (p.XMin != 0 || p.XMax != 0) && p.XMin >= p.XMax {
				v.errorf(pf+".x_max", "x_max (%g) must be greater than x_min (%g)", p.XMax, p.XMin)
			}
			if p.XScale == ScaleLog && p.XMin < 0 {
				v.errorf(pf+".x_min", "must be positive on a log x axis")
			}
		}
	}
}

// references checks the published points: their series, metric and
// numbers.
func (v *validator) references() {
	s := v.s
	for i, r := range s.References {
		f := fmt.Sprintf("references[%d]", i)
		switch {
		case r.System != "" && (v.valid(r.Series) || strings.TrimSpace(r.Series) == ""):
			v.errorf(f+".series", "%q: a reference of another system (system: %s) needs a series name of its own, not a simulated series (%s)", r.Series, r.System, v.known())
		case r.System == "" && !v.valid(r.Series):
			v.errorf(f+".series", "unknown series %q (%s)", r.Series, v.known())
		}
		if strings.TrimSpace(r.Metric) == "" {
			v.errorf(f+".metric", "must not be empty")
		}
		if math.IsNaN(r.X) || math.IsInf(r.X, 0) {
			v.errorf(f+".x", "must be a finite number")
		}
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			v.errorf(f+".value", "must be a finite number")
		}
	}
}

// expect checks the expected failure's kind.
func (v *validator) expect() {
	s := v.s
	if s.Expect != nil {
		switch s.Expect.Failure {
		case FailureCorruption, FailureLoss, FailureLivelock, FailureDeadlock:
		default:
			v.errorf("expect.failure", "%q is not a failure kind; expected one of %s, %s, %s, %s",
				s.Expect.Failure, FailureCorruption, FailureLoss, FailureLivelock, FailureDeadlock)
		}
	}
}

// calibration checks the names of the included calibration files (that
// each exists and was fitted is the runner's: it reads them).
func (v *validator) calibration() {
	seen := map[string]bool{}
	for i, n := range v.s.Calibration {
		field := fmt.Sprintf("calibration[%d]", i)
		switch {
		case n == "" || strings.ContainsAny(n, "/\\ \t\n"):
			v.errorf(field, "%q is not a calibration file's name (calibration/NAME.yaml: NAME)", n)
		case seen[n]:
			v.errorf(field, "%q is included twice", n)
		}
		seen[n] = true
	}
}

// limits checks the limits and the declared cost.
func (v *validator) limits() {
	s := v.s
	for _, l := range []struct {
		field string
		val   float64
	}{{"limits.max_sim_time_us", s.Limits.MaxSimTimeUS}, {"limits.max_wall_seconds", s.Limits.MaxWallSeconds}} {
		if l.val < 0 || math.IsNaN(l.val) || math.IsInf(l.val, 0) {
			v.errorf(l.field, "must be a finite number ≥ 0 (0 means the default), got %g", l.val)
		}
	}
	for _, c := range []struct {
		field string
		val   float64
	}{{"cost.wall_seconds", s.Cost.WallSeconds}, {"cost.memory_gb", s.Cost.MemoryGB}} {
		if c.val < 0 || math.IsNaN(c.val) || math.IsInf(c.val, 0) {
			v.errorf(c.field, "must be a finite number ≥ 0 (an approximate cost; 0: small), got %g", c.val)
		}
	}
}

// validator collects validation errors positioned in the scenario's YAML.
type validator struct {
	s     *Scenario
	names map[string]int // series name -> index (series)
	errs  []error
}

func (v *validator) errorf(field, format string, args ...any) {
	v.errs = append(v.errs, strictyaml.FieldError(v.s.File, v.s.root, field, format, args...))
}

func (v *validator) scale(field, val string) {
	if val != "" && val != ScaleLinear && val != ScaleLog {
		v.errorf(field, "%q is not a scale; expected %q or %q", val, ScaleLinear, ScaleLog)
	}
}

// params checks that a component's params, when given, are a mapping.
func (v *validator) params(c *Component, field string) {
	if c == nil || !c.HasParams() {
		return
	}
	n := &c.Params
	for i := 0; i < 100 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		v.errs = append(v.errs, strictyaml.Errorf(v.s.File, n, field+".params", "expected a mapping of parameter names to values"))
	}
}

// seriesField is the YAML path of a component of series i.
func seriesField(i int, key string) string {
	return fmt.Sprintf("series[%d].%s", i, key)
}

// join appends a field name to a YAML path.
func join(p, name string) string {
	if p == "" {
		return name
	}
	return p + "." + name
}

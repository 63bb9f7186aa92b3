package scenarios

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// System is the machine and stack a paper's values were measured on, by
// their registered names (the scenario's top-level machine and stack as
// its author wrote them). A series that names its own machine or stack
// was measured on those.
type System struct {
	Machine string `yaml:"machine" required:"true"`
	Stack   string `yaml:"stack"`
	// Series, when given, names the machine or stack of each series that
	// ran on its own (a series absent from it ran on Machine and Stack);
	// without it, a series that names its own machine or stack is taken
	// to run where its paper measured it.
	Series map[string]SeriesSystem `yaml:"series"`
}

// SeriesSystem is the machine or stack one series was measured on, where
// it differs from the scenario's.
type SeriesSystem struct {
	Machine string `yaml:"machine"`
	Stack   string `yaml:"stack"`
}

func (y System) String() string {
	if y.Stack == "" {
		return y.Machine
	}
	return y.Machine + " with " + y.Stack
}

// measuredOn checks measured_on's machine name and series.
func (v *validator) measuredOn() {
	m := v.s.MeasuredOn
	if m == nil {
		return
	}
	if strings.TrimSpace(m.Machine) == "" {
		v.errorf("measured_on.machine", "must name the machine the paper's values were measured on")
	}
	names := []string{v.s.Name}
	if len(v.s.Series) > 0 {
		names = names[:0]
		for _, se := range v.s.Series {
			names = append(names, se.Name)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(m.Series)) {
		if !slices.Contains(names, n) {
			v.errorf("measured_on.series."+n, "no series %q in the scenario (series: %s)", n, strings.Join(names, ", "))
		}
	}
}

// foreignSeries are the series (by name, or the scenario's name when it
// has none) that run on another machine or stack than the one the
// scenario's references and claims were measured on (MeasuredOn).
func (s *Scenario) foreignSeries() map[string]bool {
	m := s.MeasuredOn
	if m == nil {
		return nil
	}
	out := map[string]bool{}
	for _, r := range s.Resolved() {
		machine, stack := m.Machine, m.Stack
		if m.Series == nil && r.Index >= 0 {
			// Not said: a series of its own machine or stack ran there.
			se := s.Series[r.Index]
			if se.Machine != nil && se.Machine.Name != "" {
				machine = se.Machine.Name
			}
			if se.Stack != nil && se.Stack.Name != "" {
				stack = se.Stack.Name
			}
		}
		if ov, ok := m.Series[r.Name]; ok {
			if ov.Machine != "" {
				machine = ov.Machine
			}
			if ov.Stack != "" {
				stack = ov.Stack
			}
		}
		if r.Machine.Name != machine || (stack != "" && r.Stack.Name != stack) {
			out[r.Name] = true
		}
	}
	return out
}

// leaveOutForeign removes the references and claims that belong to a
// series now running on another system than the one the paper measured
// (MeasuredOn), and says so in LeftOut: a copy of a built-in moved to
// another machine judges nothing by the first machine's paper. A
// reference of another named system (System: a paper's point of
// comparison) is kept: it is drawn, never judged.
func (s *Scenario) leaveOutForeign() {
	foreign := s.foreignSeries()
	if len(foreign) == 0 {
		return
	}
	var refs []Reference
	nr := 0
	for _, r := range s.References {
		if r.System == "" && foreign[r.Series] {
			nr++
			continue
		}
		refs = append(refs, r)
	}
	var claims []Claim
	nc := 0
	for _, c := range s.Claims {
		if foreign[c.Series] || (c.Other != "" && foreign[c.Other]) {
			nc++
			continue
		}
		claims = append(claims, c)
	}
	if nr == 0 && nc == 0 {
		return
	}
	s.References, s.Claims = refs, claims
	now := System{Machine: s.Machine.Name, Stack: s.Stack.Name}
	was := System{Machine: s.MeasuredOn.Machine, Stack: s.MeasuredOn.Stack}
	if now.String() == was.String() { // a series moved, not the scenario
		s.LeftOut = fmt.Sprintf("%s: the paper's values (%d) and claims (%d) of %s were measured on another machine or stack than this copy runs them on (measured_on.series), so they are left out",
			s.File, nr, nc, seriesList(foreign, s))
		return
	}
	s.LeftOut = fmt.Sprintf("%s: the paper's values (%d) and claims (%d) of %s were measured on %s; this copy runs them on %s, so they are left out (measured_on)",
		s.File, nr, nc, seriesList(foreign, s), was, now)
}

// seriesList names the foreign series in the scenario's order.
func seriesList(foreign map[string]bool, s *Scenario) string {
	if len(s.Series) == 0 {
		return "the scenario"
	}
	var names []string
	for _, se := range s.Series {
		if foreign[se.Name] {
			names = append(names, se.Name)
		}
	}
	if len(names) == len(s.Series) {
		return "every series"
	}
	return "series " + strings.Join(names, ", ")
}

package scenarios

import (
	"fmt"
	"strings"
)

// System is the machine and stack a paper's values were measured on, by
// their registered names (the scenario's top-level machine and stack as
// its author wrote them). A series that names its own machine or stack
// was measured on those.
type System struct {
	Machine string `yaml:"machine" required:"true"`
	Stack   string `yaml:"stack"`
}

func (y System) String() string {
	if y.Stack == "" {
		return y.Machine
	}
	return y.Machine + " with " + y.Stack
}

// measuredOn checks measured_on's machine name.
func (v *validator) measuredOn() {
	if m := v.s.MeasuredOn; m != nil && strings.TrimSpace(m.Machine) == "" {
		v.errorf("measured_on.machine", "must name the machine the paper's values were measured on")
	}
}

// foreignSeries are the series (by name, or the scenario's name when it
// has none) that run on another machine or stack than the one the
// scenario's references and claims were measured on: a series that
// inherits the top-level machine or stack while the scenario's differs
// from MeasuredOn. A series that names its own machine and stack keeps
// the system its author gave it.
func (s *Scenario) foreignSeries() map[string]bool {
	m := s.MeasuredOn
	if m == nil {
		return nil
	}
	machineMoved := s.Machine.Name != m.Machine
	stackMoved := m.Stack != "" && s.Stack.Name != m.Stack
	if !machineMoved && !stackMoved {
		return nil
	}
	out := map[string]bool{}
	if len(s.Series) == 0 {
		out[s.Name] = true
		return out
	}
	for _, se := range s.Series {
		ownMachine := se.Machine != nil && se.Machine.Name != ""
		ownStack := se.Stack != nil && se.Stack.Name != ""
		if (machineMoved && !ownMachine) || (stackMoved && !ownStack) {
			out[se.Name] = true
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
	s.LeftOut = fmt.Sprintf("%s: the paper's values (%d) and claims (%d) of %s were measured on %s; this copy runs them on %s, so they are left out (measured_on)",
		s.File, nr, nc, seriesList(foreign, s), *s.MeasuredOn, now)
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

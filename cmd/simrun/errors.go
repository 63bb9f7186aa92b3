package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/scenarios"
	"gopkg.in/yaml.v3"
)

// seriesParams matches the field path of a series' component params, e.g.
// "series[2].workload.params.mode": index, component, rest.
var seriesParams = regexp.MustCompile(`^series\[(\d+)\]\.(machine|stack|workload)\.params(\..*)?$`)

// inputErrors flattens err (joined errors) into a list in which each
// problem appears once. A series' params are the scenario's params with the
// series' overrides merged over them, so the same misspelt top-level param
// is found again in every series: an error positioned on a node that is not
// in the series' own override is attributed to the top-level component
// ("workload.params.mdoe", not "series[1].workload.params.mdoe"), and then
// identical errors are kept once.
func inputErrors(s *scenarios.Scenario, err error) []error {
	var out []error
	seen := map[string]bool{}
	for _, e := range flatten(err) {
		e = attribute(s, e)
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, e)
		}
	}
	return out
}

// flatten lists the leaves of a tree of errors.Join errors.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
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

// joinLines formats errors one per line.
func joinLines(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// seriesError prefixes a run error with its series, unless the workload
// already named the series in it.
func seriesError(series string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, "series "+series+":") || strings.HasPrefix(msg, series+":") {
		return msg
	}
	return fmt.Sprintf("series %s: %s", series, msg)
}

package main

import (
	"errors"
	"fmt"
	"github.com/msgsim/msgsim/workloads"
	"regexp"
	"slices"
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

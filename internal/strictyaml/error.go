// Package strictyaml decodes YAML into Go structs strictly: unknown fields,
// wrong types, duplicate keys and missing required fields are errors that name
// the file, the line and column, and the field path (for example
// "machine.params.semop_us" or "series[2].name").
//
// It walks the yaml.v3 node tree against the Go value by reflection, using the
// `yaml:"name"` struct tags; a field tagged `required:"true"` must be present.
// Decoding only overwrites what the YAML mentions, so a caller can fill a
// struct with defaults first:
//
//	p := DefaultParams()
//	if err := strictyaml.Decode(file, node, &p); err != nil { ... }
//
// Fields of type yaml.Node or *yaml.Node keep the raw node (with its line
// numbers) for a later Decode by whoever understands it.
//
// Layer: imports only yaml.v3 and the standard library; every package that
// reads YAML (scenarios, machines, stacks, workloads, registry) may import
// it.
package strictyaml

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a decoding error at a position of a YAML file.
type Error struct {
	File   string // file name as given by the caller ("builtin/x.yaml", a path)
	Line   int    // 1-based line, 0 when unknown
	Column int    // 1-based column, 0 when unknown
	Field  string // field path such as "machine.params.semop_us"; may be empty
	Msg    string // what was wrong and what was expected
}

// Error formats the error as "file:line:col: field PATH: MSG".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		b.WriteString("<input>")
	} else {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errorf returns an *Error positioned at node (which may be nil, giving no
// line) for the given field path. Validators use it to report semantic errors
// ("must be positive") with the same shape as decoding errors.
func Errorf(file string, node *yaml.Node, field, format string, args ...any) *Error {
	e := &Error{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if node != nil {
		e.Line, e.Column = node.Line, node.Column
	}
	return e
}

// FieldError is Errorf positioned at the node found at field below root (see
// Find); when that field is absent it points at the deepest enclosing node
// that exists, so a missing value is reported at its parent mapping.
func FieldError(file string, root *yaml.Node, field, format string, args ...any) *Error {
	n, _ := locate(root, field)
	return Errorf(file, n, field, format, args...)
}

// describe names a node for "got ..." in error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing (null)"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return fmt.Sprintf("%q", v)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// suggest returns the valid name closest to key, or "" if none is close.
func suggest(key string, valid []string) string {
	best, bestD := "", 3
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	for _, v := range valid {
		if norm(v) == norm(key) {
			return v
		}
		if len(key) >= 3 && (strings.HasPrefix(v, key) || strings.HasPrefix(key, v)) && best == "" {
			best = v
		}
		if d := editDistance(key, v); d < bestD && d < len(v) {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance, bounded to short strings.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

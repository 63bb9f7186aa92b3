package calibration

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// WithFitted returns the file's text with its top-level fitted: block
// replaced by values (appended when it has none), every other byte
// unchanged. The values are written in the order of free:, each rounded
// (FormatValue); the tolerance is the file's, or DefaultTolerance.
func (f *File) WithFitted(values map[string]float64) []byte {
	tol := DefaultTolerance
	if f.Fitted != nil && f.Fitted.Tolerance > 0 {
		tol = f.Fitted.Tolerance
	}
	var b strings.Builder
	b.WriteString("fitted:                             # written by simrun calibrate; --check re-fits and compares\n")
	fmt.Fprintf(&b, "  tolerance: %s\n", strconv.FormatFloat(tol, 'f', -1, 64))
	b.WriteString("  values:\n")
	for _, p := range f.Free {
		if v, ok := values[p.Param]; ok {
			fmt.Fprintf(&b, "    %s: %s\n", p.Param, FormatValue(v, p.Step))
		}
	}
	block := []byte(b.String())

	lines := bytes.SplitAfter(f.data, []byte("\n"))
	start, end := -1, len(lines)
	top := f.root
	if top != nil && top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top != nil && top.Kind == yaml.MappingNode {
		m := top.Content
		for i := 0; i+1 < len(m); i += 2 {
			if m[i].Value == "fitted" {
				start = m[i].Line - 1
				if i+2 < len(m) {
					end = m[i+2].Line - 1
					// Comment lines just above the next key belong to it.
					for end-1 > start && isCommentOrBlank(lines[end-1]) {
						end--
					}
				}
				break
			}
		}
	}
	var out bytes.Buffer
	if start < 0 {
		out.Write(f.data)
		if len(f.data) > 0 && !bytes.HasSuffix(f.data, []byte("\n")) {
			out.WriteByte('\n')
		}
		out.Write(block)
		return out.Bytes()
	}
	for _, l := range lines[:start] {
		out.Write(l)
	}
	out.Write(block)
	for _, l := range lines[end:] {
		out.Write(l)
	}
	return out.Bytes()
}

func isCommentOrBlank(l []byte) bool {
	t := bytes.TrimSpace(l)
	return len(t) == 0 || t[0] == '#'
}

// FormatValue writes a fitted value: a multiple of step with step's
// decimals, else six significant digits, never in exponent notation.
func FormatValue(v, step float64) string {
	if step > 0 {
		dec := 0
		for s := step; dec < 12 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
			dec++
		}
		return strconv.FormatFloat(v, 'f', dec, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Value is one fitted parameter value a scenario includes.
type Value struct {
	Component, Field string
	Value            float64
	Step             float64
}

// Values are the file's fitted values, in the order of free: (each
// free param's also: params with it; none when it was never fitted).
func (f *File) Values() []Value {
	if f.Fitted == nil {
		return nil
	}
	var out []Value
	for _, p := range f.Free {
		if v, ok := f.Fitted.Values[p.Param]; ok {
			for _, name := range p.Params() {
				c, fl, _ := strings.Cut(name, ".")
				out = append(out, Value{c, fl, v, p.Step})
			}
		}
	}
	return out
}

// Node is the YAML scalar of v, as a scenario would write it.
func (v Value) Node() *yaml.Node {
	s := FormatValue(v.Value, v.Step)
	tag := "!!float"
	if !strings.ContainsAny(s, ".eE") {
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s}
}

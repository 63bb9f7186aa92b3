package main

import (
	"flag"
	"fmt"
	"github.com/msgsim/msgsim/internal/suggest"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/msgsim/msgsim/internal/paramdoc"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
)

// component is a machine, stack or workload whose params simrun params
// lists.
type component struct {
	kind, name, summary string
	field               string // where a scenario sets its params
	defaults            func() (any, error)
}

// components are every registered machine, stack and workload with
// params, in that order.
func components(reg *registry.Registry) []component {
	var out []component
	for _, m := range reg.Machines() {
		out = append(out, component{"machine", m.Name, m.Summary, "machine.params", m.Defaults})
	}
	for _, s := range reg.Stacks() {
		out = append(out, component{"stack", s.Name, s.Summary, "stack.params", s.Defaults})
	}
	for _, w := range reg.Workloads() {
		if w.Defaults == nil {
			continue
		}
		d := w.Defaults
		out = append(out, component{"workload", w.Name, "", "workload.params", func() (any, error) { return d(), nil }})
	}
	return out
}

func cmdParams(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("params", flag.ContinueOnError)
	pos, code, ok := parseFlags(fs, "params", args, stdout, stderr)
	if !ok {
		return code
	}
	all := components(builtins())
	if len(pos) == 0 {
		for _, c := range all {
			fmt.Fprintf(stdout, "%-9s %-16s %s\n", c.kind, c.name, c.summary)
		}
		fmt.Fprintln(stdout, "simrun params NAME lists one's parameters.")
		return exitOK
	}
	if !wantArgs("params", pos, 1, stderr) {
		return exitUsage
	}
	var names []string
	found := false
	for _, c := range all {
		names = append(names, c.name)
		if c.name != pos[0] {
			continue
		}
		found = true
		if err := writeParams(stdout, c); err != nil {
			fmt.Fprintf(stderr, "simrun params: %s: %v\n", c.name, err)
			return exitFailed
		}
	}
	if !found {
		fmt.Fprintf(stderr, "simrun params: no machine, stack or workload %q%s (there are: %s)\n", pos[0], suggest.Hint(pos[0], names), strings.Join(names, ", "))
		return exitUsage
	}
	return exitOK
}

// sourcesNote tells where the sources a parameter cites are.
const sourcesNote = "Sources: papers/NAME.txt is a paper of docs/references.md; hardware.yaml and calibration.yaml are reference/'s."

// writeParams lists c's parameters: each with its default, its range and
// unit (when the component states them) and its documentation, which
// cites the default's source.
func writeParams(w io.Writer, c component) error {
	d, err := c.defaults()
	if err != nil {
		return err
	}
	title := c.kind + " " + c.name
	if c.summary != "" {
		title += ": " + c.summary
	}
	fmt.Fprintf(w, "%s\nSet in a scenario under %s; each line: name, default, plausible range and unit.\n", title, c.field)
	fmt.Fprintln(w, sourcesNote)
	ranges := map[string]string{}
	if r, ok := d.(interface {
		Ranges() ([]machines.FloatRange, []machines.IntRange)
	}); ok {
		floats, ints := r.Ranges()
		for _, f := range floats {
			ranges[f.Field] = strings.TrimSpace(fmt.Sprintf("[%g, %g] %s", f.Lo, f.Hi, f.Unit))
		}
		for _, f := range ints {
			ranges[f.Field] = strings.TrimSpace(fmt.Sprintf("[%d, %d] %s", f.Lo, f.Hi, f.Unit))
		}
	}
	n := writeFields(w, "", reflect.ValueOf(d), ranges)
	if n == 0 {
		fmt.Fprintln(w, "  (no parameters)")
	}
	return nil
}

// writeFields writes the YAML fields of struct v (nested structs with
// their dotted names) and returns how many it wrote.
func writeFields(w io.Writer, prefix string, v reflect.Value, ranges map[string]string) int {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0
	}
	docs := map[string]paramdoc.Field{}
	var order []paramdoc.Field
	for _, f := range paramdoc.Of(v.Type()) {
		docs[f.Go] = f
		order = append(order, f)
	}
	n := 0
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct && paramdoc.Of(fv.Type()) != nil {
			n += writeFields(w, prefix+name+".", fv, ranges)
			continue
		}
		n++
		line := fmt.Sprintf("  %s%s: %s", prefix, name, formatValue(fv))
		if r := ranges[name]; r != "" {
			line += "   " + r
		} else if u := unitOf(name); u != "" {
			line += "   " + u
		}
		fmt.Fprintln(w, line)
		if doc := docOf(docs[sf.Name], order); doc != "" {
			for _, l := range wrap(doc, 74) {
				fmt.Fprintf(w, "      %s\n", l)
			}
		}
	}
	return n
}

// docOf is f's doc comment with the struct's Go field names written as
// their YAML names, or, for a field documented together with another
// ("TorusW and TorusH are ..."), a pointer to that one.
func docOf(f paramdoc.Field, order []paramdoc.Field) string {
	if f.Doc == "" {
		for _, o := range order {
			if o.Doc != "" && goName(f.Go).MatchString(o.Doc) {
				return "see " + o.YAML
			}
		}
		return ""
	}
	doc := f.Doc
	for _, o := range order {
		doc = goName(o.Go).ReplaceAllLiteralString(doc, o.YAML)
	}
	return doc
}

// goName matches Go identifier name as a whole word.
func goName(name string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
}

// formatValue is a default as a scenario would write it.
func formatValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Pointer:
		if v.IsNil() {
			return "(unset)"
		}
		return formatValue(v.Elem())
	case reflect.Map:
		if v.Len() == 0 {
			return "{}"
		}
	}
	return fmt.Sprint(v.Interface())
}

// unitOf is the unit a parameter's name ends in, or "".
func unitOf(name string) string {
	for _, u := range []struct{ suffix, unit string }{
		{"_mhz", "MHz"}, {"_ns", "ns"}, {"_us", "us"}, {"_ms", "ms"}, {"_mbps", "MB/s (10^6 bytes/s)"},
		{"_bytes", "bytes"}, {"_kb", "KB"}, {"_mb", "MB"}, {"_cycles", "cycles"}, {"_seconds", "s"},
	} {
		if strings.HasSuffix(name, u.suffix) {
			return u.unit
		}
	}
	return ""
}

// wrap breaks s into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

package strictyaml

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type params struct {
	SemopUS  float64 `yaml:"semop_us"`
	Lines    int     `yaml:"lines"`
	Small    int8    `yaml:"small"`
	Count    uint16  `yaml:"count"`
	Coherent bool    `yaml:"coherent"`
	Name     string  `yaml:"name"`
}

type component struct {
	Name   string    `yaml:"name" required:"true"`
	Params yaml.Node `yaml:"params"`
}

type doc struct {
	Name    string `yaml:"name" required:"true"`
	Seed    uint64 `yaml:"seed"`
	Machine struct {
		Name   string `yaml:"name"`
		Params params `yaml:"params"`
	} `yaml:"machine"`
	Series  []component       `yaml:"series"`
	Tags    map[string]string `yaml:"tags"`
	Ptr     *params           `yaml:"ptr"`
	Raw     *yaml.Node        `yaml:"raw"`
	Skipped string            `yaml:"-"`
	Any     any               `yaml:"any"`
	Level   level             `yaml:"level"`
}

// level exercises yaml.Unmarshaler.
type level int

func (l *level) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("level must be low or high, got %q", n.Value)
	}
	return nil
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		line, col  int
		field      string
		msg        string // substring of Msg
	}{
		{"unknown top", "name: x\nsede: 3\n", 2, 1, "sede", `unknown field "sede" (did you mean "seed"?); valid fields: name, seed, machine, series, tags, ptr, raw, any, level`},
		{"unknown nested", "name: x\nmachine:\n  params:\n    semop: 3\n", 4, 5, "machine.params.semop", `unknown field "semop" (did you mean "semop_us"?)`},
		{"skipped field unknown", "name: x\nSkipped: y\n", 2, 1, "Skipped", `unknown field "Skipped"`},
		{"wrong type float", "name: x\nmachine:\n  params:\n    semop_us: abc\n", 4, 15, "machine.params.semop_us", `expected a number, got "abc"`},
		{"wrong type int", "name: x\nmachine: {params: {lines: 1.5}}\n", 2, 27, "machine.params.lines", `expected an integer, got "1.5"`},
		{"wrong type bool", "name: x\nmachine: {params: {coherent: yes}}\n", 2, 30, "machine.params.coherent", `expected true or false, got "yes"`},
		{"wrong type string", "name: [a]\n", 1, 7, "name", "expected a string, got a list"},
		{"null string", "name:\n", 1, 6, "name", "expected a string, got nothing (null)"},
		{"struct got scalar", "name: x\nmachine: 3\n", 2, 10, "machine", `expected a mapping (name: value lines), got "3"`},
		{"list got map", "name: x\nseries: {a: 1}\n", 2, 9, "series", "expected a list, got a mapping"},
		{"overflow int8", "name: x\nmachine: {params: {small: 300}}\n", 2, 27, "machine.params.small", "expected an integer from -128 to 127, got 300"},
		{"overflow uint16", "name: x\nmachine: {params: {count: 70000}}\n", 2, 27, "machine.params.count", "expected an integer from 0 to 65535, got 70000"},
		{"negative uint", "name: x\nseed: -1\n", 2, 7, "seed", "expected a non-negative integer, got -1"},
		{"overflow uint64", "name: x\nseed: 18446744073709551616\n", 2, 7, "seed", "expected an integer from 0 to 18446744073709551615"},
		{"missing required", "seed: 3\nmachine: {}\n", 1, 1, "name", `missing required field "name"`},
		{"missing required in list", "name: x\nseries:\n  - name: a\n  - params: {}\n", 4, 5, "series[1].name", `missing required field "name"`},
		{"wrong type in list", "name: x\nseries:\n  - name: a\n  - name: {b: 1}\n", 4, 11, "series[1].name", "expected a string, got a mapping"},
		{"duplicate key", "name: x\nseed: 1\nseed: 2\n", 3, 1, "seed", `duplicate key "seed" (first given at line 2)`},
		{"duplicate map key", "name: x\ntags:\n  a: 1\n  a: 2\n", 4, 3, "tags.a", `duplicate key "a"`},
		{"map wrong value", "name: x\ntags:\n  a: [1]\n", 3, 6, "tags.a", "expected a string, got a list"},
		{"unmarshaler", "name: x\nlevel: mid\n", 2, 8, "level", `level must be low or high, got "mid"`},
		{"malformed", "name: x\nseed: [1\n", 2, 0, "", "malformed YAML: did not find expected ',' or ']'"},
		{"malformed indent", "name: x\n seed: 2\n", 2, 0, "", "malformed YAML: mapping values are not allowed in this context"},
		{"unknown anchor", "name: x\nptr: *p\n", 2, 6, "", `unknown anchor "p"`},
		{"alias cycle", "name: x\nseries: &s\n  - name: a\n    params: *s\n", 0, 0, "", ""},
		{"merge cycle", "name: x\nmachine: &m\n  <<: *m\n", 3, 7, "machine", "refers to a value that contains it"},
		{"two documents", "name: x\n---\nname: y\n", 3, 1, "", "second YAML document"},
		{"empty document", "", 1, 1, "name", `missing required field "name"`},
		{"bad merge", "name: x\nmachine:\n  <<: 3\n", 3, 7, "machine", "merge key << needs a mapping"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := Unmarshal("f.yaml", []byte(tc.yaml), &d)
			if tc.msg == "" {
				// Only "no panic, and either an error or a result" is required.
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want *Error", err, err)
			}
			if e.File != "f.yaml" || e.Line != tc.line || e.Column != tc.col || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %s\nwant f.yaml:%d:%d: field %s: ...%s...", e, tc.line, tc.col, tc.field, tc.msg)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "a.yaml", Line: 3, Column: 5, Field: "machine.params.semop_us", Msg: `expected a number, got "abc"`}
	if got, want := e.Error(), `a.yaml:3:5: field machine.params.semop_us: expected a number, got "abc"`; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	e = &Error{File: "a.yaml", Msg: "x"}
	if got, want := e.Error(), "a.yaml: x"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestDecodeValues(t *testing.T) {
	src := `
name: demo
seed: 1e6
machine:
  name: sx4
  params: {semop_us: 12.5, lines: 0x10, small: -3, count: 1_000, coherent: true, name: "7"}
series:
  - name: a
    params: {x: 1}
  - name: b
tags: {k: v, n: 3}
ptr: {lines: 2}
raw: [1, 2]
any: {a: [1, two]}
level: high
`
	var d doc
	d.Machine.Params.SemopUS = 99 // overwritten
	d.Machine.Params.Name = "keep"
	if err := Unmarshal("f.yaml", []byte(src), &d); err != nil {
		t.Fatal(err)
	}
	p := d.Machine.Params
	if d.Name != "demo" || d.Seed != 1000000 || d.Machine.Name != "sx4" || p.SemopUS != 12.5 || p.Lines != 16 ||
		p.Small != -3 || p.Count != 1000 || !p.Coherent || p.Name != "7" || d.Level != 2 {
		t.Errorf("decoded %+v", d)
	}
	if len(d.Series) != 2 || d.Series[0].Params.Kind != yaml.MappingNode || d.Series[0].Params.Line != 9 || d.Series[1].Params.Kind != 0 {
		t.Errorf("series %+v", d.Series)
	}
	if d.Tags["n"] != "3" || d.Ptr == nil || d.Ptr.Lines != 2 || d.Raw == nil || d.Raw.Kind != yaml.SequenceNode {
		t.Errorf("decoded %+v", d)
	}
	if m, ok := d.Any.(map[string]any); !ok || len(m["a"].([]any)) != 2 {
		t.Errorf("any = %#v", d.Any)
	}
}

func TestDefaultsKept(t *testing.T) {
	p := params{SemopUS: 40, Lines: 8, Name: "default"}
	root, err := Parse("m.yaml", []byte("lines: 16\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Decode("m.yaml", root, &p); err != nil {
		t.Fatal(err)
	}
	if p.SemopUS != 40 || p.Lines != 16 || p.Name != "default" {
		t.Errorf("got %+v", p)
	}
	// An absent raw node (zero yaml.Node) decodes as nothing.
	var zero yaml.Node
	if err := Decode("m.yaml", &zero, &p); err != nil || p.Lines != 16 {
		t.Errorf("zero node: %v %+v", err, p)
	}
}

func TestDecodeAtPath(t *testing.T) {
	var d doc
	src := "name: x\nseries:\n  - name: a\n    params:\n      semop_us: fast\n"
	if err := Unmarshal("s.yaml", []byte(src), &d); err != nil {
		t.Fatal(err)
	}
	var p params
	err := DecodeAt("s.yaml", "series[0].params", &d.Series[0].Params, &p)
	want := `s.yaml:5:17: field series[0].params.semop_us: expected a number, got "fast"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestMergeKeysAndAliases(t *testing.T) {
	src := `
base: &b {semop_us: 1, lines: 4}
name: x
machine:
  params:
    <<: *b
    lines: 8
`
	type withBase struct {
		doc  `yaml:",inline"`
		Base params `yaml:"base"`
	}
	var d withBase
	if err := Unmarshal("f.yaml", []byte(src), &d); err != nil {
		t.Fatal(err)
	}
	if d.Machine.Params.SemopUS != 1 || d.Machine.Params.Lines != 8 {
		t.Errorf("got %+v", d.Machine.Params)
	}
}

func TestAliasBomb(t *testing.T) {
	src := `a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
`
	var m map[string][]any // decoded by yaml.v3, which has its own limit
	err := Unmarshal("bomb.yaml", []byte(src), &m)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("got %v", err)
	}
	var n struct { // decoded here
		A []string               `yaml:"a"`
		B [][]string             `yaml:"b"`
		C [][][]string           `yaml:"c"`
		D [][][][]string         `yaml:"d"`
		E [][][][][]string       `yaml:"e"`
		F [][][][][][]string     `yaml:"f"`
		G [][][][][][][]string   `yaml:"g"`
		H [][][][][][][][]string `yaml:"h"`
	}
	err = Unmarshal("bomb.yaml", []byte(src), &n)
	if err == nil || !strings.Contains(err.Error(), "too many aliased values") {
		t.Errorf("got %v", err)
	}
}

func TestMerge(t *testing.T) {
	base := mustParse(t, `
a: 1
nested:
  x: 1
  y: 2
list: [1, 2, 3]
keep: k
`)
	over := mustParse(t, `
nested:
  y: 20
  z: 30
list: [9]
a: 10
new: n
`)
	m := Merge(base, over)
	var got struct {
		A      int            `yaml:"a"`
		Nested map[string]int `yaml:"nested"`
		List   []int          `yaml:"list"`
		Keep   string         `yaml:"keep"`
		New    string         `yaml:"new"`
	}
	if err := Decode("m", m, &got); err != nil {
		t.Fatal(err)
	}
	if got.A != 10 || got.Nested["x"] != 1 || got.Nested["y"] != 20 || got.Nested["z"] != 30 ||
		len(got.List) != 1 || got.List[0] != 9 || got.Keep != "k" || got.New != "n" {
		t.Errorf("merged %+v", got)
	}
	// Lines are those of the original values.
	for path, want := range map[string]int{"a": 6, "nested.x": 4, "nested.y": 3, "nested.z": 4, "list": 5, "keep": 7, "new": 7} {
		if n := Find(m, path); n == nil || n.Line != want {
			t.Errorf("%s: node %v, want line %d", path, n, want)
		}
	}
	// Inputs are untouched.
	if n := Find(base, "nested.y"); n.Value != "2" {
		t.Errorf("base modified: %v", n.Value)
	}
	// nil and zero handling.
	if Merge(nil, nil) != nil {
		t.Error("Merge(nil, nil) != nil")
	}
	if n := Merge(nil, over); Find(n, "a").Value != "10" {
		t.Error("Merge(nil, over)")
	}
	if n := Merge(base, &yaml.Node{}); Find(n, "a").Value != "1" {
		t.Error("Merge(base, zero)")
	}
	if n := Merge(base, mustParse(t, "~")); Find(n, "a").Value != "1" {
		t.Error("Merge(base, null)")
	}
	// A non-mapping override replaces.
	if n := Merge(base, mustParse(t, "[1]")); n.Kind != yaml.SequenceNode {
		t.Error("Merge(map, list) should give the list")
	}
}

func TestFind(t *testing.T) {
	root := mustParse(t, "a:\n  b:\n    - x\n    - c: 5\n")
	if n := Find(root, "a.b[1].c"); n == nil || n.Value != "5" || n.Line != 4 {
		t.Errorf("Find = %v", n)
	}
	for _, p := range []string{"a.z", "a.b[2]", "a.b[x]", "a.b.c", "q"} {
		if n := Find(root, p); n != nil {
			t.Errorf("Find(%q) = %v, want nil", p, n)
		}
	}
	e := FieldError("f", root, "a.b[1].d", "must be set")
	if e.Line != 4 || e.Column != 7 {
		t.Errorf("FieldError at %d:%d, want 4:7", e.Line, e.Column)
	}
}

func TestNonPointer(t *testing.T) {
	var p params
	if err := Unmarshal("f", []byte("a: 1"), p); err == nil {
		t.Error("want error for non-pointer")
	}
	if err := Unmarshal("f", []byte("a: 1"), nil); err == nil {
		t.Error("want error for nil")
	}
}

func TestFloatSpecials(t *testing.T) {
	var v struct {
		A float64 `yaml:"a"`
		B float32 `yaml:"b"`
	}
	if err := Unmarshal("f", []byte("a: .inf\nb: 1e10\n"), &v); err != nil || !math.IsInf(v.A, 1) || v.B != 1e10 {
		t.Errorf("%v %+v", err, v)
	}
	if err := Unmarshal("f", []byte("b: 1e300\n"), &v); err == nil {
		t.Error("want float32 overflow error")
	}
}

func mustParse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	n, err := Parse("t.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

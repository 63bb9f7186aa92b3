package strictyaml

import (
	"strings"
	"testing"
)

func TestAtAliasUse(t *testing.T) {
	src := "a: &x {n: -5}\nb:\n  c: *x\nd: *x\ne: {n: 1}\n"
	root, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field      string
		line, col  int // of the error as decoded (inside the anchor)
		want       string
		wantLine   int
		wantColumn int
	}{
		{"b.c.n", 1, 12, "(through the alias *x here; its anchor &x is at line 1, column 4, the value in error at line 1, column 12)", 3, 6},
		{"d.n", 1, 12, "alias *x here", 4, 4},
		{"a.n", 1, 12, "", 1, 12}, // the anchor itself: unchanged
		{"e.n", 5, 8, "", 5, 8},   // no alias
	} {
		e := AtAliasUse(root, &Error{File: "f.yaml", Line: c.line, Column: c.col, Field: c.field, Msg: "bad"})
		if e.Line != c.wantLine || e.Column != c.wantColumn || (c.want != "" && !strings.Contains(e.Msg, c.want)) || (c.want == "" && e.Msg != "bad") {
			t.Errorf("%s: %v, want %d:%d and %q", c.field, e, c.wantLine, c.wantColumn, c.want)
		}
	}
}

// Package apicheck checks the size of package sim's API from its source.
// It is a package of its own so that sim's test binary, which runs the
// engine's benchmarks, does not link the parser: code layout alone moves
// those benchmarks by several per cent.
package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// simDir is package sim, from here.
const simDir = "../.."

// deprecatedMethods are Engine methods kept only for callers in packages
// being rewritten elsewhere (sim/mem, stacks/): each is marked Deprecated
// and names its replacement (Set with an Option, Hooks). Remove a name
// here with the method once its last caller has moved.
var deprecatedMethods = []string{}

// engineMethods are the exported methods of Engine and *Engine declared in
// package sim's sources, and whether Engine embeds a field (which would
// promote more). It reads the source rather than reflecting, since a
// binary that reflects on methods keeps every exported method of the
// program.
func engineMethods(t *testing.T) (names []string, embeds bool) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(simDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		name := en.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(simDir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 || !d.Name.IsExported() {
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.Name == "Engine" {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || ts.Name.Name != "Engine" {
						continue
					}
					for _, fld := range ts.Type.(*ast.StructType).Fields.List {
						embeds = embeds || len(fld.Names) == 0
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names, embeds
}

// TestEngineMethods: the engine keeps a small API, at most 20 exported
// methods beside the deprecated ones; what observes or steers a run is an
// Option of sim.Engine.Set, and the explorer's state is behind one pointer (Hooks).
func TestEngineMethods(t *testing.T) {
	const most = 20
	all, embeds := engineMethods(t)
	if embeds {
		t.Fatal("Engine embeds a field: its promoted methods would escape this count")
	}
	var names []string
	for _, m := range all {
		if !slices.Contains(deprecatedMethods, m) {
			names = append(names, m)
		}
	}
	if len(names) > most {
		t.Errorf("*sim.Engine has %d exported methods, at most %d allowed (beside the deprecated %v): %v", len(names), most, deprecatedMethods, names)
	}
	for _, d := range deprecatedMethods {
		if !slices.Contains(all, d) {
			t.Errorf("deprecated method %s is gone: remove it from deprecatedMethods", d)
		}
	}
	if len(all) < 20 {
		t.Errorf("found only %d methods (%v): is the parse right?", len(all), all)
	}
}

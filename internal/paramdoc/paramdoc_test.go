package paramdoc

import (
	"bytes"
	"errors"
	"github.com/msgsim/msgsim/internal/gomod"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestGeneratedIsCurrent: every package under Dirs with parameter structs
// has its GenFile as Extract gives it today, and no other has one, so a
// parameter's comment cannot change without simrun params saying so (run
// go generate in the package, or go generate ./...).
func TestGeneratedIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	mod, err := gomod.ModulePath(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range Dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return err
			}
			if e.Name() == "testdata" {
				return filepath.SkipDir
			}
			pkg, err := ExtractPackage(root, mod, path)
			if err != nil {
				return err
			}
			want := Source(pkg)
			have, err := os.ReadFile(filepath.Join(path, GenFile))
			switch {
			case errors.Is(err, fs.ErrNotExist) && want == nil:
			case err != nil && want != nil:
				t.Errorf("%s: no %s: run go generate there (its //go:generate line: go run github.com/msgsim/msgsim/internal/paramdoc/gen)", path, GenFile)
			case want == nil:
				t.Errorf("%s: %s documents no parameter struct: delete it", path, GenFile)
			case !bytes.Equal(have, want):
				t.Errorf("%s/%s is stale: run go generate in %s", path, GenFile, path)
			}
			if want != nil {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Error("no parameter struct documented")
	}
}

type sample struct {
	// ClockMHz is the clock: "150 MHz" (a source).
	ClockMHz float64 `yaml:"clock_mhz"`
}

type documented struct {
	Sample sample `yaml:"sample"`
}

func (documented) ParamDocs() []Field {
	return []Field{{YAML: "sample", Go: "Sample", Doc: "A sample."}}
}

// TestOf: a type is documented by its ParamDocs method, through pointers;
// other types are not.
func TestOf(t *testing.T) {
	if Of(reflect.TypeOf(sample{})) != nil {
		t.Error("a type without ParamDocs is documented")
	}
	if f := Of(reflect.TypeOf(&documented{})); len(f) != 1 || f[0].YAML != "sample" {
		t.Errorf("Of(*documented) = %v", f)
	}
}

// TestSource: a package's file names it, says how to regenerate it, and
// gives each documented type its method; a package without parameter
// structs gets none.
func TestSource(t *testing.T) {
	src := string(Source(Package{Path: "m/x", Name: "x", Types: map[string][]Field{"Params": {{YAML: "a_b", Go: "AB", Doc: `say "hi"`}}}}))
	for _, want := range []string{"DO NOT EDIT", "//go:generate go run github.com/msgsim/msgsim/internal/paramdoc/gen", "package x\n", "func (Params) ParamDocs() []paramdoc.Field", `{YAML: "a_b", Go: "AB", Doc: "say \"hi\""}`} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %q:\n%s", want, src)
		}
	}
	if Source(Package{Name: "y"}) != nil {
		t.Error("a package without parameter structs gets a file")
	}
}

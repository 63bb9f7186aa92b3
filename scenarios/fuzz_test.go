package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
)

// FuzzParse checks that no input makes parsing, validating, resolving or
// decoding the resolved params panic, and that every error is positioned.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	// The hostile-input corpus (cmd/simrun's TestHostileInputs runs it)
	// and the built-ins.
	files, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	names, _ := Builtin()
	for _, n := range names {
		if data, err := BuiltinSource(n); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			var e *strictyaml.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not a *strictyaml.Error: %v", err, err)
			}
			_ = err.Error()
			return
		}
		for _, r := range s.Resolved() {
			var p machineParams
			_ = r.Machine.DecodeParams(&p)
			_ = r.Stack.DecodeParams(&p)
			var m map[string]any
			_ = r.Workload.DecodeParams(&m)
		}
	})
}

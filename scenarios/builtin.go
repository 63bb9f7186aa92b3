package scenarios

import (
	"embed"
	"fmt"
	"github.com/msgsim/msgsim/internal/suggest"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// builtinFS holds the built-in scenarios, one NAME.yaml per scenario.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the names of the built-in scenarios, sorted.
func Builtin() ([]string, error) {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".yaml")
	}
	slices.Sort(names)
	return names, nil
}

// LoadBuiltin parses and validates the built-in scenario name; errors name
// the file "builtin/NAME.yaml".
func LoadBuiltin(name string) (*Scenario, error) {
	file := "builtin/" + name + ".yaml"
	data, err := builtinFS.ReadFile(file)
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, unknownBuiltin(name)
	}
	return Parse(file, data)
}

// Lookup loads a scenario given either a file path or a built-in name. An
// argument naming an existing file, or ending in .yaml or .yml, is a file;
// anything else is a built-in name, and an unknown one is an error listing
// the built-ins.
func Lookup(nameOrFile string) (*Scenario, error) {
	return LookupCapped(nameOrFile, 0)
}

// LookupCapped is Lookup reading a file with LoadCapped's cap.
func LookupCapped(nameOrFile string, maxBytes int64) (*Scenario, error) {
	ext := strings.ToLower(path.Ext(nameOrFile))
	if st, err := os.Stat(nameOrFile); (err == nil && !st.IsDir()) || ext == ".yaml" || ext == ".yml" {
		return LoadCapped(nameOrFile, maxBytes)
	}
	return LoadBuiltin(nameOrFile)
}

func unknownBuiltin(name string) error {
	names, err := Builtin()
	if err != nil {
		return fmt.Errorf("scenario %q: not a file, and the built-ins cannot be listed: %w", name, err)
	}
	if h := suggest.Hint(name, names); h != "" {
		return fmt.Errorf("scenario %q: no such file and no such built-in scenario%s; simrun list prints the built-ins", name, h)
	}
	return fmt.Errorf("scenario %q: no such file and no such built-in scenario; built-ins: %s",
		name, strings.Join(names, ", "))
}

// BuiltinSource returns the YAML text of the built-in scenario name, as
// embedded (simrun show prints it).
func BuiltinSource(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, unknownBuiltin(name)
	}
	return data, nil
}

package stacks_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The contract between a stack and the machine it runs on (DESIGN.md,
// "protocols are code"): protocol code holds a machines.Processor and
// calls plain operations on it. It does not see the CPU's model
// (mem.CPU), its fast paths (word sets, scans, merged stores), untimed
// memory outside a spin's predicate, the engine's clock or its merging.
// The check is syntactic: it parses every non-test file of the stacks'
// packages (stacks/*/) and names each breach with its position.

// forbiddenCalls are methods protocol code never calls, with why.
var forbiddenCalls = map[string]string{
	"ScanUncached":  "a merged scan is the machine's fast path: poll with LoadUncached inside Processor.Poll",
	"NewWordSet":    "word sets are the machine's fast path: wait with Processor.SpinUntil",
	"WaitWords":     "word sets are the machine's fast path: wait with Processor.SpinUntil",
	"StoreWords":    "merged stores are the machine's fast path: Store each word",
	"StoreNow":      "untimed store: Store",
	"CountUncached": "loads are counted by the loads themselves",
	"SleepSteps":    "stacks do not sleep: Compute, or a machine verb",
	"Sleep":         "stacks do not sleep: Compute, or a machine verb",
	"SetSwitch":     "a thread switch costs what the machine says (its parameter)",
	"Merging":       "stacks do not ask how the engine runs",
	"SetStepByStep": "stacks do not ask how the engine runs",
	"Memory":        "untimed access to memory: timed operations, or Peek inside a SpinUntil predicate",
	"Bytes":         "untimed access to memory: timed operations, or Peek inside a SpinUntil predicate",
	"Load64":        "untimed load: Load or LoadUncached",
	"Store64":       "untimed store: Store",
	"Poke":          "untimed store: Store, or Processor.Update for the program's own bytes",
	"PokeShared":    "untimed store: Store, or Processor.Update for the program's own bytes",
	"PeekSame":      "untimed load",
	"Fold":          "untimed combine: Processor.Reduce",
	"CPU":           "a stack holds a machines.Processor (machines.ProcessorOf), not the CPU's model",
}

// predicateOnly are the untimed reads allowed inside a SpinUntil
// predicate (the spin charges the polls) and nowhere else.
var predicateOnly = map[string]bool{"Peek": true, "PeekUncached": true}

// engineCalls are what a stack may ask of the engine: to fail the run, and
// to tell the livelock detector of progress and retries.
var engineCalls = map[string]bool{"Fail": true, "Progress": true, "Retry": true}

// forbiddenTypes are the machine's internals a stack never names.
var forbiddenTypes = map[string]string{
	"mem.CPU":     "hold a machines.Processor",
	"mem.WordSet": "wait with Processor.SpinUntil",
	"sim.Engine":  "a stack sees a process, not the engine",
}

// checkContract returns the breaches of the contract in one file's source.
func checkContract(fset *token.FileSet, f *ast.File) []string {
	var out []string
	bad := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	// The workload's accessor (stacks.Rank.CPU: the application program's
	// view, for filling and checking buffers) may name the CPU.
	accessor := func(d *ast.FuncDecl) bool {
		return d.Name.Name == "CPU" && d.Recv != nil && d.Type.Params.NumFields() == 0
	}
	var inPred []ast.Node // predicate function literals of SpinUntil calls
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "SpinUntil" {
				for _, a := range c.Args {
					if fl, ok := a.(*ast.FuncLit); ok {
						inPred = append(inPred, fl)
					}
				}
			}
		}
		return true
	})
	within := func(n ast.Node) bool {
		for _, fl := range inPred {
			if fl.Pos() <= n.Pos() && n.End() <= fl.End() {
				return true
			}
		}
		return false
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && accessor(fd) {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					name := id.Name + "." + x.Sel.Name
					if why, ok := forbiddenTypes[name]; ok {
						bad(x, "names %s: %s", name, why)
					}
				}
			case *ast.CallExpr:
				s, ok := x.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				name := s.Sel.Name
				if pkg, ok := s.X.(*ast.Ident); ok && pkg.Name == "machines" {
					break // machines.Memcpy, machines.ProcessorOf: verbs
				}
				if why, ok := forbiddenCalls[name]; ok {
					bad(x, "calls %s: %s", name, why)
				}
				if predicateOnly[name] && !within(x) {
					bad(x, "calls %s outside a SpinUntil predicate: untimed reads are the spin's, which charges its polls", name)
				}
				if inner, ok := s.X.(*ast.CallExpr); ok {
					if is, ok := inner.Fun.(*ast.SelectorExpr); ok && is.Sel.Name == "Engine" && !engineCalls[name] {
						bad(x, "calls Engine().%s: a stack asks the engine only to fail the run or to note progress and retries", name)
					}
				}
			}
			return true
		})
	}
	return out
}

// stackFiles are the non-test Go files of the stacks' packages.
func stackFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if filepath.Dir(path) == "." {
			return nil // this package: the stacks' shared plumbing
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func TestStacksKeepTheProcessorContract(t *testing.T) {
	files := stackFiles(t)
	if len(files) < 20 {
		t.Fatalf("found %d stack files: is the walk rooted at stacks/?", len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range checkContract(fset, f) {
			t.Error(b)
		}
	}
}

// TestContractCatchesPlantedBreaches plants each kind of breach in a
// stack-like file and checks that the contract names it.
func TestContractCatchesPlantedBreaches(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"scan", `s, _, _ := d.cpu.ScanUncached(p, d.ws, 0, 4, 0); _ = s`, "calls ScanUncached"},
		{"word set", `d.ws = d.cpu.NewWordSet(4)`, "calls NewWordSet"},
		{"merged stores", `d.cpu.StoreWords(p, 0, 1, 2)`, "calls StoreWords"},
		{"sleep", `p.Sleep(5)`, "calls Sleep"},
		{"thread switch", `d.core.SetSwitch(5)`, "calls SetSwitch"},
		{"untimed load", `_ = d.mem.Load64(8)`, "calls Load64"},
		{"memory handle", `_ = d.cpu.Memory()`, "calls Memory"},
		{"peek outside a spin", `_ = d.cpu.PeekUncached(8, 8)`, "outside a SpinUntil predicate"},
		{"engine merging", `_ = p.Engine().Merging(p)`, "calls Merging"},
		{"engine clock", `_ = p.Engine().Now()`, "calls Engine().Now"},
		{"cpu model", `var c *mem.CPU; _ = c`, "names mem.CPU"},
		{"cpu accessor use", `_ = d.m.CPU(0)`, "calls CPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package x\nfunc (d *dev) f(p *sim.Proc) {\n" + tt.body + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(checkContract(fset, f), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("planted %q: breaches %q, want one containing %q", tt.body, got, tt.want)
			}
		})
	}
	// What the contract allows: timed operations, a peek inside a spin's
	// predicate, failing the run, the workload's accessor.
	ok := `package x
func (d *dev) CPU() *mem.CPU { return d.m.CPU(d.rank) }
func (d *dev) f(p *sim.Proc) {
	v := d.cpu.LoadUncached(p, 8, 8)
	d.cpu.SpinUntil(p, sim.Reason("w"), func() bool { return d.cpu.PeekUncached(8, 8) != v }, 8)
	d.cpu = machines.ProcessorOf(d.m, 0)
	p.Engine().Fail(nil)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "allowed.go", ok, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b := checkContract(fset, f); len(b) > 0 {
		t.Errorf("allowed code reported: %v", b)
	}
}

// Package layers checks that the module's imports point down the layers of
// DESIGN.md: cmd → scenarios/runner/registry → workloads → stacks →
// machines → sim. It reads the import graph of the module's packages (their
// non-test files) and reports every edge the rules below do not allow.
//
// The rules, from DESIGN's "Layers" and the packages as they stand:
//
//   - sim and its sub-packages import nothing of the project but sim itself
//     (a building block such as sim/mem imports sim; sim imports its own
//     sim/internal packages).
//   - machines holds the capability interfaces; machines/lapi is a
//     capability too (the LAPI verbs a stack asks for without naming the SP).
//     machines/sysv is a building block shared by the shared-memory machines.
//     A concrete machine (every other machines/NAME) imports sim, the
//     capability and building-block packages, never another concrete
//     machine, and never a stack.
//   - A stack (stacks/NAME) imports the machine capabilities, sim and the
//     stacks API package, never a concrete machine, another stack (stacks
//     built on stacks are wired by the registry) or a workload.
//   - A workload (workloads/NAME) imports stacks, the machine capabilities
//     and sim, never a concrete machine. Workloads may share helpers with
//     each other (workloads/payload).
//   - litmus/ (litmus tests: parsers, CPU models, exhaustive search) is a
//     subsystem in the workloads' layer: it runs tests on sim/mem's CPU
//     models and on the machines' verbs, so it is above the machines and
//     below the registry. It imports no workload (workloads/litmus, the
//     adapter that makes a test a scenario's workload, imports it) and no
//     stack. A machine tunes litmus runs through an interface litmus
//     defines and the machine implements, never by importing litmus.
//   - scenarios, runner, registry and calibration are the layer that ties a
//     scenario to a machine, a stack and a workload; only the registry (and
//     its registry/all) may name concrete machines and stacks.
//   - cmd imports anything below it.
//   - Side packages: internal/ (small utilities) imports only internal/ and
//     may be imported by every layer above sim; report/ (results, figures)
//     and bench/ (embedded data) import only internal/ and may be imported
//     from the workloads layer up (a machine or a stack reports nothing).
package layers

import (
	"fmt"
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Layer ranks: an import may point to a lower rank, or stay in its rank
// where the rules allow it.
const (
	rankSim = iota
	rankMachines
	rankStacks
	rankWorkloads
	rankTop // scenarios, runner, registry, calibration
	rankCmd
)

// kind is what a package is within its layer.
type kind int

const (
	kindOther       kind = iota
	kindCapability       // machines, machines/lapi
	kindBuilding         // machines/sysv
	kindMachine          // a concrete machine
	kindStacksAPI        // stacks
	kindStack            // stacks/NAME
	kindRegistry         // registry, registry/all
	kindSide             // internal/, report/, bench/
	kindInternal         // internal/ (a side package usable above sim)
	kindSimInternal      // sim/internal/...
)

// class places a package (path relative to the module) in a layer.
type class struct {
	rank int
	kind kind
	side bool // internal/, report/, bench/: no rank of their own
}

// Capabilities are the packages under machines/ that hold interfaces a stack
// or workload may ask for; Building are building blocks shared by machines.
var (
	Capabilities = []string{"machines", "machines/lapi"}
	Building     = []string{"machines/sysv"}
)

func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

func classify(rel string) (class, bool) {
	switch {
	case under(rel, "sim/internal"):
		return class{rank: rankSim, kind: kindSimInternal}, true
	case under(rel, "sim"):
		return class{rank: rankSim}, true
	case slices.Contains(Capabilities, rel):
		return class{rank: rankMachines, kind: kindCapability}, true
	case slices.Contains(Building, rel):
		return class{rank: rankMachines, kind: kindBuilding}, true
	case under(rel, "machines"):
		return class{rank: rankMachines, kind: kindMachine}, true
	case rel == "stacks":
		return class{rank: rankStacks, kind: kindStacksAPI}, true
	case under(rel, "stacks"):
		return class{rank: rankStacks, kind: kindStack}, true
	case under(rel, "workloads"), under(rel, "litmus"):
		return class{rank: rankWorkloads}, true
	case under(rel, "registry"):
		return class{rank: rankTop, kind: kindRegistry}, true
	case under(rel, "scenarios"), under(rel, "runner"), under(rel, "calibration"):
		return class{rank: rankTop}, true
	case under(rel, "cmd"):
		return class{rank: rankCmd}, true
	case under(rel, "internal"):
		return class{kind: kindInternal, side: true}, true
	case under(rel, "report"), under(rel, "bench"):
		return class{kind: kindSide, side: true}, true
	}
	return class{}, false
}

// Violation is one import the layers do not allow.
type Violation struct {
	From, To string // package paths relative to the module
	Why      string
}

func (v Violation) String() string { return fmt.Sprintf("%s imports %s: %s", v.From, v.To, v.Why) }

// Exception is an import allowed against the rules, with the reason.
type Exception struct {
	From, To, Why string
}

// Exceptions are the imports today's code makes against the rules. Each is
// named and explained; none is open today.
var Exceptions = []Exception{}

// allowed reports why the import from → to breaks a rule ("" when it does
// not). Both are paths relative to the module.
func allowed(from, to string) string {
	f, okf := classify(from)
	t, okt := classify(to)
	if !okf {
		return fmt.Sprintf("%s is in no layer of DESIGN.md (add it to internal/layers)", from)
	}
	if !okt {
		return fmt.Sprintf("%s is in no layer of DESIGN.md (add it to internal/layers)", to)
	}
	switch {
	case f.side:
		if t.kind != kindInternal {
			return "internal/, report/ and bench/ import only internal/"
		}
		return ""
	case t.side:
		if f.rank == rankSim {
			return "sim imports nothing of the project"
		}
		if t.kind != kindInternal && f.rank < rankWorkloads {
			return "report/ and bench/ are imported from the workloads layer up"
		}
		return ""
	case f.rank == rankSim:
		if t.rank != rankSim {
			return "sim imports nothing of the project"
		}
		if t.kind == kindSimInternal && !under(from, "sim") {
			return "sim/internal is sim's own"
		}
		return ""
	case t.rank > f.rank:
		return "an upward import (DESIGN's arrows point down only)"
	}
	// Down or within a layer.
	switch {
	case t.kind == kindMachine && f.kind != kindRegistry && f.rank != rankCmd && from != to:
		if f.rank == rankMachines {
			return "a machine imports capability and building-block packages, never another machine"
		}
		return "only the registry names a concrete machine; ask for a capability (machines, machines/lapi)"
	case t.kind == kindBuilding && f.rank != rankMachines:
		return "a machine building block is imported by machines only"
	case f.kind == kindCapability && t.kind != kindCapability && t.rank == rankMachines:
		return "a capability package imports only capabilities and sim"
	case under(from, "litmus") && (under(to, "workloads") || under(to, "stacks")):
		return "litmus imports no workload and no stack (workloads/litmus is its workload adapter)"
	case t.kind == kindStack && f.kind != kindRegistry && f.rank != rankCmd:
		if f.kind == kindStack {
			return "a stack never imports another stack (the registry wires stacks built on stacks)"
		}
		return "only the registry names a concrete stack; use the stacks API"
	}
	return ""
}

// Check returns the violations of the import graph imports (a package path
// relative to the module → the module packages it imports, also relative),
// less the exceptions, in a stable order.
func Check(imports map[string][]string, exceptions []Exception) []Violation {
	var out []Violation
	for from, tos := range imports {
		for _, to := range tos {
			why := allowed(from, to)
			if why == "" || slices.ContainsFunc(exceptions, func(e Exception) bool { return e.From == from && e.To == to }) {
				continue
			}
			out = append(out, Violation{From: from, To: to, Why: why})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// Graph reads the import graph of the module rooted at root whose path is
// module: every package directory's non-test files under the build context's
// default tags, keeping the imports of the module's own packages, with both
// ends relative to the module. testdata and hidden directories are skipped.
func Graph(root, module string) (map[string][]string, error) {
	g := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var own []string
		for _, imp := range pkg.Imports {
			if imp == module {
				own = append(own, ".")
			} else if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, r)
			}
		}
		g[rel] = own
		return nil
	})
	return g, err
}

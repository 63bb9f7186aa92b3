package layers

import (
	"github.com/msgsim/msgsim/internal/gomod"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModuleLayers checks every import of the module's packages against
// DESIGN's layers.
func TestModuleLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	module, err := gomod.ModulePath(root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Graph(root, module)
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"sim", "machines", "stacks", "workloads", "registry", "cmd/simrun"} {
		if _, ok := g[must]; !ok {
			t.Fatalf("the graph has no package %s: %v", must, g)
		}
	}
	for _, v := range Check(g, Exceptions) {
		t.Error(v)
	}
	// Every exception is still needed: one that no import makes any more
	// goes.
	for _, e := range Exceptions {
		if !slices.Contains(g[e.From], e.To) || allowed(e.From, e.To) == "" {
			t.Errorf("exception %s → %s is no longer needed: remove it", e.From, e.To)
		}
	}
}

// TestPlantedImports runs the checker on a synthetic graph: a legal module,
// then each planted import that breaks a rule, which must be reported.
func TestPlantedImports(t *testing.T) {
	legal := map[string][]string{
		"sim":               {"sim/internal/calendar"},
		"sim/mem":           {"sim"},
		"machines":          {"sim", "sim/mem", "internal/strictyaml"},
		"machines/lapi":     {"machines", "sim"},
		"machines/sysv":     {"sim"},
		"machines/t3d":      {"machines", "sim", "sim/net"},
		"machines/sx4":      {"machines", "machines/sysv"},
		"stacks":            {"machines", "sim"},
		"stacks/mpich":      {"stacks", "machines", "internal/strictyaml"},
		"stacks/armci":      {"stacks", "machines/lapi"},
		"workloads":         {"stacks", "report"},
		"workloads/ping":    {"workloads", "workloads/payload", "machines"},
		"workloads/payload": {"sim/mem"},
		"litmus":            {"machines", "sim/mem", "sim/explore"},
		"workloads/litmus":  {"litmus", "workloads", "report"},
		"report":            {},
		"registry":          {"machines/t3d", "stacks/mpich", "workloads"},
		"runner":            {"registry", "scenarios", "report"},
		"cmd/simrun":        {"runner", "machines/t3d", "sim"},
		"internal/suggest":  {},
	}
	if v := Check(legal, nil); len(v) != 0 {
		t.Fatalf("the legal graph: %v", v)
	}
	for _, tc := range []struct{ from, to, why string }{
		{"sim", "machines", "sim imports nothing"},
		{"sim/mem", "internal/strictyaml", "sim imports nothing"},
		{"machines/t3d", "stacks/mpich", "upward"},
		{"machines/t3d", "stacks", "upward"},
		{"machines/t3d", "machines/sx4", "never another machine"},
		{"machines", "machines/t3d", "never another machine"},
		{"stacks/mpich", "workloads", "upward"},
		{"stacks/mpich", "machines/t3d", "only the registry names a concrete machine"},
		{"stacks/armci", "stacks/mpich", "never imports another stack"},
		{"stacks/mpich", "report", "from the workloads layer up"},
		{"workloads/ping", "machines/t3d", "only the registry names a concrete machine"},
		{"workloads/ping", "stacks/mpich", "only the registry names a concrete stack"},
		{"workloads/ping", "machines/sysv", "imported by machines only"},
		{"workloads", "registry", "upward"},
		{"machines/t3d", "litmus", "upward"},
		{"machines", "litmus", "upward"},
		{"litmus", "workloads/litmus", "litmus imports no workload"},
		{"litmus", "workloads", "litmus imports no workload"},
		{"litmus", "stacks", "litmus imports no workload and no stack"},
		{"litmus", "machines/sp", "only the registry names a concrete machine"},
		{"registry", "cmd/simrun", "upward"},
		{"report", "workloads", "import only internal"},
		{"internal/suggest", "sim", "import only internal"},
		{"workloads", "tools/x", "no layer"},
	} {
		g := map[string][]string{}
		for k, v := range legal {
			g[k] = slices.Clone(v)
		}
		g[tc.from] = append(g[tc.from], tc.to)
		v := Check(g, nil)
		if len(v) != 1 || v[0].From != tc.from || v[0].To != tc.to || !strings.Contains(v[0].Why, tc.why) {
			t.Errorf("planted %s → %s: got %v, want one violation saying %q", tc.from, tc.to, v, tc.why)
		}
		// A named exception lets it through.
		if v := Check(g, []Exception{{From: tc.from, To: tc.to, Why: "planted"}}); len(v) != 0 {
			t.Errorf("planted %s → %s with an exception: %v", tc.from, tc.to, v)
		}
	}
}

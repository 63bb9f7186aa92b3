package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/scenarios"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	const head = "name: x\ntitle: t\nseed: 1\nmachine: {name: sci}\nstack: {name: scampi}\n"
	for _, c := range []struct {
		name, src string
		series    int
		errs      []string // substrings of the errors, in order
	}{
		{"ok", head + "workload: {name: pingpong, params: {sizes: [8]}}\n", 1, nil},
		{"unknown workload", head + "workload: {name: pingpnog}\n", 0, []string{`unknown workload "pingpnog" (did you mean "pingpong"?)`}},
		{"inherited param once", head + "workload: {name: pingpong, params: {sizes: [8], mdoe: x}}\nseries:\n  - name: a\n  - name: b\n", 2,
			[]string{"workload.params.mdoe"}},
	} {
		s, sp, errs := Load(all.Default(), write(strings.ReplaceAll(c.name, " ", "-")+".yaml", c.src), LoadOptions{})
		if s == nil {
			t.Fatalf("%s: no scenario: %v", c.name, errs)
		}
		if len(errs) != len(c.errs) {
			t.Fatalf("%s: errors %v, want %d", c.name, errs, len(c.errs))
		}
		for i, e := range errs {
			if !strings.Contains(e.Error(), c.errs[i]) || strings.Contains(e.Error(), "series[") {
				t.Errorf("%s: error %q, want %q at the top level", c.name, e, c.errs[i])
			}
		}
		if len(errs) == 0 && len(sp) != c.series {
			t.Errorf("%s: %d specs, want %d", c.name, len(sp), c.series)
		}
	}
}

// TestCostEstimate: a series estimated above the limit is refused at the
// param that drives the estimate, with the estimate; a raised limit or
// none accepts it; every built-in scenario is within the default.
func TestCostEstimate(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big.yaml")
	src := "name: big\ntitle: t\nseed: 1\nmachine: {name: t3d}\nstack: {name: aclmpl}\nworkload:\n  name: pingpong\n  params:\n    repetitions: 1e12\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max  float64
		want string
	}{
		{0, "big.yaml:9:18: field workload.params.repetitions: series big would take about 1.1e+17 events"},
		{-1, ""},
		{1e18, ""},
	} {
		_, _, errs := Load(all.Default(), f, LoadOptions{MaxEvents: c.max})
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("limit %g: %v", c.max, errs)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want)):
			t.Errorf("limit %g: errors %v, want %q", c.max, errs, c.want)
		}
	}
	names, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, _, errs := Load(all.Default(), name, LoadOptions{}); len(errs) > 0 {
			t.Errorf("built-in %s: %v", name, errs)
		}
	}
}

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry/all"
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
		s, sp, errs := Load(all.Default(), write(strings.ReplaceAll(c.name, " ", "-")+".yaml", c.src), nil)
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

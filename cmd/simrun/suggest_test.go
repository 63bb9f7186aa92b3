package main

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped scenario, machine, stack or workload name
// is answered with the nearest registered one.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "t3d-tabel1"}, `(did you mean "t3d-table1"?)`},
		{[]string{"show", "sx4-fig77"}, `(did you mean "sx4-fig7"?)`},
		{[]string{"params", "chalenge"}, `(did you mean "challenge"?)`},
		{[]string{"params", "scmpi"}, `(did you mean "scampi"?)`},
		{[]string{"litmus", "SB", "--machine", "t3e"}, `(did you mean "t3d"?)`},
		{[]string{"validate", write(t, dir, "m.yaml", "name: x\nmachine: {name: sic}\nstack: {name: aclmp}\nworkload: {name: pingpog}\n")}, `(did you mean "sci"?)`},
		{[]string{"validate", write(t, dir, "s.yaml", "name: x\nmachine: {name: sci}\nstack: {name: aclmp}\nworkload: {name: pingpong}\n")}, `(did you mean "aclmpl"?)`},
		{[]string{"validate", write(t, dir, "w.yaml", "name: x\nmachine: {name: sci}\nstack: {name: aclmpl}\nworkload: {name: pingpog}\n")}, `(did you mean "pingpong"?)`},
	} {
		code, _, errs := simrun(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("simrun %s: exit %d, stderr %q; want exit %d and %s", strings.Join(c.args, " "), code, errs, exitUsage, c.want)
		}
	}
}

package trace

import (
	"slices"
	"testing"

	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/pingpong"
)

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// registryWorkload is a workload's runner by name (the ones the replay's
// tests compare with).
func registryWorkload(t *testing.T, name string) (workloads.Runner, bool) {
	t.Helper()
	if name == pingpong.Name {
		return pingpong.Run, true
	}
	return nil, false
}

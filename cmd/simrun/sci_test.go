package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestSCITeachingScenarios: each ScaMPI teaching scenario (one safeguard
// of papers/scampi-sci.txt 1.5.1 removed) fails as the corruption it
// expects for several seeds, and a run is byte-identical when repeated.
func TestSCITeachingScenarios(t *testing.T) {
	for _, name := range []string{"sci-no-membarrier", "sci-no-crc", "sci-index-bytewise"} {
		for seed := 1; seed <= 3; seed++ {
			var results [2][]byte
			for i := range results {
				dir := t.TempDir()
				code, stdout, stderr := simrun(t, "run", name, "--out", dir, "--quiet", "--seed", fmt.Sprint(seed))
				if code != exitOK || !strings.Contains(stdout, "expected failure: corruption") {
					t.Fatalf("%s seed %d: exit %d\n%s\n%s", name, seed, code, stdout, stderr)
				}
				results[i] = read(t, filepath.Join(dir, "results.json"))
			}
			if !bytes.Equal(results[0], results[1]) {
				t.Errorf("%s seed %d: two runs differ", name, seed)
			}
		}
	}
}

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
// expects for several seeds (1, the scenario's, is the run
// TestGoldenScenarios pins; 2 and 3), and a run is byte-identical when
// repeated.
func TestSCITeachingScenarios(t *testing.T) {
	for _, name := range []string{"sci-no-membarrier", "sci-no-crc", "sci-index-bytewise"} {
		if r := runBuiltin(t, name); r.code != exitOK || !strings.Contains(r.stdout, "expected failure: corruption") {
			t.Fatalf("%s: exit %d\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		var results [][]byte
		for _, seed := range []int{2, 3, 3} {
			dir := t.TempDir()
			code, stdout, stderr := simrun(t, "run", name, "--out", dir, "--quiet", "--seed", fmt.Sprint(seed))
			if code != exitOK || !strings.Contains(stdout, "expected failure: corruption") {
				t.Fatalf("%s seed %d: exit %d\n%s\n%s", name, seed, code, stdout, stderr)
			}
			results = append(results, read(t, filepath.Join(dir, "results.json")))
		}
		if !bytes.Equal(results[1], results[2]) {
			t.Errorf("%s seed 3: two runs differ", name)
		}
	}
}

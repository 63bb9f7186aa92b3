package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFidelityListsFailingClaims keeps docs/fidelity.md true: its count of
// the built-ins' claims, of the training ones (fitted: never counted as
// holding) and of those that fail, and its table of failing
// claims, name the same claims as testdata/claims.golden (which
// TestBuiltinClaims keeps current).
func TestFidelityListsFailingClaims(t *testing.T) {
	golden := string(read(t, "testdata/claims.golden"))
	total, training, failing := 0, 0, map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(golden), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		total++
		switch strings.TrimSuffix(f[2], ":") {
		case "FAILS":
			failing[f[0]]++
		case "training":
			training++
		}
	}
	nfail := 0
	for _, n := range failing {
		nfail += n
	}
	doc, err := os.ReadFile("../../docs/fidelity.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	want := fmt.Sprintf("checks %d claims: %d hold, %d are training (fitted) and the %d below fail", total, total-nfail-training, training, nfail)
	if !strings.Contains(text, want) {
		t.Errorf("docs/fidelity.md does not say %q (claims.golden: %d claims, %d training, %d failing)", want, total, training, nfail)
	}
	// The table's rows name their scenario first: | `NAME` | ...
	section := string(doc)
	if i := strings.Index(section, "## Claims that do not hold"); i >= 0 {
		section = section[i:]
	}
	if i := strings.Index(section[1:], "\n## "); i >= 0 {
		section = section[:i+1]
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(section, -1) {
		if !slices.Contains(listed, m[1]) {
			listed = append(listed, m[1])
		}
	}
	for name := range failing {
		if !slices.Contains(listed, name) {
			t.Errorf("%s has %d failing claims in claims.golden but no row in docs/fidelity.md's table", name, failing[name])
		}
	}
	for _, name := range listed {
		if failing[name] == 0 {
			t.Errorf("docs/fidelity.md's table lists %s, whose claims all hold in claims.golden", name)
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry"
)

// The README's table of which stack opens on which machine lies between
// these two markers; TestReadmePairings renders it from the registry.
const (
	pairingsBegin = "<!-- pairings: generated from the registry; go test ./cmd/simrun -run TestReadmePairings -update rewrites it -->"
	pairingsEnd   = "<!-- end of pairings -->"
)

// pairingsTable renders, for every registered stack and each of its listed
// variants (params), what its ranks offer on every registered machine
// (opened as `simrun list --stacks` opens them) or the name of the verb
// the machine lacks.
func pairingsTable(reg *registry.Registry) string {
	var b strings.Builder
	ms := reg.Machines()
	b.WriteString("| stack | params |")
	for _, m := range ms {
		fmt.Fprintf(&b, " %s |", m.Name)
	}
	b.WriteString("\n|---|---|")
	for range ms {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, s := range reg.Stacks() {
		variants := s.Variants
		if len(variants) == 0 {
			variants = []string{""}
		}
		for _, v := range variants {
			params := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}"))
			if params == "" {
				params = "(defaults)"
			} else {
				params = "`" + params + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s |", s.Name, params)
			for _, m := range ms {
				cell := strings.TrimPrefix(probe(reg, m.Name, s.Name, v), "offers ")
				if verb, ok := strings.CutPrefix(cell, "missing "); ok {
					verb, _, _ = strings.Cut(verb, ":") // the verb's name, without its description
					cell = "missing " + verb
				}
				fmt.Fprintf(&b, " %s |", strings.ReplaceAll(cell, "|", `\|`))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestReadmePairings: the README's machines x stacks table is the one the
// registry gives, so it cannot drift from the code; -update rewrites it.
func TestReadmePairings(t *testing.T) {
	const path = "../../README.md"
	readme := read(t, path)
	begin := bytes.Index(readme, []byte(pairingsBegin))
	end := bytes.Index(readme, []byte(pairingsEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s: the markers %q and %q are missing or out of order", path, pairingsBegin, pairingsEnd)
	}
	head := readme[:begin+len(pairingsBegin)]
	got := string(readme[len(head):end])
	want := "\n" + pairingsTable(builtins()) + "\n"
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, head...), want...), readme[end:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the pairings table differs from the registry's (go test ./cmd/simrun -run TestReadmePairings -update rewrites it); want:\n%s", path, want)
}

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Markers around the generated command list of docs/architecture.md.
const (
	commandsBegin = "<!-- commands: generated from simrun's command table; do not edit -->\n"
	commandsEnd   = "<!-- end of commands -->\n"
)

// commandList is the command list docs/architecture.md shows: every command
// of simrun's table with its synopsis and summary, in the table's order.
func commandList() string {
	var b strings.Builder
	b.WriteString("```\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "simrun %s", c.name)
		if c.args != "" {
			fmt.Fprintf(&b, " %s", c.args)
		}
		fmt.Fprintf(&b, "\n    %s\n", c.summary)
	}
	b.WriteString("```\n")
	return b.String()
}

// TestArchitectureCommands: docs/architecture.md lists every command of
// simrun's table, as the table has it (-update rewrites the list).
func TestArchitectureCommands(t *testing.T) {
	const path = "../../docs/architecture.md"
	doc := string(read(t, path))
	i := strings.Index(doc, commandsBegin)
	j := strings.Index(doc, commandsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated command list (the markers %q and %q)", path, strings.TrimSpace(commandsBegin), strings.TrimSpace(commandsEnd))
	}
	want := doc[:i+len(commandsBegin)] + commandList() + doc[j:]
	if *update {
		if want != doc {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if want != doc {
		t.Errorf("%s: the command list is not simrun's command table; run go test ./cmd/simrun -run TestArchitectureCommands -update", path)
	}
	// The table holds the commands the docs speak of.
	for _, name := range []string{"run", "explore", "trace", "calibrate", "compare", "litmus", "suite", "claims"} {
		if !strings.Contains(doc[i:j], "simrun "+name+" ") && !strings.Contains(doc[i:j], "simrun "+name+"\n") {
			t.Errorf("%s: the command list has no %s", path, name)
		}
	}
}

// TestArchitectureLayers: the layer list of docs/architecture.md names every
// top-level directory that holds Go packages and every package under sim/.
func TestArchitectureLayers(t *testing.T) {
	const path = "../../docs/architecture.md"
	blocks, _ := fenced(t, path, "")
	if len(blocks) == 0 {
		t.Fatalf("%s: no layer list", path)
	}
	layers := blocks[0]
	top, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range top {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") || !hasGo(t, "../../"+d.Name()) {
			continue
		}
		if !strings.Contains(layers, d.Name()+"/") {
			t.Errorf("%s: the layer list does not name %s/", path, d.Name())
		}
	}
	sim, err := os.ReadDir("../../sim")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sim {
		if d.IsDir() && d.Name() != "internal" && d.Name() != "testdata" && !strings.Contains(layers, "sim/"+d.Name()) {
			t.Errorf("%s: the layer list does not name sim/%s", path, d.Name())
		}
	}
}

// hasGo reports whether dir or a directory under it holds a .go file.
func hasGo(t *testing.T, dir string) bool {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.IsDir() && e.Name() != "testdata" && hasGo(t, dir+"/"+e.Name()) || !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}

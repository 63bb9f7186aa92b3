package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Citations in a parameter's documentation: a file (a paper's text, a
// document, a data file), and an entry of one of the reference data files.
var (
	citedFile  = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:txt|md|yaml)\b`)
	citedEntry = regexp.MustCompile(`\b(hardware|calibration)\.yaml:? ([a-z0-9]+_?[a-z0-9_]*\.[A-Za-z0-9_.]*[A-Za-z0-9_])`)
	paperEntry = regexp.MustCompile("(?m)^### ([a-z0-9-]+)$")
)

// TestParamsSourcesResolve checks that every source simrun params cites
// resolves inside the repository: a paper is an entry of
// docs/references.md, a data file or document is a file of the
// repository (hardware.yaml and calibration.yaml are reference/'s), a
// publication cited by path is listed in docs/references.md, and an
// entry of a data file (hardware.yaml t3d.dcache_KB) is in the file.
func TestParamsSourcesResolve(t *testing.T) {
	root := "../.."
	refs, err := os.ReadFile(filepath.Join(root, "docs/references.md"))
	if err != nil {
		t.Fatal(err)
	}
	papers := map[string]bool{}
	for _, m := range paperEntry.FindAllStringSubmatch(string(refs), -1) {
		papers[m[1]] = true
	}
	for _, p := range []string{"mpich-sx4", "aclmpl-t3d", "scampi-sci", "armci-sp", "mpich2-threads"} {
		if !papers[p] {
			t.Errorf("docs/references.md has no entry ### %s", p)
		}
	}
	data := map[string]map[string]any{}
	for _, f := range []string{"hardware", "calibration"} {
		b, err := os.ReadFile(filepath.Join(root, "reference", f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("reference/%s.yaml: %v", f, err)
		}
		data[f] = m
	}
	resolves := func(file string) bool {
		base := strings.TrimSuffix(filepath.Base(file), ".txt")
		switch {
		case strings.HasSuffix(file, ".txt") && papers[base] && (file == base+".txt" || file == "papers/"+base+".txt"):
			return true
		case file == "hardware.yaml" || file == "calibration.yaml":
			return true // reference/'s, checked entry by entry below
		case strings.Contains(file, "/"):
			if _, err := os.Stat(filepath.Join(root, file)); err == nil {
				return true
			}
		}
		return bytes.Contains(refs, []byte("`"+file+"`"))
	}

	reg := builtins()
	checked := 0
	for _, c := range components(reg) {
		var out bytes.Buffer
		if err := writeParams(&out, c); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Join the wrapped documentation lines, so that a citation cut by
		// the wrap reads whole.
		text := regexp.MustCompile(`\n +`).ReplaceAllString(out.String(), " ")
		text = strings.ReplaceAll(text, sourcesNote, "") // the header that says so
		for _, f := range citedFile.FindAllString(text, -1) {
			checked++
			if !resolves(f) {
				t.Errorf("%s %s cites %s, which is neither in the repository nor in docs/references.md", c.kind, c.name, f)
			}
		}
		for _, m := range citedEntry.FindAllStringSubmatch(text, -1) {
			checked++
			if !hasEntry(data[m[1]], strings.TrimRight(m[2], ".")) {
				t.Errorf("%s %s cites %s.yaml %s, which reference/%s.yaml does not have", c.kind, c.name, m[1], m[2], m[1])
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d citations found in simrun params; the patterns no longer match the documentation", checked)
	}
}

// hasEntry reports whether the dotted key path names an entry of m.
func hasEntry(m map[string]any, path string) bool {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = mm[k]; !ok {
			return false
		}
	}
	return true
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fenced returns the fenced code blocks of language lang in a Markdown
// file, with the line each starts on.
func fenced(t *testing.T, path, lang string) (blocks []string, lines []int) {
	t.Helper()
	var cur *strings.Builder
	for i, l := range strings.Split(string(read(t, path)), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```"+lang:
			cur = &strings.Builder{}
			lines = append(lines, i+2)
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	return blocks, lines
}

var topName = regexp.MustCompile(`(?m)^name:`)

// TestDocsYAML: every YAML block of README.md and scenarios/README.md
// validates; a fragment (no top-level name, such as the expect: block) is
// validated appended to the complete example before it.
func TestDocsYAML(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, doc := range []string{"../../README.md", "../../scenarios/README.md"} {
		blocks, lines := fenced(t, doc, "yaml")
		last := ""
		for i, b := range blocks {
			src := b
			if topName.MatchString(b) {
				last = b
			} else if last != "" {
				src = last + b
			}
			f := write(t, dir, "doc.yaml", src)
			if code, _, errs := simrun(t, "validate", f); code != exitOK {
				t.Errorf("%s:%d: the YAML block does not validate:\n%s", doc, lines[i], errs)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no YAML block found")
	}
}

// slowDocCommands are README commands that take more than a few seconds
// (claims --fast about 30 s, claims --failing and suite minutes): the test
// runs them on a selection of no scenario (the command line and flags
// parse) instead.
var slowDocCommands = map[string]bool{"claims": true, "suite": true}

// TestDocsCommands runs every "go run ./cmd/simrun ..." line of the
// README's shell blocks, in a temporary directory: each exits as the
// README says (0; the teaching failures are expected ones, also 0), and a
// "> FILE" redirection writes FILE for the next lines to use.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands (about 10 s)")
	}
	blocks, _ := fenced(t, "../../README.md", "sh")
	t.Chdir(t.TempDir())
	n := 0
	for _, b := range blocks {
		for _, line := range strings.Split(b, "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			f := strings.Fields(cmd)
			if len(f) < 3 || f[0] != "go" || f[1] != "run" || f[2] != "./cmd/simrun" {
				continue
			}
			args := f[3:]
			for i, a := range args {
				args[i] = strings.Trim(a, "'")
			}
			redirect := ""
			if i := slices.Index(args, ">"); i >= 0 && i+1 < len(args) {
				redirect, args = args[i+1], args[:i]
			}
			if len(args) > 0 && slowDocCommands[args[0]] {
				args = append(args, "^no-scenario$")
			}
			if i := slices.Index(args, "--runs"); len(args) > 0 && args[0] == "soak" && i >= 0 && i+1 < len(args) {
				args[i+1] = "30" // a million runs take hours: the command line is what is checked
			}
			code, out, errs := simrun(t, args...)
			if code != exitOK {
				t.Errorf("README: simrun %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
			}
			if redirect != "" {
				if err := os.WriteFile(redirect, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("found %d simrun commands in the README; the parser missed some", n)
	}
	for _, want := range []string{"mine.yaml", "trace.json", filepath.Join("results", "sx4", "results.csv")} {
		if _, err := os.Stat(want); err != nil {
			t.Errorf("the README's commands did not write %s: %v", want, err)
		}
	}
}

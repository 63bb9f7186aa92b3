package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// docStandIns are slow built-ins the README's commands run (seconds of
// CPU each) and the fast built-in the test runs in their place, with the
// same flags: the command line and its flags are what is checked here
// (TestGoldenScenarios runs t3d-fig5 at a reduced size, and
// TestShardsMergeByteIdentical checks -j and --shard).
var docStandIns = map[string]string{"t3d-fig5": "t3d-table1"}

// docLitmusRuns caps the run count of the README's litmus commands
// (TestLitmusCommand checks the output of simrun litmus).
const docLitmusRuns = 1000

// TestDocsCommands runs every "go run ./cmd/simrun ..." line of the
// README's shell blocks, in a temporary directory: each exits as the
// README says (0; the teaching failures are expected ones, also 0), and a
// "> FILE" redirection writes FILE for the next lines to use. A plain
// "run NAME --out DIR" of a built-in TestGoldenScenarios runs as it is
// takes that run's outputs (runBuiltin: the same command with --quiet),
// copied to DIR.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands (a few seconds)")
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
			if i := slices.Index(args, "--runs"); len(args) > 0 && args[0] == "litmus" && i >= 0 && i+1 < len(args) {
				if n, err := strconv.Atoi(args[i+1]); err == nil && n > docLitmusRuns {
					args[i+1] = strconv.Itoa(docLitmusRuns)
				}
			}
			if len(args) > 1 && args[0] == "run" && docStandIns[args[1]] != "" {
				args[1] = docStandIns[args[1]]
			}
			var code int
			var out, errs string
			if len(args) == 4 && args[0] == "run" && args[2] == "--out" && slices.Contains(goldenFull, args[1]) {
				r := runBuiltin(t, args[1])
				code, out, errs = r.code, r.stdout, r.stderr
				if err := os.CopyFS(args[3], os.DirFS(r.dir)); err != nil {
					t.Fatal(err)
				}
			} else {
				code, out, errs = simrun(t, args...)
			}
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

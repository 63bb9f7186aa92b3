package fit

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/calibration"
)

var (
	calibratedWord = regexp.MustCompile(`(?i)calibrated`)
	// notCalibrated are the sentences that say a value is not calibrated.
	notCalibrated = regexp.MustCompile(`(?i)\b(not|nothing is|none is|never) calibrated`)
	calibFile     = regexp.MustCompile(`calibration/([A-Za-z0-9_.-]+)\.yaml`)
	yamlTag       = regexp.MustCompile("`[^`]*yaml:\"([a-z0-9_]+)[,\"]")
)

// calibratedComments checks Go source: every comment block that says a
// value is "calibrated" must name a calibration file
// (calibration/NAME.yaml) that exists in files; when the block documents
// a struct field with a YAML name, that file must list the field among
// its free parameters (free[].param or also, COMPONENT.FIELD). It returns
// one problem per offending block.
func calibratedComments(file, src string, files map[string]*calibration.File) []string {
	var out []string
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "//") {
			i++
			continue
		}
		start := i
		var block []string
		for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "//") {
			block = append(block, strings.TrimSpace(lines[i]))
			i++
		}
		text := strings.Join(block, " ")
		if !calibratedWord.MatchString(notCalibrated.ReplaceAllString(text, "")) {
			continue
		}
		at := fmt.Sprintf("%s:%d", file, start+1)
		names := calibFile.FindAllStringSubmatch(text, -1)
		if len(names) == 0 {
			out = append(out, at+": says calibrated but names no calibration/NAME.yaml file")
			continue
		}
		var found []*calibration.File
		for _, m := range names {
			f, ok := files[m[1]]
			if !ok {
				out = append(out, fmt.Sprintf("%s: names calibration/%s.yaml, which does not exist", at, m[1]))
				continue
			}
			found = append(found, f)
		}
		if i >= len(lines) || len(found) == 0 {
			continue
		}
		// A field's doc comment: the next line declares it.
		tag := yamlTag.FindStringSubmatch(lines[i])
		if tag == nil {
			continue
		}
		listed := slices.ContainsFunc(found, func(f *calibration.File) bool {
			for _, p := range f.Free {
				for _, name := range p.Params() {
					if _, fl, _ := strings.Cut(name, "."); fl == tag[1] {
						return true
					}
				}
			}
			return false
		})
		if !listed {
			out = append(out, fmt.Sprintf("%s: documents %s as calibrated, but no file it names lists it as free", at, tag[1]))
		}
	}
	return out
}

func builtinFiles(t *testing.T) map[string]*calibration.File {
	t.Helper()
	names, err := calibration.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*calibration.File{}
	for _, n := range names {
		f, err := calibration.LoadBuiltin(n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = f
	}
	return files
}

// TestCalibratedCommentsNameFiles: a parameter set from a paper's number
// by hand, its comment saying "calibrated", fails here until a
// calibration file fits it and the comment names the file.
func TestCalibratedCommentsNameFiles(t *testing.T) {
	files := builtinFiles(t)
	n := 0
	for _, dir := range []string{"../../machines", "../../stacks"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n++
			for _, p := range calibratedComments(path, string(src), files) {
				t.Error(p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 20 {
		t.Fatalf("only %d source files read", n)
	}
}

// TestCalibratedCommentsCheck: the check refuses a "calibrated" comment
// without a file, with a file that does not exist, and with a file that
// does not list the field; it accepts one that names and lists it, and a
// sentence saying a value is not calibrated.
func TestCalibratedCommentsCheck(t *testing.T) {
	files := builtinFiles(t)
	for _, c := range []struct {
		name, src string
		bad       bool
	}{
		{"no file", "\t// SemopUs is calibrated to Figure 1.\n\tSemopUs float64 `yaml:\"semop_us\"`\n", true},
		{"missing file", "\t// SemopUs: calibrated by calibration/nosuch.yaml.\n\tSemopUs float64 `yaml:\"semop_us\"`\n", true},
		{"field not listed", "\t// LoadNs: calibrated by calibration/sx4-semop.yaml.\n\tLoadNs float64 `yaml:\"load_ns\"`\n", true},
		{"named and listed", "\t// SemopUs: calibrated by calibration/sx4-semop.yaml.\n\tSemopUs float64 `yaml:\"semop_us\"`\n", false},
		{"not calibrated", "\t// LoadNs: assumed; not calibrated.\n\tLoadNs float64 `yaml:\"load_ns\"`\n", false},
	} {
		got := calibratedComments("x.go", c.src, files)
		if (len(got) > 0) != c.bad {
			t.Errorf("%s: problems %q, want bad=%v", c.name, got, c.bad)
		}
	}
}

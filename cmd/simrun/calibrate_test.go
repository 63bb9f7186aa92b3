package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/calibration"
)

// calibrationCopy writes the built-in calibration file name into a
// temporary directory, with edit applied to its text, and returns its path.
func calibrationCopy(t *testing.T, name string, edit func(string) string) string {
	t.Helper()
	data, err := calibration.BuiltinSource(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCalibrateCheck: --check re-fits a file and passes when the stored
// value is the fit's; with the stored value edited it fails (exit 1),
// naming the file, the parameter, the stored and the fitted values.
func TestCalibrateCheck(t *testing.T) {
	same := calibrationCopy(t, "t3d-put-startup", func(s string) string { return s })
	if code, out, errs := simrun(t, "calibrate", "--check", "--quiet", "-j", "2", same); code != exitOK || !strings.Contains(out, "ok t3d-put-startup") {
		t.Fatalf("unedited: exit %d\n%s%s", code, out, errs)
	}
	edited := calibrationCopy(t, "t3d-put-startup", func(s string) string {
		return strings.Replace(s, "t3d.put_startup_ns: 790", "t3d.put_startup_ns: 900", 1)
	})
	code, out, errs := simrun(t, "calibrate", "--check", "--quiet", edited)
	if code != exitFailed {
		t.Fatalf("edited: exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
	for _, want := range []string{edited + ": t3d.put_startup_ns moved: stored 900, fitted 790", "MOVED t3d-put-startup"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestCalibrateWrites: a fit writes its outputs and rewrites the file's
// fitted: block, every other byte kept.
func TestCalibrateWrites(t *testing.T) {
	path := calibrationCopy(t, "t3d-put-startup", func(s string) string {
		return strings.Replace(s, "t3d.put_startup_ns: 790", "t3d.put_startup_ns: 1", 1)
	})
	before, _ := os.ReadFile(path)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errs := simrun(t, "calibrate", path, "--out", out, "-j", "2")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	for _, f := range []string{"fit.csv", "residuals.csv", "validation.csv", "validation.txt", "summary.txt", "validation.png", "validation.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	if !strings.Contains(errs, "simrun calibrate t3d-put-startup: evaluation 1: t3d.put_startup_ns=900") {
		t.Errorf("no progress on stderr:\n%s", errs)
	}
	after, _ := os.ReadFile(path)
	if want := strings.Replace(string(before), "t3d.put_startup_ns: 1\n", "t3d.put_startup_ns: 790\n", 1); string(after) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", after, want)
	}
	res, _ := os.ReadFile(filepath.Join(out, "residuals.csv"))
	if !strings.Contains(string(res), "t3d-table1/sync-aclmpl latency_us@8,") {
		t.Errorf("residuals.csv:\n%s", res)
	}
}

// TestCalibrateBadInput: a file that does not parse, or names what does
// not exist, is bad input (exit 2), every problem located file:line:col.
func TestCalibrateBadInput(t *testing.T) {
	path := calibrationCopy(t, "t3d-put-startup", func(s string) string {
		s = strings.ReplaceAll(s, "t3d.put_startup_ns", "t3d.put_startup")
		return strings.Replace(s, "series: sync-aclmpl", "series: nosuch", 1)
	})
	code, out, errs := simrun(t, "calibrate", path, "--dry-run")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, out, errs)
	}
	for _, want := range []string{
		path + ":13:12: field free[0].param: machine t3d has no numeric param \"put_startup\"",
		path + ":21:13: field training[0].series: scenario t3d-table1 has no series \"nosuch\"",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if code, _, errs := simrun(t, "calibrate", "nosuch"); code != exitUsage || !strings.Contains(errs, "no such built-in calibration") {
		t.Errorf("unknown name: exit %d: %s", code, errs)
	}
}

// TestCalibrateHelp teaches: what a file is, an example, exit codes.
func TestCalibrateHelp(t *testing.T) {
	code, out, _ := simrun(t, "calibrate", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"A calibration file", "free:", "training:", "validation:", "Exit status", "--check", "simrun calibrate sx4-semop", "calibration: [sx4-semop]"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestTrainingInReport: the HTML report counts a training claim apart and
// marks the reference value fitted to.
func TestTrainingInReport(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	if code, out, errs := simrun(t, "run", "t3d-table1", "--quiet", "--out", filepath.Join(root, "t3d-table1")); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := simrun(t, "report", root); code != exitOK {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(root, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 of 3 hold, 1 training (fitted)", "training (fitted: calibration/t3d-put-startup.yaml)", "(training: fitted by calibration/t3d-put-startup.yaml)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

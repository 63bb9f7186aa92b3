package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEventProfile: run --eventprofile writes the run's events by what
// they ran, summing per series to the events the summary reports and to
// their total under "(all)", the same file whatever -j, and leaves the
// outputs as they are without it (the golden results); a path that
// cannot be written stops the run before it starts (exit 2).
func TestEventProfile(t *testing.T) {
	const name = "t3d-table1"
	var profiles [][]byte
	for _, j := range []string{"1", "3"} {
		dir := t.TempDir()
		prof := filepath.Join(dir, "events.csv")
		code, stdout, stderr := simrun(t, "run", name, "--out", dir, "--quiet", "-j", j, "--eventprofile", prof)
		if code != exitOK {
			t.Fatalf("-j %s: exit %d\n%s\n%s", j, code, stdout, stderr)
		}
		if got, want := read(t, filepath.Join(dir, "results.csv")), read(t, filepath.Join("testdata", "golden", name+".results.csv")); !bytes.Equal(got, want) {
			t.Errorf("-j %s: results.csv differs from the golden one with --eventprofile", j)
		}
		want := map[string]uint64{}
		line := regexp.MustCompile(`(?m)^  (\S+)\s+\d+ rows\s+(\d+) events`)
		for _, m := range line.FindAllStringSubmatch(string(read(t, filepath.Join(dir, "summary.txt"))), -1) {
			n, _ := strconv.ParseUint(m[2], 10, 64)
			want[m[1]] = n
			want["(all)"] += n
		}
		if len(want) != 6 {
			t.Fatalf("summary's series: %v", want)
		}
		b := read(t, prof)
		profiles = append(profiles, b)
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if h := recs[0]; len(h) != 4 || h[0] != "series" || h[1] != "what" || h[2] != "events" || h[3] != "share" {
			t.Fatalf("header %v", h)
		}
		got := map[string]uint64{}
		for _, r := range recs[1:] {
			n, err := strconv.ParseUint(r[2], 10, 64)
			if err != nil || r[1] == "" {
				t.Fatalf("row %v: %v", r, err)
			}
			got[r[0]] += n
		}
		for s, n := range want {
			if got[s] != n {
				t.Errorf("-j %s: series %s: the profile counts %d events, the summary %d", j, s, got[s], n)
			}
		}
		if recs[1][0] != "(all)" {
			t.Errorf("first row %v, want the (all) series first", recs[1])
		}
	}
	if !bytes.Equal(profiles[0], profiles[1]) {
		t.Errorf("the profile differs between -j 1 and -j 3")
	}
	// A path that cannot be written is bad input, found before the run.
	dir := t.TempDir()
	code, _, stderr := simrun(t, "run", name, "--out", dir, "--quiet", "--eventprofile", filepath.Join(dir, "missing", "events.csv"))
	if code != exitUsage || !strings.Contains(stderr, "--eventprofile") {
		t.Errorf("unwritable --eventprofile: exit %d, stderr %q; want exit %d naming the flag", code, stderr, exitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.csv")); err == nil {
		t.Errorf("unwritable --eventprofile: the run went ahead")
	}
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/report"
)

// simrun compare: two runs side by side (results directories, or a
// directory and a scenario run here), point by point.

const (
	compareArgs    = "A B [--tolerance R] [--out DIR] [-j N]"
	compareSummary = "compare two runs (results directories, or a directory and a scenario): differences per series and point, claims that changed verdict, an overlay figure"
	compareHelp    = `A and B are each a results directory (one with results.json, as simrun run
writes) or a scenario (a file or a built-in's name), which is run first
into a temporary directory. For every series, metric and point of either
run it prints the two values, their difference and its size relative to
A's value, for the points that differ by more than --tolerance (relative;
default 0: any difference), and a line per series with how many points
differ and the largest relative difference; then each claim whose verdict
changed (holds in one, FAILS in the other). It writes DIR/compare.png and
.svg (default DIR: results/compare): each metric in a panel, A's curves
solid, B's with "(B)" after their names. Exit 0 when nothing differs beyond
the tolerance, 1 when something does (or a point is in one run only), 2 on
bad input: it works in a script.
Example:
  simrun run t3d-table1 --out /tmp/a
  simrun compare /tmp/a mine.yaml --tolerance 0.01`
)

// runData is what compare reads of a run: results.json's rows and claims.
type runData struct {
	label  string
	rows   []report.Row
	claims []report.ClaimResult
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	tol := fs.Float64("tolerance", 0, "relative difference allowed at a point (0.01: 1 %)")
	outDir := fs.String("out", filepath.Join("results", "compare"), "where the overlay figure is written")
	jobs := fs.Int("j", 0, "series run at once when A or B is a scenario (default GOMAXPROCS)")
	pos, code, ok := parseFlags(fs, "compare", args, stdout, stderr)
	if !ok {
		return code
	}
	if !wantArgs("compare", pos, 2, stderr) {
		return exitUsage
	}
	if *tol < 0 || math.IsNaN(*tol) || math.IsInf(*tol, 0) {
		fmt.Fprintf(stderr, "simrun compare: --tolerance %g: must be a finite number >= 0\n", *tol)
		return exitUsage
	}
	var runs [2]runData
	for i, arg := range pos {
		d, code := loadRun(arg, *jobs, stderr)
		if code != exitOK {
			return code
		}
		d.label = arg
		runs[i] = d
	}
	differs := writeDiff(stdout, runs[0], runs[1], *tol)
	if err := overlay(*outDir, runs[0], runs[1]); err != nil {
		fmt.Fprintf(stderr, "simrun compare: overlay figure not drawn: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "overlay: %s\n", filepath.Join(*outDir, "compare.png"))
	}
	if differs {
		return exitFailed
	}
	return exitOK
}

// loadRun reads the run arg: a results directory, or a scenario run into
// a temporary directory.
func loadRun(arg string, jobs int, stderr io.Writer) (runData, int) {
	if st, err := os.Stat(filepath.Join(arg, "results.json")); err == nil && !st.IsDir() {
		d, err := readRun(arg)
		if err != nil {
			fmt.Fprintf(stderr, "simrun compare: %v\n", err)
			return d, exitUsage
		}
		return d, exitOK
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		fmt.Fprintf(stderr, "simrun compare: %s: a directory without results.json (not the output of simrun run)\n", arg)
		return runData{}, exitUsage
	}
	tmp, err := os.MkdirTemp("", "simrun-compare-")
	if err != nil {
		fmt.Fprintf(stderr, "simrun compare: %v\n", err)
		return runData{}, exitFailed
	}
	defer os.RemoveAll(tmp)
	runArgs := []string{arg, "--out", tmp, "--quiet"}
	if jobs > 0 {
		runArgs = append(runArgs, "-j", fmt.Sprint(jobs))
	}
	code := cmdRun(runArgs, io.Discard, stderr)
	if code == exitUsage {
		return runData{}, code
	}
	d, err := readRun(tmp)
	if err != nil {
		fmt.Fprintf(stderr, "simrun compare: running %s: %v\n", arg, err)
		return d, exitFailed
	}
	return d, exitOK
}

// readRun reads dir/results.json.
func readRun(dir string) (runData, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return runData{}, err
	}
	var doc struct {
		Rows   []report.Row         `json:"rows"`
		Claims []report.ClaimResult `json:"claims"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return runData{}, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	return runData{rows: doc.Rows, claims: doc.Claims}, nil
}

// pointKey identifies a point of a run.
type pointKey struct {
	series, metric, xName string
	x                     float64
}

// writeDiff prints the differences of b from a and reports whether any
// exceeds tol (or a point or claim is in one run only, or a claim changed
// verdict).
func writeDiff(w io.Writer, a, b runData, tol float64) bool {
	fmt.Fprintf(w, "A: %s\nB: %s\n", a.label, b.label)
	av, bv := map[pointKey]report.Row{}, map[pointKey]report.Row{}
	var keys []pointKey
	add := func(m map[pointKey]report.Row, rows []report.Row) {
		for _, r := range rows {
			k := pointKey{r.Series, r.Metric, r.XName, r.X}
			if _, ok := av[k]; !ok {
				if _, ok := bv[k]; !ok {
					keys = append(keys, k)
				}
			}
			m[k] = r
		}
	}
	add(av, a.rows)
	add(bv, b.rows)
	// Series in A's order, then B's; points in the runs' order within.
	var series []string
	for _, k := range keys {
		if !slices.Contains(series, k.series) {
			series = append(series, k.series)
		}
	}
	differs := false
	var changed []string
	for _, s := range series {
		var lines []string
		n, nd, maxRel := 0, 0, 0.0
		for _, k := range keys {
			if k.series != s {
				continue
			}
			n++
			ra, inA := av[k]
			rb, inB := bv[k]
			at := fmt.Sprintf("%s %s=%s", k.metric, k.xName, report.FormatFloat(k.x))
			switch {
			case !inA:
				nd++
				lines = append(lines, fmt.Sprintf("    %-36s only in B: %s %s", at, report.FormatFloat(rb.Value), rb.Unit))
				continue
			case !inB:
				nd++
				lines = append(lines, fmt.Sprintf("    %-36s only in A: %s %s", at, report.FormatFloat(ra.Value), ra.Unit))
				continue
			}
			abs := rb.Value - ra.Value
			rel := relDiff(ra.Value, rb.Value)
			if math.Abs(rel) > maxRel {
				maxRel = math.Abs(rel)
			}
			if math.Abs(rel) <= tol {
				continue
			}
			nd++
			lines = append(lines, fmt.Sprintf("    %-36s A %-12.6g B %-12.6g %-6s %+.4g (%s)", at, ra.Value, rb.Value, ra.Unit, abs, relWord(rel)))
		}
		if nd == 0 {
			fmt.Fprintf(w, "series %s: %d points, none differs beyond the tolerance (largest %s)\n", s, n, relWord(maxRel))
			continue
		}
		differs = true
		changed = append(changed, s)
		fmt.Fprintf(w, "series %s: %d of %d points differ (largest %s)\n", s, nd, n, relWord(maxRel))
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	cb := map[string]report.ClaimResult{}
	for _, c := range b.claims {
		cb[c.Claim.Name] = c
	}
	var verdicts []string
	for _, c := range a.claims {
		o, ok := cb[c.Claim.Name]
		switch {
		case !ok:
			verdicts = append(verdicts, fmt.Sprintf("  %s: %s in A (%s), not in B", c.Claim.Name, c.Status(), c.Measured))
		case o.Status() != c.Status():
			verdicts = append(verdicts, fmt.Sprintf("  %s: %s in A (%s), %s in B (%s)", c.Claim.Name, c.Status(), c.Measured, o.Status(), o.Measured))
		}
		delete(cb, c.Claim.Name)
	}
	for _, c := range b.claims {
		if _, ok := cb[c.Claim.Name]; ok {
			verdicts = append(verdicts, fmt.Sprintf("  %s: not in A, %s in B (%s)", c.Claim.Name, c.Status(), c.Measured))
		}
	}
	if len(verdicts) == 0 {
		fmt.Fprintf(w, "claims: no verdict changed (%d in A, %d in B)\n", len(a.claims), len(b.claims))
	} else {
		differs = true
		fmt.Fprintf(w, "claims whose verdict changed (%d):\n%s\n", len(verdicts), strings.Join(verdicts, "\n"))
	}
	if differs {
		fmt.Fprintf(w, "differ: %s\n", strings.Join(append(changed, claimWord(len(verdicts))...), ", "))
	} else {
		fmt.Fprintf(w, "same within a relative tolerance of %g\n", tol)
	}
	return differs
}

func claimWord(n int) []string {
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d claim verdict(s)", n)}
}

// relDiff is (b-a)/|a|; 0 when both are 0, ±Inf when only a is.
func relDiff(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case a == 0:
		return math.Copysign(math.Inf(1), b)
	}
	return (b - a) / math.Abs(a)
}

// relWord is a relative difference as a signed percentage.
func relWord(r float64) string {
	if math.IsInf(r, 0) {
		return "from 0"
	}
	return fmt.Sprintf("%+.3g %%", 100*r)
}

// overlay writes dir/compare.png and .svg: each metric of either run in
// a panel, A's series under their names and B's with " (B)", a series in
// one colour in both, B's with another marker and dashes.
func overlay(dir string, a, b runData) error {
	var rows []report.Row
	rows = append(rows, a.rows...)
	for _, r := range b.rows {
		r.Series += " (B)"
		rows = append(rows, r)
	}
	var metrics []string
	for _, r := range rows {
		if !slices.Contains(metrics, r.Metric) {
			metrics = append(metrics, r.Metric)
		}
	}
	if len(metrics) == 0 {
		return fmt.Errorf("neither run has a value")
	}
	// A series has one colour in both runs: A's mark first, B's second.
	styles := map[string]report.Style{}
	for _, r := range a.rows {
		if _, ok := styles[r.Series]; !ok {
			c := len(styles) / 2
			styles[r.Series] = report.Style{Color: c, Mark: 0}
			styles[r.Series+" (B)"] = report.Style{Color: c, Mark: 1}
		}
	}
	for _, r := range b.rows {
		if _, ok := styles[r.Series+" (B)"]; !ok {
			c := len(styles) / 2
			styles[r.Series] = report.Style{Color: c, Mark: 0}
			styles[r.Series+" (B)"] = report.Style{Color: c, Mark: 1}
		}
	}
	fig := report.Figure{Title: "A: " + a.label + "   B: " + b.label, Styles: styles}
	for _, m := range metrics {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			if r.Metric == m && r.X > 0 {
				lo, hi = min(lo, r.X), max(hi, r.X)
			}
		}
		fig.Panels = append(fig.Panels, report.Panel{Title: m, Metric: m, XLog: hi/lo >= 1000})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fig.Save(filepath.Join(dir, "compare"), rows, nil)
}

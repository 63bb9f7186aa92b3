package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/scenarios"
)

// scenarioInfo is the scenario as recorded in results.json.
type scenarioInfo struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	File        string   `json:"file"`
	Series      []string `json:"series"`
	Expect      *expect  `json:"expect,omitempty"`
	Verdict     string   `json:"verdict"`
}

type expect struct {
	Failure string `json:"failure"`
	Why     string `json:"why"`
}

// writeOutputs writes results.csv, results.json, the figures and
// summary.txt to dir, and returns the summary. None of them holds a
// wall-clock value: same scenario and seed, same bytes.
func writeOutputs(dir string, s *scenarios.Scenario, runs []seriesRun, v verdict, stderr io.Writer) (string, error) {
	if err := mkdir(dir); err != nil {
		return "", err
	}
	var rows report.Results
	var notes []string
	var series []string
	for _, r := range runs {
		rows = append(rows, r.res.Rows...)
		notes = append(notes, r.res.Notes...)
		series = append(series, r.spec.Series)
	}
	refs := references(s)
	cmps := report.Compare(rows, simulatedRefs(s, refs))
	claims := report.EvaluateClaims(rows, s.Claims)

	var csv bytes.Buffer
	if err := report.WriteCSV(&csv, rows); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), csv.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing results.csv: %w", err)
	}

	info := scenarioInfo{Name: s.Name, Title: s.Title, Description: strings.TrimSpace(s.Description), File: s.File, Series: series, Verdict: v.message}
	if s.Expect != nil {
		info.Expect = &expect{Failure: s.Expect.Failure, Why: strings.TrimSpace(s.Expect.Why)}
	}
	var js bytes.Buffer
	doc := report.Document{Scenario: info, Seed: s.Seed, Rows: rows, References: refs, Comparisons: cmps, Claims: claims, Failures: v.failures, Notes: notes}
	if err := report.WriteJSON(&js, doc); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), js.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("writing results.json: %w", err)
	}

	figs := figures(s, rows)
	for i := range figs {
		figs[i].fig.Bands = bands(s)
	}
	var written []string
	for _, f := range figs {
		// A figure's file may name a directory inside the output one.
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f.base)), 0o755); err != nil {
			return "", fmt.Errorf("figure %s: %w", f.base, err)
		}
		if err := f.fig.Save(filepath.Join(dir, f.base), rows, refs); err != nil {
			// A figure that cannot be drawn (no points) is not a failed run.
			fmt.Fprintf(stderr, "simrun: figure %s not drawn: %v\n", f.base, err)
			continue
		}
		written = append(written, f.base+".png", f.base+".svg")
	}

	summary := summarize(s, runs, rows, cmps, claims, v, notes, written)
	if err := os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(summary), 0o644); err != nil {
		return "", fmt.Errorf("writing summary.txt: %w", err)
	}
	return summary, nil
}

func references(s *scenarios.Scenario) []report.Reference {
	var refs []report.Reference
	for _, r := range s.References {
		src := r.Source
		if r.HeldOut {
			src += " [held out]"
		}
		if r.System != "" {
			src += " [" + r.System + "; not simulated]"
		}
		refs = append(refs, report.Reference{Series: r.Series, Metric: r.Metric, X: r.X, Value: r.Value, Unit: r.Unit, Source: src})
	}
	return refs
}

// simulatedRefs are the references of simulated series (refs, in the
// order of s.References): those of another system are drawn, not
// compared.
func simulatedRefs(s *scenarios.Scenario, refs []report.Reference) []report.Reference {
	var out []report.Reference
	for i, r := range s.References {
		if r.System == "" {
			out = append(out, refs[i])
		}
	}
	return out
}

// otherSystems lists the references of other systems for the summary.
func otherSystems(s *scenarios.Scenario) string {
	var b strings.Builder
	for _, r := range s.References {
		if r.System != "" {
			fmt.Fprintf(&b, "  %s (%s): %s at %s = %s %s (%s)\n", r.Series, r.System, r.Metric, report.FormatFloat(r.X), report.FormatFloat(r.Value), r.Unit, r.Source)
		}
	}
	return b.String()
}

// bands are the one-sided band claims of the scenario ("greater than 100
// MB/s"), drawn on the figures; two-sided ones read "about x" values,
// which the references show as points.
func bands(s *scenarios.Scenario) []report.Band {
	var out []report.Band
	for _, c := range s.Claims {
		if c.Kind != report.ClaimBand || (c.Min == nil) == (c.Max == nil) {
			continue
		}
		b := report.Band{Series: c.Series, Metric: c.Metric, Above: c.Min != nil}
		if b.Above {
			b.Value = *c.Min
		} else {
			b.Value = *c.Max
		}
		if len(c.At) > 0 {
			b.XLo, b.XHi = slices.Min(c.At), slices.Max(c.At)
		}
		if c.XMin != nil {
			b.XLo = *c.XMin
		}
		if c.XMax != nil {
			b.XHi = *c.XMax
		}
		out = append(out, b)
	}
	return out
}

type namedFigure struct {
	base string // output path without extension, relative to the output directory
	fig  report.Figure
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// figures converts the scenario's figures, or, when it lists none, makes
// the histogram of a litmus test's final states, else one per metric.
func figures(s *scenarios.Scenario, rows report.Results) []namedFigure {
	var out []namedFigure
	for _, f := range s.Figures {
		nf := namedFigure{base: strings.TrimSuffix(f.File, filepath.Ext(f.File)), fig: report.Figure{Title: f.Title}}
		for _, p := range f.Panels {
			nf.fig.Panels = append(nf.fig.Panels, report.Panel{
				Title: p.Title, XLabel: p.XLabel, YLabel: p.YLabel, Metric: p.Metric, XName: p.X,
				XLog: p.XScale == scenarios.ScaleLog, YLog: p.YScale == scenarios.ScaleLog,
				Series: p.Series, XMin: p.XMin, XMax: p.XMax,
			})
		}
		out = append(out, nf)
	}
	if len(s.Figures) > 0 {
		return out
	}
	// A litmus test's result is its histogram of final states; its
	// other metrics (positive, negative, observed) are single numbers,
	// which the summary shows.
	for _, m := range rows.Metrics() {
		if mr := rows.ByMetric(m); strings.HasPrefix(mr[0].XName, "state_") {
			out = append(out, namedFigure{
				base: "states",
				fig:  report.Figure{Title: s.Name + ": runs per final state", Panels: []report.Panel{{Metric: m, XName: mr[0].XName}}},
			})
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, m := range rows.Metrics() {
		mr := rows.ByMetric(m)
		out = append(out, namedFigure{
			base: unsafeName.ReplaceAllString(m, "_"),
			fig:  report.Figure{Title: s.Name + ": " + m, Panels: []report.Panel{{Title: m, Metric: m, XName: mr[0].XName}}},
		})
	}
	return out
}

// summarize writes the human summary: what ran, the references against
// the simulated values, failures, the verdict and the workloads' notes.
func summarize(s *scenarios.Scenario, runs []seriesRun, rows report.Results, cmps []report.Comparison, claims []report.ClaimResult, v verdict, notes, figs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scenario %s: %s\n", s.Name, s.Title)
	fmt.Fprintf(&b, "File %s, seed %d", s.File, s.Seed)
	if seedIndependent(runs) {
		b.WriteString(" (no random number drawn: every seed gives these results)")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Series (%d):\n", len(runs))
	for _, r := range runs {
		fmt.Fprintf(&b, "  %-24s %4d rows  %10d events  %v simulated\n", r.spec.Series, len(r.res.Rows), r.res.Events, r.res.SimTime)
	}
	if t := tables(rows); t != "" {
		fmt.Fprintln(&b, "Results:")
		b.WriteString(t)
	}
	if len(cmps) > 0 {
		fmt.Fprintln(&b, "References (paper vs simulated):")
		var t bytes.Buffer
		report.WriteSummary(&t, cmps)
		for _, l := range strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	} else {
		fmt.Fprintln(&b, "References: none")
	}
	if o := otherSystems(s); o != "" {
		fmt.Fprintln(&b, "Other systems the paper quotes (not simulated; drawn on the figures):")
		b.WriteString(o)
	}
	if len(claims) > 0 {
		fmt.Fprintf(&b, "Claims of the paper (%s; a failing claim does not fail the run):\n", claimCount(claims))
		var t bytes.Buffer
		report.WriteClaims(&t, claims)
		for _, l := range strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(v.failures) > 0 {
		fmt.Fprintf(&b, "Failures (%d):\n", len(v.failures))
		for _, f := range v.failures {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(f, "\n", "\n  "))
		}
	} else {
		fmt.Fprintln(&b, "Failures: none")
	}
	if len(notes) > 0 {
		fmt.Fprintln(&b, "Notes:")
		for _, n := range notes {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	fmt.Fprintf(&b, "Outputs: results.csv (%d rows), results.json, summary.txt", len(rows))
	for _, f := range figs {
		fmt.Fprintf(&b, ", %s", f)
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Result: %s\n", v.message)
	return b.String()
}

// claimCount says how many claims hold, e.g. "3 of 5 hold".
func claimCount(claims []report.ClaimResult) string {
	n, train := 0, 0
	for _, c := range claims {
		switch {
		case c.Training:
			train++
		case c.Holds:
			n++
		}
	}
	if train > 0 {
		return fmt.Sprintf("%d of %d hold, %d training (fitted)", n, len(claims)-train, train)
	}
	return fmt.Sprintf("%d of %d hold", n, len(claims))
}

// maxTableColumns is the most x values a metric may have for the summary
// to print it as a table (a paper's table, not a curve).
const maxTableColumns = 8

// tables renders, indented, every metric with few x values as a table of
// series by x; curves are left to the CSV and the figures.
func tables(rows report.Results) string {
	var b strings.Builder
	for _, m := range rows.Metrics() {
		mr := rows.ByMetric(m)
		xs := map[float64]bool{}
		for _, r := range mr {
			xs[r.X] = true
		}
		if len(xs) > maxTableColumns {
			continue
		}
		var t bytes.Buffer
		report.WriteTable(&t, mr, m)
		for _, l := range strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

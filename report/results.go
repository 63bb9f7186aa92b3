// Package report turns simulation results into tables (CSV, JSON), figures
// (PNG, SVG) and comparisons against reference points taken from the papers.
//
// All outputs are deterministic: the same rows always produce the same bytes.
//
// Layer: imports only the standard library and the plotting library;
// scenarios, workloads, runner and commands import it.
package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Row is one measured value in long form: the value of Metric for Series at
// the point X of the swept variable XName (e.g. series "mpich-lfshmem",
// x_name "bytes", x 1024, metric "latency", value 12.5, unit "us").
type Row struct {
	Series string  `json:"series"`
	XName  string  `json:"x_name"`
	X      float64 `json:"x"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
}

// Results is an ordered collection of rows. The order of insertion is kept,
// so outputs derived from it are deterministic.
type Results []Row

// Add appends one row.
func (r *Results) Add(series, xname string, x float64, metric string, value float64, unit string) {
	*r = append(*r, Row{Series: series, XName: xname, X: x, Metric: metric, Value: value, Unit: unit})
}

// Series returns the distinct series names in first-seen order.
func (r Results) Series() []string { return distinct(r, func(row Row) string { return row.Series }) }

// Metrics returns the distinct metric names in first-seen order.
func (r Results) Metrics() []string { return distinct(r, func(row Row) string { return row.Metric }) }

// ByMetric returns the rows whose metric is m, in their original order.
func (r Results) ByMetric(m string) Results {
	return r.Filter(func(row Row) bool { return row.Metric == m })
}

// BySeries returns the rows whose series is s, in their original order.
func (r Results) BySeries(s string) Results {
	return r.Filter(func(row Row) bool { return row.Series == s })
}

// Filter returns the rows for which keep is true, in their original order.
func (r Results) Filter(keep func(Row) bool) Results {
	var out Results
	for _, row := range r {
		if keep(row) {
			out = append(out, row)
		}
	}
	return out
}

func distinct(rows []Row, key func(Row) string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, row := range rows {
		k := key(row)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// FormatFloat formats v in the shortest form that reads back exactly:
// integers below 1e21 in plain decimal ("1048576"), other values in 'g'
// format ("12.5", "1e-07", "1e+21"), negative zero as "0". It is the number
// format of every table written by this package.
func FormatFloat(v float64) string {
	if v == 0 {
		return "0"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes rows in long form with the header
// series,x_name,x,metric,value,unit, one line per row, in the given order.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"series", "x_name", "x", "metric", "value", "unit"}); err != nil {
		return fmt.Errorf("report: writing CSV header: %w", err)
	}
	for i, r := range rows {
		rec := []string{r.Series, r.XName, FormatFloat(r.X), r.Metric, FormatFloat(r.Value), r.Unit}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("report: writing CSV row %d: %w", i, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: writing CSV: %w", err)
	}
	return nil
}

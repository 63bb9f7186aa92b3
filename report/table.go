package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the rows of one metric as a table, series down and x
// across, with values to five significant digits: the paper-table view of a
// result (Table 1 and 2 of aclmpl-t3d, say). It writes nothing for a metric
// with no rows.
func WriteTable(w io.Writer, rows Results, metric string) error {
	mr := rows.ByMetric(metric)
	if len(mr) == 0 {
		return nil
	}
	var xs []float64
	for _, r := range mr {
		if !slices.Contains(xs, r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.Sort(xs)
	if strings.HasPrefix(mr[0].XName, "state_") && len(xs) > 0 && xs[0] == NoFinalState {
		xs = append(xs[1:], NoFinalState) // last, as the figures draw it
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{fmt.Sprintf("%s (%s) \\ %s", metric, mr[0].Unit, mr[0].XName)}
	for _, x := range xs {
		if strings.HasPrefix(mr[0].XName, "state_") {
			head = append(head, StateLabel(mr[0].XName, x)) // as the figures write it
			continue
		}
		head = append(head, FormatFloat(x))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, s := range mr.Series() {
		line := []string{s}
		sr := mr.BySeries(s)
		for _, x := range xs {
			v := "-"
			for _, r := range sr {
				if r.X == x {
					v = Short(r.Value)
				}
			}
			line = append(line, v)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: writing table of %s: %w", metric, err)
	}
	return nil
}

// Short formats v to five significant digits, for people (tables and
// summaries); files keep FormatFloat's exact values.
func Short(v float64) string { return strconv.FormatFloat(v, 'g', 5, 64) }

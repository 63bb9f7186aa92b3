package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// XRelTol is the relative tolerance on x used by Compare when no simulated
// row has exactly the reference's x: the nearest x within XRelTol*|ref.X| is
// used (reference points read off a paper's figure are rarely exact).
const XRelTol = 0.01

// Reference is a point published in a paper: the value of Metric for Series
// at X, with the place it comes from (e.g. "mpich-sx4.txt, Figure 7").
type Reference struct {
	Series string  `json:"series"`
	Metric string  `json:"metric"`
	X      float64 `json:"x"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
}

// Comparison is a reference point set against the simulated value.
// When Found is false no simulated row matched and SimX, Simulated and
// RelErr are zero.
type Comparison struct {
	Reference Reference `json:"reference"`
	Found     bool      `json:"found"`
	SimX      float64   `json:"sim_x"`
	Simulated float64   `json:"simulated"`
	// RelErr is (Simulated-Reference.Value)/|Reference.Value|. For a zero
	// reference it is relative to max(|Simulated|, 0), i.e. 0 when both are
	// zero and ±1 otherwise, so it is always finite.
	RelErr float64 `json:"rel_err"`
}

// Compare matches each reference with the simulated row of the same series
// and metric at the same x, or else at the nearest x within XRelTol, and
// returns one Comparison per reference, in the order of refs. Among rows at
// equal distance the first one wins.
func Compare(rows []Row, refs []Reference) []Comparison {
	out := make([]Comparison, 0, len(refs))
	for _, ref := range refs {
		c := Comparison{Reference: ref}
		best := math.Inf(1)
		for _, r := range rows {
			if r.Series != ref.Series || r.Metric != ref.Metric {
				continue
			}
			d := math.Abs(r.X - ref.X)
			if d < best && d <= XRelTol*math.Abs(ref.X) {
				best = d
				c.Found, c.SimX, c.Simulated = true, r.X, r.Value
			}
		}
		if c.Found {
			c.RelErr = relErr(c.Simulated, ref.Value)
		}
		out = append(out, c)
	}
	return out
}

func relErr(sim, ref float64) float64 {
	if ref != 0 {
		return (sim - ref) / math.Abs(ref)
	}
	if sim == 0 {
		return 0
	}
	return math.Copysign(1, sim)
}

// WriteSummary writes comparisons as an aligned text table with one line per
// reference: series, metric, x, paper value, simulated value, relative error
// (in percent) and unit. Unmatched references show "missing". When two
// references share series, metric and x (the same point in two places of
// a paper), a last column gives each one's source.
func WriteSummary(w io.Writer, comparisons []Comparison) error {
	type key struct {
		series, metric string
		x              float64
	}
	seen := map[key]int{}
	for _, c := range comparisons {
		seen[key{c.Reference.Series, c.Reference.Metric, c.Reference.X}]++
	}
	sources := false
	for _, n := range seen {
		sources = sources || n > 1
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "series\tmetric\tx\tpaper\tsimulated\terror\tunit\t"
	if sources {
		head += "source\t"
	}
	fmt.Fprintln(tw, head)
	for _, c := range comparisons {
		r := c.Reference
		sim, errs := "missing", "-"
		if c.Found {
			sim = Short(c.Simulated)
			errs = fmt.Sprintf("%+.1f%%", 100*c.RelErr)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t",
			r.Series, r.Metric, FormatFloat(r.X), FormatFloat(r.Value), sim, errs, r.Unit)
		if sources {
			src := shortSource(r.Source)
			if src == "" {
				src = r.Source
			}
			fmt.Fprintf(tw, "%s\t", src)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: writing summary: %w", err)
	}
	return nil
}

package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Kinds of claim: each turns a statement of a paper into a check on the
// rows of a run.
const (
	// ClaimRatio: Series / Other (or Series at OtherAt) at each selected x
	// lies within [Min, Max].
	ClaimRatio = "ratio"
	// ClaimAbove: Series is above Other at every selected x (by a factor
	// of at least Min when Min is set).
	ClaimAbove = "above"
	// ClaimBelow: Series is below Other at every selected x (by a factor
	// of at most Max when Max is set).
	ClaimBelow = "below"
	// ClaimMonotone: Series increases (or decreases, Direction) with x over
	// the selected points, allowing steps back of Tolerance (relative).
	ClaimMonotone = "monotone"
	// ClaimFit: Series fits Model (a*log(x)+b, or a*x+b) over the selected
	// points with a coefficient of determination R² of at least MinR2.
	ClaimFit = "fit"
	// ClaimCrossover: Series and Other cross (Series becoming Direction,
	// above or below, when given) at an x within [XMin, XMax].
	ClaimCrossover = "crossover"
	// ClaimBand: the value of Series at each selected x (or its max or min
	// over them, Stat) lies within [Min, Max].
	ClaimBand = "band"
)

// ClaimKinds are the kinds of claim, in documentation order.
var ClaimKinds = []string{ClaimRatio, ClaimAbove, ClaimBelow, ClaimMonotone, ClaimFit, ClaimCrossover, ClaimBand}

// Fit models, monotone and crossover directions, band statistics.
const (
	FitLog     = "log"    // y = a*ln(x) + b
	FitLinear  = "linear" // y = a*x + b
	Increasing = "increasing"
	Decreasing = "decreasing"
	DirAbove   = "above"
	DirBelow   = "below"
	StatEach   = "each"
	StatMax    = "max"
	StatMin    = "min"
	BestHigh   = "highest"
	BestLow    = "lowest"
)

// Claim is a statement of a paper as a check on results: its quoted
// sentence and section, and what must hold of the rows of Metric. Which x
// values it looks at: the listed At values, else every x of Series within
// [XMin, XMax] (absent bounds: unbounded); for a crossover XMin and XMax
// bound where the crossing must be, and every common x is used.
type Claim struct {
	Name    string `yaml:"name" required:"true" json:"name"`
	Kind    string `yaml:"kind" required:"true" json:"kind"`
	Quote   string `yaml:"quote" required:"true" json:"quote"`     // the paper's own words
	Section string `yaml:"section" required:"true" json:"section"` // where they are, e.g. "aclmpl-t3d.txt, section 5"
	Note    string `yaml:"note" json:"note,omitempty"`             // what the model lacks when it fails, or how the claim is read

	Metric string `yaml:"metric" required:"true" json:"metric"`
	Series string `yaml:"series" required:"true" json:"series"`
	Other  string `yaml:"other" json:"other,omitempty"` // the second series (ratio, above, below, crossover)
	// Others, instead of Other: several series, compared at each x by
	// the best of them (Best: highest or lowest), for a sentence that
	// compares one system with "the other systems" (ratio, above, below,
	// crossover).
	Others []string `yaml:"others" json:"others,omitempty"`
	Best   string   `yaml:"best" json:"best,omitempty"` // others: highest|lowest is the best value of the metric

	At      []float64 `yaml:"at" json:"at,omitempty"`             // the x values checked
	OtherAt *float64  `yaml:"other_at" json:"other_at,omitempty"` // ratio: the denominator's x (default: the same x)
	XMin    *float64  `yaml:"x_min" json:"x_min,omitempty"`
	XMax    *float64  `yaml:"x_max" json:"x_max,omitempty"`

	Min       *float64 `yaml:"min" json:"min,omitempty"`
	Max       *float64 `yaml:"max" json:"max,omitempty"`
	Direction string   `yaml:"direction" json:"direction,omitempty"` // monotone: increasing|decreasing; crossover: above|below
	Tolerance float64  `yaml:"tolerance" json:"tolerance,omitempty"` // monotone: relative step back allowed
	Model     string   `yaml:"model" json:"model,omitempty"`         // fit: log|linear
	MinR2     float64  `yaml:"min_r2" json:"min_r2,omitempty"`       // fit
	Stat      string   `yaml:"stat" json:"stat,omitempty"`           // band: each (default), max, min
}

// ClaimResult is a claim evaluated on the rows of a run: whether it holds
// and the measured figure behind the verdict. Missing is set (and Holds
// false) when the rows the claim needs are absent.
type ClaimResult struct {
	Claim    Claim   `json:"claim"`
	Holds    bool    `json:"holds"`
	Value    float64 `json:"value"`    // the key figure: a ratio, R², a crossing x, a value
	Measured string  `json:"measured"` // the figure in words, e.g. "2.28 at bytes=1024"
	Missing  string  `json:"missing,omitempty"`
	// Training is set when a calibration file fits its parameters to the
	// claim: the claim is then counted as "training (fitted)", never as
	// holding (the claim's verdict is still Holds).
	Training bool `json:"-"`
}

// Status is "holds", "FAILS", or "FAILS (missing data)"; for a training
// claim "training (fitted)", or "training (fitted), FAILS" when the fit
// left it failing.
func (r ClaimResult) Status() string {
	switch {
	case r.Training && r.Holds:
		return "training (fitted)"
	case r.Training:
		return "training (fitted), FAILS"
	case r.Holds:
		return "holds"
	case r.Missing != "":
		return "FAILS (missing data)"
	}
	return "FAILS"
}

// EvaluateClaims evaluates each claim on rows, in order.
func EvaluateClaims(rows []Row, claims []Claim) []ClaimResult {
	out := make([]ClaimResult, 0, len(claims))
	for _, c := range claims {
		out = append(out, evaluate(rows, c))
	}
	return out
}

type xy struct{ x, y float64 }

// curve returns the points of series and metric sorted by x.
func curve(rows []Row, series, metric string) []xy {
	var pts []xy
	for _, r := range rows {
		if r.Series == series && r.Metric == metric {
			pts = append(pts, xy{r.X, r.Value})
		}
	}
	slices.SortStableFunc(pts, func(a, b xy) int { return cmp.Compare(a.x, b.x) })
	return pts
}

// bestCurve returns, at each x every one of series has a point at, the
// best of their values (the highest, or the lowest with best "lowest").
func bestCurve(rows []Row, series []string, metric, best string) ([]xy, error) {
	var curves [][]xy
	for _, s := range series {
		c := curve(rows, s, metric)
		if len(c) == 0 {
			return nil, fmt.Errorf("no %s rows for series %s", metric, s)
		}
		curves = append(curves, c)
	}
	var out []xy
	for _, p := range curves[0] {
		y, ok := p.y, true
		for _, c := range curves[1:] {
			v, found := at(c, p.x)
			if !found {
				ok = false
				break
			}
			if (best == BestLow && v < y) || (best != BestLow && v > y) {
				y = v
			}
		}
		if ok {
			out = append(out, xy{p.x, y})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("series %s share no x value", strings.Join(series, ", "))
	}
	return out, nil
}

// otherName names the claim's reference series in words: Other, or the
// best of Others.
func (c Claim) otherName() string {
	if len(c.Others) > 0 {
		return fmt.Sprintf("the %s of (%s)", c.Best, strings.Join(c.Others, ", "))
	}
	return c.Other
}

// at returns the value of pts at x, or at the nearest x within XRelTol.
func at(pts []xy, x float64) (float64, bool) {
	best, v, ok := math.Inf(1), 0.0, false
	for _, p := range pts {
		if d := math.Abs(p.x - x); d < best && d <= XRelTol*math.Abs(x) {
			best, v, ok = d, p.y, true
		}
	}
	return v, ok
}

// selected returns the x values the claim looks at in pts.
func (c Claim) selected(pts []xy) []float64 {
	if len(c.At) > 0 {
		return c.At
	}
	var xs []float64
	for _, p := range pts {
		if (c.XMin == nil || p.x >= *c.XMin) && (c.XMax == nil || p.x <= *c.XMax) {
			xs = append(xs, p.x)
		}
	}
	return xs
}

func (c Claim) within(v float64) bool {
	return (c.Min == nil || v >= *c.Min) && (c.Max == nil || v <= *c.Max)
}

// bounds describes [Min, Max] in words.
func (c Claim) bounds() string {
	switch {
	case c.Min != nil && c.Max != nil:
		return fmt.Sprintf("%s..%s", Short(*c.Min), Short(*c.Max))
	case c.Min != nil:
		return "≥ " + Short(*c.Min)
	case c.Max != nil:
		return "≤ " + Short(*c.Max)
	}
	return "any"
}

// evaluation is a claim with the curves it is checked on.
type evaluation struct {
	c     Claim
	pts   []xy      // Series' points, sorted by x
	other []xy      // Other's points (nil when the claim has none)
	xname string    // the x's name in the rows
	xs    []float64 // the x values selected (Claim.selected)
}

// missing is the result of a claim whose rows are absent.
func (e *evaluation) missing(format string, a ...any) ClaimResult {
	res := ClaimResult{Claim: e.c, Missing: fmt.Sprintf(format, a...)}
	res.Measured = "missing: " + res.Missing
	return res
}

// evaluate finds the claim's curves and checks it by its kind.
func evaluate(rows []Row, c Claim) ClaimResult {
	e := &evaluation{c: c, xname: "x"}
	e.pts = curve(rows, c.Series, c.Metric)
	if len(e.pts) == 0 {
		return e.missing("no %s rows for series %s", c.Metric, c.Series)
	}
	if c.Other != "" {
		if e.other = curve(rows, c.Other, c.Metric); len(e.other) == 0 {
			return e.missing("no %s rows for series %s", c.Metric, c.Other)
		}
	}
	if len(c.Others) > 0 {
		var err error
		if e.other, err = bestCurve(rows, c.Others, c.Metric, c.Best); err != nil {
			return e.missing("%v", err)
		}
	}
	for _, r := range rows {
		if r.Series == c.Series && r.Metric == c.Metric {
			e.xname = r.XName
			break
		}
	}
	e.xs = c.selected(e.pts)
	if len(e.xs) == 0 && c.Kind != ClaimCrossover {
		return e.missing("no %s point of series %s in the claim's x range", c.Metric, c.Series)
	}
	switch c.Kind {
	case ClaimRatio, ClaimAbove, ClaimBelow:
		return e.ratio()
	case ClaimMonotone:
		return e.monotone()
	case ClaimFit:
		return e.fit()
	case ClaimCrossover:
		return e.crossover()
	case ClaimBand:
		return e.band()
	}
	return e.missing("unknown claim kind %q", c.Kind)
}

// pair returns Series at x and the reference (Other, or Series at
// OtherAt) at x or OtherAt.
func (e *evaluation) pair(x float64) (float64, float64, error) {
	c := e.c
	a, ok := at(e.pts, x)
	if !ok {
		return 0, 0, fmt.Errorf("no %s point of series %s at %s=%s", c.Metric, c.Series, e.xname, FormatFloat(x))
	}
	ref, ox := e.other, x
	if ref == nil {
		ref = e.pts
	}
	if c.OtherAt != nil {
		ox = *c.OtherAt
	}
	b, ok := at(ref, ox)
	if !ok {
		name := c.otherName()
		if name == "" {
			name = c.Series
		}
		return 0, 0, fmt.Errorf("no %s point of series %s at %s=%s", c.Metric, name, e.xname, FormatFloat(ox))
	}
	return a, b, nil
}

// points returns Series' points at the selected x values, or the x
// that has none.
func (e *evaluation) points() ([]xy, float64, bool) {
	var ys []xy
	for _, x := range e.xs {
		y, ok := at(e.pts, x)
		if !ok {
			return nil, x, false
		}
		ys = append(ys, xy{x, y})
	}
	return ys, 0, true
}

// noPoint is the result of a claim whose Series has no point at x.
func (e *evaluation) noPoint(x float64) ClaimResult {
	return e.missing("no %s point of series %s at %s=%s", e.c.Metric, e.c.Series, e.xname, FormatFloat(x))
}

// ratio checks a ratio, above or below claim: Series over its reference
// at each selected x.
func (e *evaluation) ratio() ClaimResult {
	c, xname := e.c, e.xname
	res := ClaimResult{Claim: c}
	type rx struct{ r, x float64 }
	var rs []rx
	for _, x := range e.xs {
		a, b, err := e.pair(x)
		if err != nil {
			return e.missing("%v", err)
		}
		if b == 0 {
			return e.missing("the denominator is 0 at %s=%s", xname, FormatFloat(x))
		}
		rs = append(rs, rx{a / b, x})
	}
	lo, hi := rs[0], rs[0]
	res.Holds = true
	for _, p := range rs {
		if p.r < lo.r {
			lo = p
		}
		if p.r > hi.r {
			hi = p
		}
		switch c.Kind {
		case ClaimRatio:
			res.Holds = res.Holds && c.within(p.r)
		case ClaimAbove:
			res.Holds = res.Holds && p.r > 1 && (c.Min == nil || p.r >= *c.Min)
		case ClaimBelow:
			res.Holds = res.Holds && p.r < 1 && (c.Max == nil || p.r <= *c.Max)
		}
	}
	den := c.otherName()
	if den == "" {
		den = c.Series
	}
	if c.OtherAt != nil {
		den += fmt.Sprintf(" at %s=%s", xname, FormatFloat(*c.OtherAt))
	}
	want := map[string]string{ClaimRatio: "want " + c.bounds(), ClaimAbove: "want > 1", ClaimBelow: "want < 1"}[c.Kind]
	if c.Kind == ClaimAbove && c.Min != nil {
		want = "want ≥ " + Short(*c.Min)
	}
	if c.Kind == ClaimBelow && c.Max != nil {
		want = "want ≤ " + Short(*c.Max)
	}
	if len(rs) == 1 {
		res.Value = rs[0].r
		res.Measured = fmt.Sprintf("%s / %s = %s at %s=%s (%s)", c.Series, den, Short(rs[0].r), xname, FormatFloat(rs[0].x), want)
		return res
	}
	res.Value = lo.r
	if c.Kind == ClaimBelow {
		res.Value = hi.r
	}
	res.Measured = fmt.Sprintf("%s / %s = %s (%s=%s) to %s (%s=%s) over %d points (%s)", c.Series, den,
		Short(lo.r), xname, FormatFloat(lo.x), Short(hi.r), xname, FormatFloat(hi.x), len(rs), want)
	return res
}

// monotone checks that Series rises (or falls) over the selected x,
// allowing steps back of Tolerance.
func (e *evaluation) monotone() ClaimResult {
	c, xname := e.c, e.xname
	res := ClaimResult{Claim: c}
	ys, x, ok := e.points()
	if !ok {
		return e.noPoint(x)
	}
	slices.SortStableFunc(ys, func(a, b xy) int { return cmp.Compare(a.x, b.x) })
	if len(ys) < 2 {
		return e.missing("a trend needs 2 points, %d selected", len(ys))
	}
	sign := 1.0
	if c.Direction == Decreasing {
		sign = -1
	}
	// worst is the largest relative step against the direction.
	worst, wi := math.Inf(-1), 0
	for i := 1; i < len(ys); i++ {
		back := sign * (ys[i-1].y - ys[i].y) / math.Max(math.Abs(ys[i-1].y), math.SmallestNonzeroFloat64)
		if back > worst {
			worst, wi = back, i
		}
	}
	res.Value = worst
	res.Holds = worst <= c.Tolerance+1e-12 // a step back of exactly the tolerance is allowed
	if worst <= 0 {
		res.Measured = fmt.Sprintf("%s %s over %d points (%s=%s..%s)", c.Series, c.Direction, len(ys), xname, FormatFloat(ys[0].x), FormatFloat(ys[len(ys)-1].x))
	} else {
		res.Measured = fmt.Sprintf("%s goes against the trend by %.1f%% from %s=%s (%s) to %s (%s) (tolerance %.1f%%)", c.Series, 100*worst,
			xname, FormatFloat(ys[wi-1].x), Short(ys[wi-1].y), FormatFloat(ys[wi].x), Short(ys[wi].y), 100*c.Tolerance)
	}
	return res
}

// fit checks that Series fits Model over the selected x with an R² of
// at least MinR2.
func (e *evaluation) fit() ClaimResult {
	c := e.c
	res := ClaimResult{Claim: c}
	ys, x, ok := e.points()
	if !ok {
		return e.noPoint(x)
	}
	var fx, fy []float64
	for _, p := range ys {
		x := p.x
		if c.Model == FitLog {
			if x <= 0 {
				continue
			}
			x = math.Log(x)
		}
		fx, fy = append(fx, x), append(fy, p.y)
	}
	if len(fx) < 3 {
		return e.missing("a fit needs 3 points, %d selected", len(fx))
	}
	a, b, r2 := linearFit(fx, fy)
	res.Value, res.Holds = r2, r2 >= c.MinR2
	form := "a*x+b"
	if c.Model == FitLog {
		form = "a*ln(x)+b"
	}
	res.Measured = fmt.Sprintf("%s = %s with a=%s, b=%s: R²=%.4f over %d points (want ≥ %s)", c.Metric, form, Short(a), Short(b), r2, len(fx), Short(c.MinR2))
	return res
}

// crossover checks that Series crosses Other (in Direction, if set)
// within [XMin, XMax], over their common x values.
func (e *evaluation) crossover() ClaimResult {
	c, xname := e.c, e.xname
	res := ClaimResult{Claim: c}
	var ds []xy // Series - Other at common x
	for _, p := range e.pts {
		if o, ok := at(e.other, p.x); ok {
			ds = append(ds, xy{p.x, p.y - o})
		}
	}
	if len(ds) < 2 {
		return e.missing("series %s and %s share %d x values, a crossover needs 2", c.Series, c.otherName(), len(ds))
	}
	var cross []string
	found := false
	for i := 1; i < len(ds); i++ {
		d0, d1 := ds[i-1].y, ds[i].y
		up, down := d0 < 0 && d1 >= 0, d0 > 0 && d1 <= 0
		if !up && !down {
			continue
		}
		x := ds[i-1].x + (ds[i].x-ds[i-1].x)*d0/(d0-d1)
		dir := DirAbove
		if down {
			dir = DirBelow
		}
		cross = append(cross, fmt.Sprintf("%s at %s≈%s (between %s and %s)", dir, xname, Short(x), FormatFloat(ds[i-1].x), FormatFloat(ds[i].x)))
		if found || (c.Direction != "" && dir != c.Direction) {
			continue
		}
		found, res.Value = true, x
		res.Holds = (c.XMin == nil || x >= *c.XMin) && (c.XMax == nil || x <= *c.XMax)
	}
	rng := fmt.Sprintf("want %s=%s..%s", xname, fmtBound(c.XMin), fmtBound(c.XMax))
	if len(cross) == 0 {
		rel := "above"
		if ds[0].y < 0 {
			rel = "below"
		}
		res.Measured = fmt.Sprintf("%s stays %s %s over %s=%s..%s: no crossover (%s)", c.Series, rel, c.otherName(), xname, FormatFloat(ds[0].x), FormatFloat(ds[len(ds)-1].x), rng)
	} else {
		res.Measured = fmt.Sprintf("%s crosses %s %s (%s)", c.Series, strings.Join(cross, ", then "), c.otherName(), rng)
	}
	return res
}

// band checks that Series (each selected value, or their max or min)
// lies within [Min, Max].
func (e *evaluation) band() ClaimResult {
	c, xname := e.c, e.xname
	res := ClaimResult{Claim: c}
	ys, x, ok := e.points()
	if !ok {
		return e.noPoint(x)
	}
	switch c.Stat {
	case StatMax, StatMin:
		best := ys[0]
		for _, p := range ys {
			if (c.Stat == StatMax && p.y > best.y) || (c.Stat == StatMin && p.y < best.y) {
				best = p
			}
		}
		res.Value, res.Holds = best.y, c.within(best.y)
		res.Measured = fmt.Sprintf("%s of %s = %s at %s=%s (want %s)", c.Stat, c.Series, Short(best.y), xname, FormatFloat(best.x), c.bounds())
		return res
	}
	res.Holds = true
	var bad []string
	for _, p := range ys {
		if !c.within(p.y) {
			res.Holds = false
			bad = append(bad, fmt.Sprintf("%s at %s=%s", Short(p.y), xname, FormatFloat(p.x)))
		}
	}
	res.Value = ys[0].y
	switch {
	case len(ys) == 1:
		res.Measured = fmt.Sprintf("%s = %s at %s=%s (want %s)", c.Series, Short(ys[0].y), xname, FormatFloat(ys[0].x), c.bounds())
	case len(bad) == 0:
		res.Measured = fmt.Sprintf("%s within %s at all %d points", c.Series, c.bounds(), len(ys))
	default:
		res.Measured = fmt.Sprintf("%s outside %s: %s", c.Series, c.bounds(), strings.Join(bad, ", "))
	}
	return res
}

func fmtBound(b *float64) string {
	if b == nil {
		return ""
	}
	return FormatFloat(*b)
}

// linearFit returns the least-squares a, b of y = a*x + b and its
// coefficient of determination (1 when y is constant and fitted exactly).
func linearFit(x, y []float64) (a, b, r2 float64) {
	n := float64(len(x))
	var sx, sy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 {
		return 0, my, 0
	}
	a = sxy / sxx
	b = my - a*mx
	var ssr float64
	for i := range x {
		e := y[i] - (a*x[i] + b)
		ssr += e * e
	}
	if syy == 0 {
		if ssr == 0 {
			return a, b, 1
		}
		return a, b, 0
	}
	return a, b, 1 - ssr/syy
}

// WriteClaims writes one block per claim: its status, kind, name and the
// measured figure, then the paper's words and section, and the note.
func WriteClaims(w io.Writer, results []ClaimResult) error {
	for _, r := range results {
		c := r.Claim
		if _, err := fmt.Fprintf(w, "%-5s  %s (%s, %s): %s\n       \"%s\" (%s)\n", r.Status(), c.Name, c.Kind, c.Metric, r.Measured, strings.Join(strings.Fields(c.Quote), " "), c.Section); err != nil {
			return fmt.Errorf("report: writing claims: %w", err)
		}
		if n := strings.Join(strings.Fields(c.Note), " "); n != "" {
			if _, err := fmt.Fprintf(w, "       note: %s\n", n); err != nil {
				return fmt.Errorf("report: writing claims: %w", err)
			}
		}
	}
	return nil
}

package report

import (
	"bufio"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Panel is one plot of a Figure: the rows of one metric against x.
type Panel struct {
	Title  string
	XLabel string // default: the rows' x_name
	YLabel string // default: "metric (unit)"
	Metric string // rows and references of this metric are drawn
	XName  string // if set, only rows with this x_name are drawn
	// XLog and YLog select logarithmic axes; points with x (or y) <= 0 are
	// then left out.
	XLog, YLog bool
	// Series is the subset of series drawn, in this order; empty means all,
	// in first-seen order.
	Series []string
	// XMin and XMax bound the x axis; 0 means automatic. Points outside
	// the bounds are left out.
	XMin, XMax float64
}

// Figure is a set of panels laid side by side under an optional title,
// like Figure 7 of papers/mpich-sx4.txt (latency left, bandwidth right).
type Figure struct {
	Title  string
	Panels []Panel
	// Bands are one-sided statements of the papers ("greater than 100
	// MB/s"), drawn as dashed lines on the panels of their metric.
	Bands []Band
}

// Band is a one-sided value stated in a paper's prose: the values of
// Metric for Series are greater (Above) or less than Value over [XLo, XHi]
// (a bound at 0: that end of the x range of the panel's data). It is drawn as a dashed line
// in the series' colour.
type Band struct {
	Series, Metric string
	Value          float64
	Above          bool
	XLo, XHi       float64
}

// Figure dimensions.
const (
	panelWidth  = 5 * vg.Inch
	panelHeight = 4 * vg.Inch
	titleHeight = 0.4 * vg.Inch
)

// Save draws the figure from rows, overlays refs, and writes
// pathWithoutExt+".png" and pathWithoutExt+".svg". The SVG output is
// byte-identical for identical inputs; so is the PNG with this version of
// gonum/plot (it rasterizes deterministically).
func (f Figure) Save(pathWithoutExt string, rows []Row, refs []Reference) error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("report: figure %q has no panels", f.Title)
	}
	plots := make([][]*plot.Plot, 1)
	legends := make([]plot.Legend, len(f.Panels))
	rows0 := 0
	for i, p := range f.Panels {
		if p.Title == f.Title {
			p.Title = "" // said once, above the panels
		}
		pp, err := p.plot(rows, refs, f.Bands)
		if err != nil {
			return fmt.Errorf("report: figure %q, panel %d (%s): %w", f.Title, i, p.Metric, err)
		}
		// The legend goes below the panel, outside the data: it hides no
		// curve whatever their shape.
		legends[i] = pp.Legend
		pp.Legend = plot.NewLegend()
		rows0 = max(rows0, pp.entries)
		plots[0] = append(plots[0], pp.Plot)
	}
	legendH := legendHeight(legends[0], rows0)
	w := panelWidth * vg.Length(len(f.Panels))
	h := panelHeight + legendH
	if f.Title != "" {
		h += titleHeight
	}

	png := vgimg.New(w, h)
	f.draw(draw.New(png), plots, legends, legendH)
	if err := writeFile(pathWithoutExt+".png", vgimg.PngCanvas{Canvas: png}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	f.draw(draw.New(svg), plots, legends, legendH)
	return writeFile(pathWithoutExt+".svg", svg)
}

// legendHeight is the height of a legend of n entries drawn below a panel.
func legendHeight(l plot.Legend, n int) vg.Length {
	line := l.TextStyle.Rectangle("Mg").Size().Y + l.Padding
	return vg.Length(n)*line + vg.Millimeter*6
}

// draw draws the title, the panels side by side and each panel's legend
// below it on dc.
func (f Figure) draw(dc draw.Canvas, plots [][]*plot.Plot, legends []plot.Legend, legendH vg.Length) {
	tiles := draw.Tiles{Rows: 1, Cols: len(f.Panels), PadX: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter*2 + legendH,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if f.Title != "" {
		sty := text.Style{
			Color:   color.Black,
			Font:    font.From(plot.DefaultFont, 14),
			XAlign:  draw.XCenter,
			YAlign:  draw.YTop,
			Handler: plot.DefaultTextHandler,
		}
		top := vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Millimeter*2}
		dc.FillText(sty, top, f.Title)
		tiles.PadTop += titleHeight
	}
	canvases := plot.Align(plots, tiles, dc)
	for i, pl := range plots[0] {
		c := canvases[0][i]
		pl.Draw(c)
		lc := c
		lc.Max.Y = c.Min.Y - vg.Millimeter*2
		lc.Min.Y = lc.Max.Y - legendH + vg.Millimeter*2
		lc.Min.X += vg.Millimeter * 8
		legends[i].Draw(lc)
	}
}

// panelPlot is a panel's gonum plot and the number of its legend entries.
type panelPlot struct {
	*plot.Plot
	entries int
}

// plot builds the gonum plot of one panel.
func (p Panel) plot(rows []Row, refs []Reference, bands []Band) (*panelPlot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Add(plotter.NewGrid())
	sel, prefs, series := p.selectRows(rows, refs)
	p.labels(pl, sel)
	if states(p, sel) {
		if err := p.bars(pl, sel, series); err != nil {
			return nil, err
		}
		return &panelPlot{pl, len(series)}, nil
	}
	for i, s := range series {
		col := plotutil.DarkColors[i%len(plotutil.DarkColors)]
		if err := p.curve(pl, i, s, col, sel); err != nil {
			return nil, err
		}
		if err := p.paperPoints(pl, i, s, col, prefs); err != nil {
			return nil, err
		}
	}
	if p.XLog {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, powerTicks{}
	}
	if p.YLog {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, powerTicks{}
	}
	if err := p.bands(pl, sel, series, bands); err != nil {
		return nil, err
	}
	fixRange(&pl.X, p.XLog, p.XMin, p.XMax)
	fixRange(&pl.Y, p.YLog, 0, 0)
	pad(&pl.X, p.XLog)
	pad(&pl.Y, p.YLog)
	entries := len(series)
	for _, s := range series {
		if slices.ContainsFunc(prefs, func(r Reference) bool { return r.Series == s }) {
			entries++
		}
	}
	for _, b := range bands {
		if b.Metric == p.Metric {
			entries++
		}
	}
	return &panelPlot{pl, entries}, nil
}

// selectRows returns the rows and references of the panel's metric and
// the series drawn: the panel's, else those of the rows then of the
// references, in order.
func (p Panel) selectRows(rows []Row, refs []Reference) (sel []Row, prefs []Reference, series []string) {
	for _, r := range rows {
		if r.Metric == p.Metric && (p.XName == "" || r.XName == p.XName) {
			sel = append(sel, r)
		}
	}
	for _, r := range refs {
		if r.Metric == p.Metric {
			prefs = append(prefs, r)
		}
	}
	series = p.Series
	if len(series) == 0 {
		series = Results(sel).Series()
		for _, r := range prefs {
			if !slices.Contains(series, r.Series) {
				series = append(series, r.Series)
			}
		}
	}
	return sel, prefs, series
}

// labels names the axes: the panel's labels, else the x's name and the
// metric with its unit.
func (p Panel) labels(pl *plot.Plot, sel []Row) {
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	if pl.X.Label.Text == "" && len(sel) > 0 {
		pl.X.Label.Text = sel[0].XName
	}
	if pl.Y.Label.Text == "" {
		pl.Y.Label.Text = p.Metric
		if len(sel) > 0 && sel[0].Unit != "" {
			pl.Y.Label.Text += " (" + sel[0].Unit + ")"
		}
	}
}

// curve draws series s (the i-th) as a line with points, in colour col.
func (p Panel) curve(pl *plot.Plot, i int, s string, col color.Color, sel []Row) error {
	var xys plotter.XYs
	for _, r := range sel {
		if r.Series == s && p.keep(r.X, r.Value) {
			xys = append(xys, plotter.XY{X: r.X, Y: r.Value})
		}
	}
	slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	if len(xys) == 0 {
		return nil
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("series %q: %w", s, err)
	}
	line.Color = col
	// Dash patterns tell apart series whose curves coincide
	// (t3d-fig8: sync-mpi under async-mpi).
	line.Dashes = plotutil.Dashes(i)
	points.Color = col
	points.Shape = seriesGlyph(i)
	pl.Add(line, points)
	pl.Legend.Add(s, line, points)
	return nil
}

// paperPoints draws the references of series s (the i-th) as large
// points in its colour, labelled with their sources.
func (p Panel) paperPoints(pl *plot.Plot, i int, s string, col color.Color, prefs []Reference) error {
	var rxys plotter.XYs
	var srcs []string
	for _, r := range prefs {
		if r.Series == s && p.keep(r.X, r.Value) {
			rxys = append(rxys, plotter.XY{X: r.X, Y: r.Value})
			if src := shortSource(r.Source); src != "" && !slices.Contains(srcs, src) {
				srcs = append(srcs, src)
			}
		}
	}
	if len(rxys) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(rxys)
	if err != nil {
		return fmt.Errorf("references of %q: %w", s, err)
	}
	sc.Color = col
	sc.Radius = vg.Points(4)
	sc.Shape = refGlyph(i)
	pl.Add(sc)
	label := s + " (paper)"
	if len(srcs) > 0 {
		label = s + " (paper, " + strings.Join(srcs, ", ") + ")"
	}
	pl.Legend.Add(label, sc)
	return nil
}

// bands draws the bands of the panel's metric as dashed lines in the
// colour of their series, labelled "series (paper: > v)".
func (p Panel) bands(pl *plot.Plot, sel []Row, series []string, bands []Band) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range sel {
		if p.keep(r.X, r.Value) {
			lo, hi = math.Min(lo, r.X), math.Max(hi, r.X)
		}
	}
	for _, b := range bands {
		if b.Metric != p.Metric {
			continue
		}
		x0, x1 := b.XLo, b.XHi
		if x0 == 0 {
			x0 = lo
		}
		if x1 == 0 {
			x1 = hi
		}
		if !p.keep(x0, b.Value) || !p.keep(x1, b.Value) || x0 > x1 {
			continue
		}
		i := slices.Index(series, b.Series)
		if i < 0 {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: x0, Y: b.Value}, {X: x1, Y: b.Value}})
		if err != nil {
			return fmt.Errorf("band of %q: %w", b.Series, err)
		}
		line.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		line.Width = vg.Points(1.5)
		rel := ">"
		if !b.Above {
			rel = "<"
		}
		pl.Add(line)
		pl.Legend.Add(fmt.Sprintf("%s (paper: %s %s)", b.Series, rel, Short(b.Value)), line)
	}
	return nil
}

// shortSource is where a paper's point comes from, short enough for a
// legend: its figures, tables and sections ("Figure 5", "Table 1.1",
// "section 6"), else "".
func shortSource(src string) string {
	return strings.Join(sourceRE.FindAllString(src, 2), " ")
}

var sourceRE = regexp.MustCompile(`(Figure|Table|section) [0-9][0-9.]*[0-9]|(Figure|Table|section) [0-9]`)

// pad widens an axis so that no point, marker or reference lies on the
// frame: 5 % of the span on each side of a linear axis, a factor 1.3 on a
// log axis.
func pad(a *plot.Axis, log bool) {
	if log {
		a.Min, a.Max = a.Min/1.3, a.Max*1.3
		return
	}
	d := (a.Max - a.Min) * 0.05
	a.Min -= d
	a.Max += d
}

// powerTicks marks a log axis at every power of ten, labelled 10ⁿ (1, 10
// and 100 included, so that every label reads alike), with unlabelled
// minor ticks at 2..9 times each; an axis spanning less than a decade
// also labels 2 and 5 times the powers.
type powerTicks struct{}

// Ticks returns the ticks between min and max.
func (powerTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	majors := 0
	for k := lo; k <= hi; k++ {
		if v := math.Pow(10, float64(k)); v >= min && v <= max {
			majors++
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		base := math.Pow(10, float64(k))
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case m == 1:
				t.Label = power(k)
			case majors < 2 && (m == 2 || m == 5):
				t.Label = fmt.Sprintf("%d·%s", m, power(k))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// power writes 10 to the k with a superscript exponent.
func power(k int) string {
	const sup = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	digits := []rune(sup)
	var b strings.Builder
	b.WriteString("10")
	if k < 0 {
		b.WriteRune('⁻')
		k = -k
	}
	for _, c := range strconv.Itoa(k) {
		b.WriteRune(digits[c-'0'])
	}
	return b.String()
}

// states reports whether the panel's x values are final states of a
// litmus test (x_name "state_r0r1"...): categories, not numbers.
func states(p Panel, sel []Row) bool {
	return len(sel) > 0 && strings.HasPrefix(sel[0].XName, "state_")
}

// bars draws a panel of categorical x (litmus final states) as grouped
// bars, one group per state (labelled with its register values, "01"),
// one bar per series; states no series reached are left out.
func (p Panel) bars(pl *plot.Plot, sel []Row, series []string) error {
	regs := strings.Count(strings.TrimPrefix(sel[0].XName, "state_"), "r")
	var xs []float64
	for _, r := range sel {
		if !slices.Contains(xs, r.X) && !math.IsNaN(r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.Sort(xs)
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = fmt.Sprintf("%0*d", regs, int64(x))
	}
	width := vg.Points(40) / vg.Length(max(1, len(series)))
	for i, s := range series {
		vals := make(plotter.Values, len(xs))
		for _, r := range sel {
			if r.Series == s {
				vals[slices.Index(xs, r.X)] = r.Value
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("series %q: %w", s, err)
		}
		b.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		b.LineStyle.Width = 0
		b.Offset = width * (vg.Length(i) - vg.Length(len(series)-1)/2)
		pl.Add(b)
		pl.Legend.Add(s, b)
	}
	pl.NominalX(names...)
	if p.XLabel == "" {
		pl.X.Label.Text = "final state (" + strings.TrimPrefix(sel[0].XName, "state_") + ")"
	}
	pl.Y.Min = 0
	pl.Y.Max *= 1.05 // the tallest bar below the frame
	return nil
}

// seriesGlyph returns the glyph of the i-th simulated series (filled).
func seriesGlyph(i int) draw.GlyphDrawer {
	switch i % 3 {
	case 1:
		return draw.BoxGlyph{}
	case 2:
		return draw.PyramidGlyph{}
	}
	return draw.CircleGlyph{}
}

// refGlyph returns the glyph of the paper's points for the i-th series:
// unfilled, and of a different shape than seriesGlyph(i).
func refGlyph(i int) draw.GlyphDrawer {
	switch i % 3 {
	case 1:
		return draw.TriangleGlyph{}
	case 2:
		return draw.RingGlyph{}
	}
	return draw.SquareGlyph{}
}

// keep reports whether the point (x, y) can be drawn on the panel.
func (p Panel) keep(x, y float64) bool {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0):
		return false
	case p.XLog && x <= 0, p.YLog && y <= 0:
		return false
	case p.XMin != 0 && x < p.XMin, p.XMax != 0 && x > p.XMax:
		return false
	}
	return true
}

// fixRange applies the user bounds lo and hi (0 = automatic) to a and makes
// its range valid: non-empty, and strictly positive on a log axis (gonum
// panics otherwise).
func fixRange(a *plot.Axis, log bool, lo, hi float64) {
	if lo != 0 {
		a.Min = lo
	}
	if hi != 0 {
		a.Max = hi
	}
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || a.Min > a.Max {
		a.Min, a.Max = 0, 1 // no data
		if log {
			a.Min, a.Max = 1, 10
		}
	}
	if !log {
		return
	}
	if a.Max <= 0 {
		a.Min, a.Max = 1, 10
	}
	if a.Min <= 0 {
		a.Min = a.Max / 10
	}
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// writeFile writes the output of wt to the file at path.
func writeFile(path string, wt interface {
	WriteTo(w io.Writer) (int64, error)
}) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	bw := bufio.NewWriter(f)
	if _, err := wt.WriteTo(bw); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: closing %s: %w", path, err)
	}
	return nil
}

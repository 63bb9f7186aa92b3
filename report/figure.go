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
	// XLog and YLog select logarithmic axes; points with x (or y) < 0 are
	// then left out, and zero is drawn at the axis's start, past a break
	// mark.
	XLog, YLog bool
	// Series is the subset of series drawn, in this order; empty means all,
	// in first-seen order.
	Series []string
	// XMin and XMax bound the x axis; 0 means automatic. Points outside
	// the bounds are left out.
	XMin, XMax float64

	styles map[string]Style // the figure's Styles
}

// Style is how a series is drawn: its colour and its mark (the marker
// and the dash pattern of its line), each an index into the figures'
// palettes.
type Style struct{ Color, Mark int }

// style is the style of series s, the i-th of the panel: the figure's,
// else the i-th colour and mark.
func (p Panel) style(s string, i int) Style {
	if st, ok := p.styles[s]; ok {
		return st
	}
	return Style{i, i}
}

// seriesColor is the colour of index k.
func seriesColor(k int) color.Color { return plotutil.DarkColors[k%len(plotutil.DarkColors)] }

// Colors is the number of colours series are told apart by.
var Colors = len(plotutil.DarkColors)

// Figure is a set of panels laid side by side under an optional title,
// like Figure 7 of papers/mpich-sx4.txt (latency left, bandwidth right).
type Figure struct {
	Title  string
	Panels []Panel
	// Bands are one-sided statements of the papers ("greater than 100
	// MB/s"), drawn as dashed lines on the panels of their metric.
	Bands []Band
	// Styles, when set, gives a series its style (colour, marker and
	// dashes) by name, the same on every panel and every figure of a
	// scenario; a series not in it takes its position in the panel.
	Styles map[string]Style
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
	// panelTitleHeight is the height of a panel's title above its data.
	panelTitleHeight = 0.3 * vg.Inch
)

// Save draws the figure from rows, overlays refs, and writes
// pathWithoutExt+".png" and pathWithoutExt+".svg". The SVG output is
// byte-identical for identical inputs; so is the PNG with this version of
// gonum/plot (it rasterizes deterministically).
func (f Figure) Save(pathWithoutExt string, rows []Row, refs []Reference) error {
	w, h, draw, err := f.layout(rows, refs)
	if err != nil {
		return err
	}
	png := vgimg.New(w, h)
	draw(png)
	if err := writeFile(pathWithoutExt+".png", vgimg.PngCanvas{Canvas: png}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	draw(svg)
	return writeFile(pathWithoutExt+".svg", svg)
}

// layout builds the panels' plots and returns the figure's size and a
// function drawing it on a canvas of that size.
func (f Figure) layout(rows []Row, refs []Reference) (vg.Length, vg.Length, func(vg.CanvasSizer), error) {
	if len(f.Panels) == 0 {
		return 0, 0, nil, fmt.Errorf("report: figure %q has no panels", f.Title)
	}
	var panels []*panelPlot
	var legendH vg.Length
	for i, p := range f.Panels {
		if p.Title == f.Title {
			p.Title = "" // said once, above the panels
		}
		p.styles = f.Styles
		pp, err := p.plot(rows, refs, f.Bands)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("report: figure %q, panel %d (%s): %w", f.Title, i, p.Metric, err)
		}
		pp.legend, pp.Legend = pp.Legend, plot.NewLegend()
		// gonum centres the y label's glyph box at the arithmetic middle of
		// the range, near the top of a log axis, and pads the data area
		// below it: the figure draws the label, centred on the data, and
		// gonum keeps its room with a blank.
		if pp.Y.Label.Text != "" {
			pp.yLabel, pp.Y.Label.Text = pp.Y.Label.Text, " "
		}
		legendH = max(legendH, pp.legendHeight())
		panels = append(panels, pp)
	}
	// As wide as a row of panels, or as the title if it is wider.
	rowsN, cols := f.grid()
	w := max(panelWidth*vg.Length(cols), titleStyle(14).Width(f.Title)+vg.Inch/2)
	h := vg.Length(rowsN)*(panelHeight+legendH) + f.titlesHeight(panels) + vg.Length(rowsN-1)*f.rowGap(panels)
	return w, h, func(c vg.CanvasSizer) { f.draw(draw.New(c), panels, legendH) }, nil
}

// maxCols is the most panels a figure puts side by side; more wrap into
// rows of at most gridCols.
const (
	maxCols  = 4
	gridCols = 3
)

// grid is the figure's rows and columns of panels.
func (f Figure) grid() (rows, cols int) {
	n := len(f.Panels)
	if n <= maxCols {
		return 1, n
	}
	return (n + gridCols - 1) / gridCols, gridCols
}

// rowGap is the extra height between two rows of panels: the panels'
// titles of the row below's top (the legend's room is in each row's own
// height).
func (f Figure) rowGap(panels []*panelPlot) vg.Length {
	if slices.ContainsFunc(panels, func(pp *panelPlot) bool { return pp.title != "" }) {
		return panelTitleHeight
	}
	return 0
}

// titlesHeight is the height taken above the data by the figure's title
// and the panels' titles.
func (f Figure) titlesHeight(panels []*panelPlot) vg.Length {
	var h vg.Length
	if f.Title != "" {
		h += titleHeight
	}
	if slices.ContainsFunc(panels, func(pp *panelPlot) bool { return pp.title != "" }) {
		h += panelTitleHeight
	}
	return h
}

// legendHeight is the height of the panel's legend drawn below it, with
// its margin (0 if it has no entry).
func (pp *panelPlot) legendHeight() vg.Length {
	h := pp.legend.Rectangle(draw.Canvas{}).Size().Y
	if h == 0 {
		return 0
	}
	return h + vg.Millimeter*4
}

// draw draws the title, the panels side by side with their data areas
// aligned, each panel's title at one height above its data and each
// panel's legend below it on dc.
func (f Figure) draw(dc draw.Canvas, panels []*panelPlot, legendH vg.Length) {
	rows, cols := f.grid()
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4,
		PadY:   legendH + f.rowGap(panels),
		PadTop: vg.Millimeter*2 + f.titlesHeight(panels), PadBottom: vg.Millimeter*2 + legendH,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if f.Title != "" {
		top := vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Millimeter*2}
		dc.FillText(titleStyle(14), top, f.Title)
	}
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, pp := range panels {
		plots[i/cols][i%cols] = pp.Plot
	}
	canvases := plot.Align(plots, tiles, dc)
	for i, pp := range panels {
		c := canvases[i/cols][i%cols]
		pp.Draw(c)
		data := pp.DataCanvas(c)
		if pp.yLabel != "" {
			sty := pp.Y.Label.TextStyle
			sty.Rotation += math.Pi / 2
			x := c.Min.X + pp.Y.Label.TextStyle.Height(pp.yLabel) - sty.FontExtents().Descent
			dc.FillText(sty, vg.Point{X: x, Y: (data.Min.Y + data.Max.Y) / 2}, pp.yLabel)
		}
		if pp.title != "" {
			top := vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: data.Max.Y + vg.Millimeter*2}
			sty := titleStyle(12)
			sty.YAlign = draw.YBottom
			dc.FillText(sty, top, pp.title)
		}
		pp.breaks(data)
		lc := c
		lc.Max.Y = c.Min.Y - vg.Millimeter*2
		lc.Min.Y = lc.Max.Y - legendH + vg.Millimeter*2
		lc.Min.X += vg.Millimeter * 8
		pp.legend.Draw(lc)
	}
}

// titleStyle is the style of the figure's (size 14) and panels' (12) titles.
func titleStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// panelPlot is a panel's gonum plot, its title (drawn by the figure, at
// one height for all panels), its legend (drawn below the panel, outside
// the data: it hides no curve whatever their shape), and where its log axes break between zero and the positive
// values (0: no break).
type panelPlot struct {
	*plot.Plot
	title, yLabel  string
	legend         plot.Legend
	xBreak, yBreak float64
}

// breaks draws a break mark (a gap and two slashes) across each log axis
// that shows zero, between zero and the positive values.
func (pp *panelPlot) breaks(data draw.Canvas) {
	trX, trY := pp.Transforms(&data)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	gap, d := vg.Points(3), vg.Points(4)
	if pp.xBreak > 0 {
		x, y := trX(pp.xBreak), data.Min.Y-pp.X.Padding
		data.SetColor(color.White)
		data.Fill(vg.Rectangle{Min: vg.Point{X: x - gap, Y: y - d}, Max: vg.Point{X: x + gap, Y: y + d}}.Path())
		for _, dx := range []vg.Length{-gap, gap} {
			data.StrokeLine2(ls, x+dx-d/2, y-d, x+dx+d/2, y+d)
		}
	}
	if pp.yBreak > 0 {
		x, y := data.Min.X-pp.Y.Padding, trY(pp.yBreak)
		data.SetColor(color.White)
		data.Fill(vg.Rectangle{Min: vg.Point{X: x - d, Y: y - gap}, Max: vg.Point{X: x + d, Y: y + gap}}.Path())
		for _, dy := range []vg.Length{-gap, gap} {
			data.StrokeLine2(ls, x-d, y+dy-d/2, x+d, y+dy+d/2)
		}
	}
}

// plot builds the gonum plot of one panel: a histogram of litmus final
// states, grouped bars for a table (every row at one x), else curves.
func (p Panel) plot(rows []Row, refs []Reference, bands []Band) (*panelPlot, error) {
	pl := plot.New()
	pl.Legend.Top, pl.Legend.Left = true, true
	grid := plotter.NewGrid()
	pl.Add(grid)
	sel, prefs, series := p.selectRows(rows, refs)
	p.labels(pl, sel)
	pp := &panelPlot{Plot: pl, title: p.Title}
	switch {
	case states(p, sel):
		if err := p.bars(pl, sel, series, rows); err != nil {
			return nil, err
		}
		categorical(pl, grid)
	case table(sel):
		if err := p.tableBars(pl, sel, prefs, series); err != nil {
			return nil, err
		}
		categorical(pl, grid)
	default:
		if err := p.curves(pp, sel, prefs, series, bands); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// categorical sets a panel of named categories (bars) on its axes: the
// x range one bar's slot wider on each side than the bars' centres, the y
// axis at the data's edge, so that the horizontal gridlines start at the
// axis; no vertical gridlines (the categories have no scale).
func categorical(pl *plot.Plot, grid *plotter.Grid) {
	if ticks, ok := pl.X.Tick.Marker.(plot.ConstantTicks); ok && len(ticks) > 0 {
		pl.X.Min, pl.X.Max = ticks[0].Value-0.5, ticks[len(ticks)-1].Value+0.5
	}
	pl.Y.Padding = 0
	grid.Vertical.Color = nil
}

// curves draws the rows of each series as a line with points, the
// paper's points and the bands. On a log axis, zero is drawn at the
// axis's start, below a break mark.
func (p Panel) curves(pp *panelPlot, sel []Row, prefs []Reference, series []string, bands []Band) error {
	pl := pp.Plot
	z := p.zeros(sel, prefs)
	same := identical(p, z, sel, series)
	for i, s := range series {
		k := p.style(s, i)
		col := seriesColor(k.Color)
		label := s
		if o := same[s]; o != "" {
			label = s + " (= " + o + ")"
		}
		if err := p.curve(pl, z, k.Mark, s, label, col, sel); err != nil {
			return err
		}
		if err := p.paperPoints(pl, z, k.Mark, s, col, prefs); err != nil {
			return err
		}
	}
	if p.XLog {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, zeroTicks{z.x, powerTicks{}}
		pl.X.Tick.Label.Handler = newPowerText()
	}
	if p.YLog {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, zeroTicks{z.y, powerTicks{}}
		pl.Y.Tick.Label.Handler = newPowerText()
	}
	if err := p.bands(pl, z, sel, series, bands); err != nil {
		return err
	}
	fixRange(&pl.X, p.XLog, p.XMin, p.XMax)
	fixRange(&pl.Y, p.YLog, 0, 0)
	pad(&pl.X, p.XLog)
	pad(&pl.Y, p.YLog)
	pp.xBreak, pp.yBreak = z.x*zeroGap, z.y*zeroGap
	return nil
}

// logZero says where zero is drawn on each log axis of a panel (0: the
// axis is linear, or no value on it is zero).
type logZero struct{ x, y float64 }

// zeroGap is the factor between zero's position on a log axis and the
// break mark, and between the break mark and the least positive value.
const zeroGap = 2

// zeros places zero on the panel's log axes: a factor zeroGap² below the
// least positive value drawn (at 1 if every value is zero).
func (p Panel) zeros(sel []Row, prefs []Reference) logZero {
	var xs, ys []float64
	for _, r := range sel {
		if p.keep(r.X, r.Value) {
			xs, ys = append(xs, r.X), append(ys, r.Value)
		}
	}
	for _, r := range prefs {
		if p.keep(r.X, r.Value) {
			xs, ys = append(xs, r.X), append(ys, r.Value)
		}
	}
	at := func(vs []float64, log bool) float64 {
		if !log || !slices.Contains(vs, 0) {
			return 0
		}
		least := math.Inf(1)
		for _, v := range vs {
			if v > 0 {
				least = math.Min(least, v)
			}
		}
		if math.IsInf(least, 1) {
			return 1
		}
		return least / (zeroGap * zeroGap)
	}
	return logZero{at(xs, p.XLog), at(ys, p.YLog)}
}

// at is where (x, y) is drawn: zero on a log axis at its place.
func (z logZero) at(x, y float64) plotter.XY {
	if x == 0 && z.x > 0 {
		x = z.x
	}
	if y == 0 && z.y > 0 {
		y = z.y
	}
	return plotter.XY{X: x, Y: y}
}

// zeroTicks are the ticks of inner on a log axis that shows zero at at
// (0: none): "0" there, and inner's ticks beyond the break mark.
type zeroTicks struct {
	at    float64
	inner plot.Ticker
}

// Ticks returns the ticks between min and max.
func (z zeroTicks) Ticks(min, max float64) []plot.Tick {
	if z.at <= 0 {
		return z.inner.Ticks(min, max)
	}
	ticks := []plot.Tick{{Value: z.at, Label: "0"}}
	for _, t := range z.inner.Ticks(z.at*zeroGap*1.2, max) {
		ticks = append(ticks, t)
	}
	return ticks
}

// identical maps each series whose drawn points are exactly those of a
// series drawn after it (and so hidden under it) to the last such series.
func identical(p Panel, z logZero, sel []Row, series []string) map[string]string {
	pts := make([]plotter.XYs, len(series))
	for i, s := range series {
		pts[i] = p.points(z, s, sel)
	}
	same := map[string]string{}
	for i := range series {
		for j := len(series) - 1; j > i; j-- {
			if len(pts[i]) > 0 && slices.Equal(pts[i], pts[j]) {
				same[series[i]] = series[j]
				break
			}
		}
	}
	return same
}

// points returns the points of series s drawn on the panel, sorted by x.
func (p Panel) points(z logZero, s string, sel []Row) plotter.XYs {
	var xys plotter.XYs
	for _, r := range sel {
		if r.Series == s && p.keep(r.X, r.Value) {
			xys = append(xys, z.at(r.X, r.Value))
		}
	}
	slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return xys
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

// curve draws series s (the i-th) as a line with points, in colour col,
// labelled label in the legend.
func (p Panel) curve(pl *plot.Plot, z logZero, i int, s, label string, col color.Color, sel []Row) error {
	xys := p.points(z, s, sel)
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
	pl.Legend.Add(label, line, points)
	return nil
}

// paperPoints draws the references of series s (the i-th) as large
// points in its colour, labelled with their sources.
func (p Panel) paperPoints(pl *plot.Plot, z logZero, i int, s string, col color.Color, prefs []Reference) error {
	var rxys plotter.XYs
	var srcs []string
	for _, r := range prefs {
		if r.Series == s && p.keep(r.X, r.Value) {
			rxys = append(rxys, z.at(r.X, r.Value))
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
func (p Panel) bands(pl *plot.Plot, z logZero, sel []Row, series []string, bands []Band) error {
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
		line, err := plotter.NewLine(plotter.XYs{z.at(x0, b.Value), z.at(x1, b.Value)})
		if err != nil {
			return fmt.Errorf("band of %q: %w", b.Series, err)
		}
		line.Color = seriesColor(p.style(b.Series, i).Color)
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
// also labels 2 and 5 times the powers. Over more than maxPowers decades,
// only every n-th power is labelled and the others are minor ticks.
type powerTicks struct{}

// maxPowers is the most powers of ten labelled on a log axis.
const maxPowers = 13

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
	every := (majors + maxPowers - 1) / maxPowers
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		base := math.Pow(10, float64(k))
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < min || v > max || (every > 1 && m > 1) {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case m == 1 && k%every == 0:
				t.Label = power(k)
			case majors < 2 && (m == 2 || m == 5):
				t.Label = fmt.Sprintf("%d·%s", m, power(k))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// states reports whether the panel's x values are final states of a
// litmus test (x_name "state_r0r1"...): categories, not numbers.
func states(p Panel, sel []Row) bool {
	return len(sel) > 0 && strings.HasPrefix(sel[0].XName, "state_")
}

// NoFinalState is the x of the "count" row of the runs of a litmus test
// that ended without a final state (deadlock, livelock or a limit).
const NoFinalState = -1

// bars draws a panel of categorical x (litmus final states) as grouped
// bars, one group per state (labelled with its register values, "01",
// StateLabel), one bar per series, each labelled with its count; states
// no series reached are left out, and the runs with no final state (x
// NoFinalState) are the last group. The states the test's condition asks
// about (rows of metric Witness among all) say "(asked)" under their group
// and their bars are outlined.
func (p Panel) bars(pl *plot.Plot, sel []Row, series []string, all []Row) error {
	xname := sel[0].XName
	var xs []float64
	for _, r := range sel {
		if !slices.Contains(xs, r.X) && !math.IsNaN(r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.SortFunc(xs, func(a, b float64) int { // no final state last
		last := func(x float64) int {
			if x == NoFinalState {
				return 1
			}
			return 0
		}
		return cmp.Or(cmp.Compare(last(a), last(b)), cmp.Compare(a, b))
	})
	asked := map[float64]bool{}
	for _, r := range all {
		if r.Metric == Witness && r.XName == xname && r.Value != 0 {
			asked[r.X] = true
		}
	}
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = StateLabel(xname, x)
		if asked[x] {
			names[i] += " (asked)"
		}
	}
	width := vg.Points(40) / vg.Length(max(1, len(series)))
	var labels plotter.XYLabels
	var offsets []vg.Length
	top := 0.0
	for i, s := range series {
		vals := make(plotter.Values, len(xs))
		got := make([]bool, len(xs))
		for _, r := range sel {
			if r.Series == s {
				j := slices.Index(xs, r.X)
				vals[j], got[j] = r.Value, true
			}
		}
		off := width * (vg.Length(i) - vg.Length(len(series)-1)/2)
		first := true
		for j := range xs {
			if !got[j] {
				continue
			}
			b, err := plotter.NewBarChart(plotter.Values{vals[j]}, width)
			if err != nil {
				return fmt.Errorf("series %q: %w", s, err)
			}
			b.XMin = float64(j)
			b.Color = seriesColor(p.style(s, i).Color)
			b.LineStyle.Width = 0
			if asked[xs[j]] {
				b.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}
			}
			b.Offset = off
			pl.Add(b)
			if first {
				thumb := *b // the legend's, never outlined
				thumb.LineStyle.Width = 0
				pl.Legend.Add(s, &thumb)
				first = false
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(j), Y: vals[j]})
			labels.Labels = append(labels.Labels, Short(vals[j]))
			offsets = append(offsets, off)
			top = math.Max(top, vals[j])
		}
	}
	if err := barLabels(pl, labels, offsets, len(series)); err != nil {
		return err
	}
	pl.NominalX(names...)
	if p.XLabel == "" {
		pl.X.Label.Text = "final state (" + strings.TrimPrefix(xname, "state_") + ")"
	}
	pl.Y.Min, pl.Y.Max = 0, roomAbove(top)
	pl.Y.Tick.Marker = plainTicks{}
	return nil
}

// plainTicks are gonum's default ticks labelled as the numbers are
// written elsewhere (750, not 750.00).
type plainTicks struct{}

// Ticks returns the default ticks between min and max, relabelled.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// roomAbove is the top of a bar panel's y axis whose tallest bar is top:
// 12 % above it for the labels, rounded up to two significant digits so
// that the axis's ticks read as whole numbers.
func roomAbove(top float64) float64 {
	if top <= 0 {
		return 1
	}
	v := top * 1.12
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Ceil(v/p) * p
}

// Witness is the metric of a litmus test's rows that mark the final
// states its condition asks about (value 1, x the state).
const Witness = "witness"

// StateLabel writes the final state x of a litmus test (x_name
// "state_r0r1") as its register values, one digit each ("01"; each
// register as many digits as the widest needs is not known here, so a
// code of more digits is written whole), or "no final state".
func StateLabel(xname string, x float64) string {
	if x == NoFinalState {
		return "no final state"
	}
	regs := strings.Count(strings.TrimPrefix(xname, "state_"), "r")
	return fmt.Sprintf("%0*d", regs, int64(x))
}

// barLabels writes each bar's value above it: labels at the bars'
// centres, shifted by their offsets within the group (n bars a group).
func barLabels(pl *plot.Plot, labels plotter.XYLabels, offsets []vg.Length, n int) error {
	if len(labels.XYs) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("value labels: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		if n > 2 {
			l.TextStyle[i].Font.Size = vg.Points(8)
		}
	}
	l.Offset.Y = vg.Points(3)
	pl.Add(&offsetLabels{Labels: l, dx: offsets})
	return nil
}

// offsetLabels are labels each shifted along x by its own length (a bar's
// offset within its group).
type offsetLabels struct {
	*plotter.Labels
	dx []vg.Length
}

// Plot draws each label at its point shifted by its offset.
func (o *offsetLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, xy := range o.XYs {
		pt := vg.Point{X: trX(xy.X) + o.dx[i] + o.Offset.X, Y: trY(xy.Y) + o.Offset.Y}
		if !c.Contains(pt) {
			continue
		}
		c.FillText(o.TextStyle[i], pt, o.Labels.Labels[i])
	}
}

// table reports whether the rows are a table's column: all at one x (a
// single value too: a bar reads better than a lone point).
func table(sel []Row) bool {
	if len(sel) < 1 {
		return false
	}
	for _, r := range sel {
		if r.X != sel[0].X {
			return false
		}
	}
	return true
}

// tableBars draws a table's column (every row at one x) as bars, one per
// series, named below it and labelled with its value; the paper's values
// are marked on the bar of their series by a black line across it, which
// the legend names once.
// Seconds below one are drawn in ms or µs (timeScale), and the y axis is
// labelled with the panel's words (its title) and the unit.
func (p Panel) tableBars(pl *plot.Plot, sel []Row, prefs []Reference, series []string) error {
	x := sel[0].X
	unit, f := timeScale(sel, prefs)
	width := min(vg.Points(48), panelWidth*0.6/vg.Length(len(series)))
	var labels plotter.XYLabels
	var mark *plotter.Scatter
	var allSrcs []string
	top := 0.0
	for i, s := range series {
		v, ok := 0.0, false
		for _, r := range sel {
			if r.Series == s && !math.IsNaN(r.Value) && !math.IsInf(r.Value, 0) {
				v, ok = r.Value*f, true
			}
		}
		col := seriesColor(p.style(s, i).Color)
		if ok {
			b, err := plotter.NewBarChart(plotter.Values{v}, width)
			if err != nil {
				return fmt.Errorf("series %q: %w", s, err)
			}
			b.XMin = float64(i)
			b.Color = col
			b.LineStyle.Width = 0
			pl.Add(b)
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: v})
			labels.Labels = append(labels.Labels, short3(v))
			top = math.Max(top, v)
		}
		var rxys plotter.XYs
		var srcs []string
		for _, r := range prefs {
			if r.Series == s && r.X == x {
				rxys = append(rxys, plotter.XY{X: float64(i), Y: r.Value * f})
				top = math.Max(top, r.Value*f)
				if src := shortSource(r.Source); src != "" && !slices.Contains(srcs, src) {
					srcs = append(srcs, src)
				}
			}
		}
		if len(rxys) > 0 {
			sc, err := plotter.NewScatter(rxys)
			if err != nil {
				return fmt.Errorf("references of %q: %w", s, err)
			}
			sc.Color = color.Black
			sc.Radius = width / 2
			sc.Shape = barMark{}
			pl.Add(sc)
			if mark == nil {
				thumb := *sc
				thumb.Radius = vg.Points(5) // within the legend's thumbnail
				mark = &thumb
			}
			for _, src := range srcs {
				if !slices.Contains(allSrcs, src) {
					allSrcs = append(allSrcs, src)
				}
			}
		}
	}
	if mark != nil { // one entry: the mark is black on every bar
		label := "paper"
		if len(allSrcs) > 0 {
			label = "paper (" + strings.Join(allSrcs, ", ") + ")"
		}
		pl.Legend.Add(label, mark)
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("value labels: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign = draw.XCenter
		}
		l.Offset.Y = vg.Points(3)
		pl.Add(l)
	}
	pl.NominalX(series...)
	pl.X.Label.Text += " = " + FormatFloat(x)
	if p.YLabel == "" {
		words := strings.TrimSpace(trailingParen.ReplaceAllString(p.Title, "")) // its unit is said below
		if words == "" {
			words = p.Metric
		}
		pl.Y.Label.Text = words
		if unit != "" {
			pl.Y.Label.Text += " (" + unit + ")"
		}
	}
	pl.Y.Min, pl.Y.Max = 0, roomAbove(top)
	pl.Y.Tick.Marker = plainTicks{}
	return nil
}

// trailingParen is a parenthesised ending, such as a title's unit.
var trailingParen = regexp.MustCompile(`\s*\([^()]*\)\s*$`)

// timeScale is the unit a table of times is drawn in and the factor
// from the rows' unit: seconds below a millisecond in µs, below a second
// in ms; any other unit as it is.
func timeScale(sel []Row, prefs []Reference) (string, float64) {
	unit := sel[0].Unit
	if unit != "s" {
		return unit, 1
	}
	top := 0.0
	for _, r := range sel {
		if !math.IsNaN(r.Value) && !math.IsInf(r.Value, 0) {
			top = math.Max(top, math.Abs(r.Value))
		}
	}
	for _, r := range prefs {
		top = math.Max(top, math.Abs(r.Value))
	}
	switch {
	case top < 1e-3:
		return "µs", 1e6
	case top < 1:
		return "ms", 1e3
	}
	return unit, 1
}

// barMark marks a paper's value on a bar: a thick black line across it
// (the glyph's radius is half the bar's width).
type barMark struct{}

// DrawGlyph draws the mark centred at pt.
func (barMark) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(2.5)}
	c.StrokeLine2(ls, pt.X-sty.Radius, pt.Y, pt.X+sty.Radius, pt.Y)
}

// short3 formats v to three significant digits, for labels on bars.
func short3(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

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
	case p.XLog && x < 0, p.YLog && y < 0:
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

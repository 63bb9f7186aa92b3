package report

import (
	"bufio"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"

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
	for i, p := range f.Panels {
		pl, err := p.plot(rows, refs, f.Bands)
		if err != nil {
			return fmt.Errorf("report: figure %q, panel %d (%s): %w", f.Title, i, p.Metric, err)
		}
		plots[0] = append(plots[0], pl)
	}
	w := panelWidth * vg.Length(len(f.Panels))
	h := panelHeight
	if f.Title != "" {
		h += titleHeight
	}

	png := vgimg.New(w, h)
	f.draw(draw.New(png), plots)
	if err := writeFile(pathWithoutExt+".png", vgimg.PngCanvas{Canvas: png}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	f.draw(draw.New(svg), plots)
	return writeFile(pathWithoutExt+".svg", svg)
}

// draw draws the title and the panels side by side on dc.
func (f Figure) draw(dc draw.Canvas, plots [][]*plot.Plot) {
	tiles := draw.Tiles{Rows: 1, Cols: len(f.Panels), PadX: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
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
		pl.Draw(canvases[0][i])
	}
}

// plot builds the gonum plot of one panel.
func (p Panel) plot(rows []Row, refs []Reference, bands []Band) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	// Top left: empty in latency and bandwidth against size plots.
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.XOffs, pl.Legend.YOffs = vg.Millimeter*2, -vg.Millimeter*2
	pl.Add(plotter.NewGrid())

	var sel []Row
	for _, r := range rows {
		if r.Metric == p.Metric && (p.XName == "" || r.XName == p.XName) {
			sel = append(sel, r)
		}
	}
	var prefs []Reference
	for _, r := range refs {
		if r.Metric == p.Metric {
			prefs = append(prefs, r)
		}
	}
	series := p.Series
	if len(series) == 0 {
		series = Results(sel).Series()
		for _, r := range prefs {
			if !slices.Contains(series, r.Series) {
				series = append(series, r.Series)
			}
		}
	}

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

	for i, s := range series {
		col := plotutil.DarkColors[i%len(plotutil.DarkColors)]
		var xys plotter.XYs
		for _, r := range sel {
			if r.Series == s && p.keep(r.X, r.Value) {
				xys = append(xys, plotter.XY{X: r.X, Y: r.Value})
			}
		}
		slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		if len(xys) > 0 {
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s, err)
			}
			line.Color = col
			points.Color = col
			points.Shape = seriesGlyph(i)
			pl.Add(line, points)
			pl.Legend.Add(s, line, points)
		}

		var rxys plotter.XYs
		for _, r := range prefs {
			if r.Series == s && p.keep(r.X, r.Value) {
				rxys = append(rxys, plotter.XY{X: r.X, Y: r.Value})
			}
		}
		if len(rxys) > 0 {
			sc, err := plotter.NewScatter(rxys)
			if err != nil {
				return nil, fmt.Errorf("references of %q: %w", s, err)
			}
			sc.Color = col
			sc.Radius = vg.Points(4)
			sc.Shape = refGlyph(i)
			pl.Add(sc)
			pl.Legend.Add(s+" (paper)", sc)
		}
	}

	if p.XLog {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if p.YLog {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if err := p.bands(pl, sel, series, bands); err != nil {
		return nil, err
	}
	fixRange(&pl.X, p.XLog, p.XMin, p.XMax)
	fixRange(&pl.Y, p.YLog, 0, 0)
	return pl, nil
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

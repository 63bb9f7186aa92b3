package report

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// matrixGrid is a square matrix as plotter.GridXYZ: cell (c, r) is
// m[r][c], row 0 at the top as a matrix reads.
type matrixGrid [][]float64

func (g matrixGrid) Dims() (c, r int)   { return len(g), len(g) }
func (g matrixGrid) Z(c, r int) float64 { return g[len(g)-1-r][c] }
func (g matrixGrid) X(c int) float64    { return float64(c) }
func (g matrixGrid) Y(r int) float64    { return float64(r) }

// Heatmap draws a square matrix (m[i][j]: row i, column j) as a heat map
// and returns it as PNG (one raster image: a 1,024-rank matrix has a
// million cells): the communication matrix of a trace replay (bytes rank
// i sent rank j), rows top to bottom. The colour scale
// runs from zero (white) to the matrix's largest value; its range is in
// the title.
func Heatmap(title, xlabel, ylabel, unit string, m [][]float64) ([]byte, error) {
	n := len(m)
	if n == 0 {
		return nil, fmt.Errorf("heatmap: empty matrix")
	}
	hi := 0.0
	for _, row := range m {
		if len(row) != n {
			return nil, fmt.Errorf("heatmap: matrix is not square")
		}
		for _, v := range row {
			hi = max(hi, v)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (0 to %s %s)", title, FormatFloat(hi), unit)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	h := plotter.NewHeatMap(matrixGrid(m), whiteToRed(64))
	h.Min, h.Max = 0, max(hi, 1)
	h.Rasterized = true
	p.Add(h)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	ticks := func(flip bool) plot.TickerFunc {
		return func(lo, hi float64) []plot.Tick {
			step := max(1, n/8)
			var out []plot.Tick
			for i := 0; i < n; i += step {
				y := float64(i)
				if flip {
					y = float64(n - 1 - i)
				}
				out = append(out, plot.Tick{Value: y, Label: fmt.Sprint(i)})
			}
			return out
		}
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(false), ticks(true)
	w, err := p.WriterTo(5*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// whiteToRed is n colours from white (nothing) to dark red (the most).
func whiteToRed(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		f := float64(i) / float64(n-1)
		cs[i] = color.RGBA{R: uint8(255 - 100*f), G: uint8(255 * (1 - f)), B: uint8(255 * (1 - f)), A: 255}
	}
	return colors(cs)
}

type colors []color.Color

func (c colors) Colors() []color.Color { return c }

package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"
)

// recorded is a recording canvas of a figure's size.
type recorded struct {
	recorder.Canvas
	w, h vg.Length
}

func (r *recorded) Size() (vg.Length, vg.Length) { return r.w, r.h }

// record draws f and returns every string drawn, with its font.
func record(t *testing.T, f Figure, rows []Row, refs []Reference) []*recorder.FillString {
	t.Helper()
	w, h, draw, err := f.layout(rows, refs)
	if err != nil {
		t.Fatal(err)
	}
	c := &recorded{w: w, h: h}
	draw(c)
	var out []*recorder.FillString
	for _, a := range c.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			out = append(out, fs)
		}
	}
	return out
}

// trustFigures are figures with what a paper reader misread: powers of
// ten of every sign and digit, zero on log axes, identical series, a
// table, litmus states with failed runs.
func trustFigures() map[string]struct {
	fig  Figure
	rows Results
	refs []Reference
} {
	var wide, same, tab, st Results
	for k := -3; k <= 9; k++ {
		v := 1.0
		for range k + 3 {
			v *= 10
		}
		wide.Add("s", "bytes", v/1000, "t", v/1000, "us")
	}
	for _, x := range []float64{1, 10, 100} {
		same.Add("sync-mpi", "bytes", x, "bw", x/2, "MB/s")
		same.Add("async-mpi", "bytes", x, "bw", x/2, "MB/s")
		same.Add("shmem", "bytes", x, "bw", x, "MB/s")
	}
	for i, s := range []string{"sync-aclmpl", "async-aclmpl", "shmem"} {
		tab.Add(s, "bytes", 8, "latency_us", []float64{4.64, 7.18, 1.51}[i], "us")
	}
	st.Add("MP", "state_r0r1", 1, "count", 60, "runs")
	st.Add("MP", "state_r0r1", 10, "count", 2, "runs")
	st.Add("MP", "state_r0r1", NoFinalState, "count", 38, "runs")
	st.Add("MP", "state_r0r1", 10, Witness, 1, "bool")
	var secs, styled Results
	for i, s := range []string{"sync-aclmpl", "sync-mpi"} {
		secs.Add(s, "bytes", 1024, "bcast_s", []float64{7.08e-5, 1.17e-4}[i], "s")
	}
	for _, x := range []float64{1, 10, 100} {
		styled.Add("t3d aclmpl", "bytes", x, "t3d", x, "us")
		styled.Add("t3d armci", "bytes", x, "t3d", 2*x, "us")
		styled.Add("sx4 armci", "bytes", x, "sx4", 3*x, "us")
	}
	type fig = struct {
		fig  Figure
		rows Results
		refs []Reference
	}
	return map[string]fig{
		"powers": {Figure{Title: "powers", Panels: []Panel{{Title: "t", Metric: "t", XLog: true, YLog: true}}}, wide, nil},
		"zero": {sx4Figure(), sampleResults(), []Reference{
			{Series: "ch_lfshmem", Metric: "latency", X: 0, Value: 9.4, Unit: "us", Source: "Figure 3"},
			{Series: "ch_shmem, semop", Metric: "latency", X: 0, Value: 4.5, Unit: "us", Source: "Figure 4"}}},
		"same":   {Figure{Title: "same", Panels: []Panel{{Title: "bw", Metric: "bw", XLog: true, YLog: true}}}, same, nil},
		"table":  {Figure{Title: "Table 1", Panels: []Panel{{Title: "latency", Metric: "latency_us", XLabel: "message size (bytes)"}}}, tab, []Reference{{Series: "sync-aclmpl", Metric: "latency_us", X: 8, Value: 4.5, Source: "section 4.1"}}},
		"states": {Figure{Title: "MP+spin", Panels: []Panel{{Title: "final states", Metric: "count"}}}, st, nil},
		"seconds": {Figure{Title: "Table 2", Panels: []Panel{{Title: "broadcast", Metric: "bcast_s"}}}, secs,
			[]Reference{{Series: "sync-mpi", Metric: "bcast_s", X: 1024, Value: 1e-4, Source: "Table 2"}}},
		// One style per stack on every panel: armci is the second style on
		// both machines' panels, though it is the first series of sx4's.
		"styles": {Figure{Title: "styles", Styles: map[string]Style{"t3d aclmpl": {0, 0}, "t3d armci": {1, 1}, "sx4 armci": {1, 1}},
			Panels: []Panel{{Title: "t3d", Metric: "t3d"}, {Title: "sx4", Metric: "sx4"}}}, styled, nil},
	}
}

// TestEveryGlyphInFont: every character of every string drawn on a
// figure (ticks, labels, legends, titles) exists in the font it is drawn
// with; a missing glyph is drawn as nothing, and 10⁻¹ reads 10¹.
func TestEveryGlyphInFont(t *testing.T) {
	cache := plot.DefaultTextHandler.Cache()
	var buf sfnt.Buffer
	for name, c := range trustFigures() {
		t.Run(name, func(t *testing.T) {
			for _, fs := range record(t, c.fig, c.rows, c.refs) {
				face := cache.Lookup(fs.Font, fs.Size)
				for _, r := range fs.String {
					if i, err := face.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
						t.Errorf("%q (%s): %q (%U) is not in the font", fs.String, face.Name(), r, r)
					}
				}
			}
		})
	}
}

// TestFigureReadsRight checks what a reader of each figure relies on.
func TestFigureReadsRight(t *testing.T) {
	figs := trustFigures()
	strs := func(name string) []string {
		c := figs[name]
		var out []string
		for _, fs := range record(t, c.fig, c.rows, c.refs) {
			out = append(out, fs.String)
		}
		return out
	}
	has := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%q not drawn; drawn: %q", w, got)
			}
		}
	}
	t.Run("powers: 10 and the exponent, minus included", func(t *testing.T) {
		has(t, strs("powers"), "10", "−3", "−1", "0", "1", "9")
	})
	t.Run("zero on a log axis: tick 0 and the paper's zero-byte points", func(t *testing.T) {
		got := strs("zero")
		has(t, got, "0", "ch_lfshmem (paper, Figure 3)", "ch_shmem, semop (paper, Figure 4)")
	})
	t.Run("identical series say so", func(t *testing.T) {
		got := strs("same")
		has(t, got, "sync-mpi (= async-mpi)", "async-mpi", "shmem")
	})
	t.Run("a table: bars named by series, with values", func(t *testing.T) {
		has(t, strs("table"), "sync-aclmpl", "async-aclmpl", "shmem", "4.64", "7.18", "1.51",
			"message size (bytes) = 8", "paper (section 4.1)")
	})
	t.Run("litmus: runs without a final state are a bar, every bar has its count, the asked state says so", func(t *testing.T) {
		has(t, strs("states"), "01", "10 (asked)", "no final state", "60", "2", "38")
	})
	t.Run("a table of seconds: in µs, labelled in words, the paper's mark named once", func(t *testing.T) {
		has(t, strs("seconds"), "broadcast (µs)", "70.8", "117", "paper (Table 2)")
	})
}

// TestStylesByName: a series keeps the style Figure.Styles gives it on
// every panel; a series it does not name takes its place in the panel.
func TestStylesByName(t *testing.T) {
	p := Panel{styles: map[string]Style{"t3d armci": {1, 0}, "sx4 armci": {1, 0}}}
	for _, c := range []struct {
		s    string
		i    int
		want Style
	}{{"sx4 armci", 0, Style{1, 0}}, {"t3d armci", 1, Style{1, 0}}, {"other", 4, Style{4, 4}}} {
		if got := p.style(c.s, c.i); got != c.want {
			t.Errorf("style(%q, %d) = %v, want %v", c.s, c.i, got, c.want)
		}
	}
	if seriesColor(1) != seriesColor(1+len(plotutil.DarkColors)) {
		t.Error("colours do not cycle")
	}
}

// TestPanelTitlesAligned: the panels' titles are drawn at one height,
// whatever their axes and legends.
func TestPanelTitlesAligned(t *testing.T) {
	f := Figure{Title: "fig", Panels: []Panel{
		{Title: "Short messages", Metric: "latency", YLog: true, YLabel: "time (us), half round trip, a long label"},
		{Title: "Bandwidth", Metric: "bandwidth", XLog: true},
	}}
	var ys []vg.Length
	for _, fs := range record(t, f, sampleResults(), nil) {
		if fs.String == "Short messages" || fs.String == "Bandwidth" {
			ys = append(ys, fs.Point.Y)
		}
	}
	if len(ys) != 2 || ys[0] != ys[1] {
		t.Errorf("panel titles at heights %v, want two equal", ys)
	}
}

// TestTitleFits: a figure is at least as wide as its title.
func TestTitleFits(t *testing.T) {
	f := Figure{Title: "Thread-safety overhead with one thread (Figure 1 shape, on the SX-4 model)", Panels: []Panel{{Metric: "latency"}}}
	w, _, _, err := f.layout(sampleResults(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tw := titleStyle(14).Width(f.Title); w < tw {
		t.Errorf("figure %v wide, its title %v", w, tw)
	}
}

// TestFigurePNGGolden compares the PNG of a figure with log axes, zero on
// one, identical series and a table with testdata/figures/*.png (regenerate
// with go test ./report -update, and look at the images).
func TestFigurePNGGolden(t *testing.T) {
	figs := trustFigures()
	for _, name := range []string{"powers", "zero", "table", "states", "seconds", "styles"} {
		t.Run(name, func(t *testing.T) {
			c := figs[name]
			dir := t.TempDir()
			if err := c.fig.Save(filepath.Join(dir, "f"), c.rows, c.refs); err != nil {
				t.Fatal(err)
			}
			png := readFile(t, filepath.Join(dir, "f.png"))
			golden := filepath.Join("testdata", "figures", name+".png")
			if *update {
				if err := os.WriteFile(golden, png, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(png, readFile(t, golden)) {
				t.Errorf("%s differs from %s (go test ./report -update, then look at the image)", name, golden)
			}
		})
	}
}

// TestOneValueIsABar: a panel with one value (one series at one x, as
// simrun explore --series draws) is a bar, not a lone point.
func TestOneValueIsABar(t *testing.T) {
	one := []Row{{Series: "lock-per-call", XName: "bound", X: 3, Metric: "failing", Value: 29, Unit: "count"}}
	if !table(one) || table(nil) {
		t.Error("one value is not drawn as a table's bar")
	}
}

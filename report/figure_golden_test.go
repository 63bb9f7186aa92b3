package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestFigureGolden compares the SVG of a few figures with
// testdata/figures/*.svg (as gonum/plot's own examples are tested;
// regenerate with go test ./report -update and look at the images), and
// checks what a paper reader relies on: log axes labelled with powers of
// ten only (10, then the exponent raised), zero on a log axis labelled 0, the paper's points labelled with their figure, litmus states
// as bars on a categorical axis, the legend below the data.
func TestFigureGolden(t *testing.T) {
	rows := sampleResults()
	refs := []Reference{
		{Series: "ch_lfshmem", Metric: "latency", X: 8, Value: 3.6, Unit: "us", Source: "papers/mpich-sx4.txt, section 7, Figure 6: 'about 3.6'"},
		{Series: "ch_lfshmem", Metric: "bandwidth", X: 1 << 20, Value: 400, Unit: "MB/s", Source: "Table 1"},
	}
	var states Results
	for i, v := range []float64{513, 328, 18, 141} {
		states.Add("MP-pso", "state_r0r1", []float64{0, 1, 10, 11}[i], "count", v, "runs")
	}
	for i, v := range []float64{259, 704, 37} {
		states.Add("MP+fences-pso", "state_r0r1", []float64{0, 1, 11}[i], "count", v, "runs")
	}
	for _, c := range []struct {
		name string
		fig  Figure
		rows []Row
		refs []Reference
		want []string // in the SVG
		not  []string
	}{
		{"pingpong", sx4Figure(), rows, refs,
			[]string{">10<", ">3<", ">6<", ">0<", "ch_lfshmem (paper, section 7 Figure 6)", "ch_lfshmem (paper, Table 1)"},
			[]string{"1e+", "100000<", "⁰", "⁻"}},
		{"litmus-states", Figure{Title: "MP", Panels: []Panel{{Title: "final states", Metric: "count"}}}, states, nil,
			[]string{">00<", ">01<", ">10<", ">11<", "final state (r0r1)"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.fig.Save(filepath.Join(dir, "f"), c.rows, c.refs); err != nil {
				t.Fatal(err)
			}
			svg := readFile(t, filepath.Join(dir, "f.svg"))
			for _, w := range c.want {
				if !bytes.Contains(svg, []byte(w)) {
					t.Errorf("%q missing from the SVG", w)
				}
			}
			for _, w := range c.not {
				if bytes.Contains(svg, []byte(w)) {
					t.Errorf("%q in the SVG", w)
				}
			}
			golden := filepath.Join("testdata", "figures", c.name+".svg")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, svg, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(svg, readFile(t, golden)) {
				t.Errorf("%s differs from %s (go test ./report -update, then look at the image)", c.name, golden)
			}
		})
	}
}

// TestBarsNotLines: a panel of litmus states draws bars (filled
// rectangles), not a line through the states.
func TestBarsNotLines(t *testing.T) {
	var states Results
	states.Add("MP", "state_r0r1", 1, "count", 5, "runs")
	states.Add("MP", "state_r0r1", 11, "count", 7, "runs")
	pp, err := Panel{Metric: "count"}.plot(states, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(t, pp.Plot)
	if !regexp.MustCompile(`>01<`).Match(svg) || bytes.Contains(svg, []byte(">2<")) {
		t.Errorf("states not categorical:\n%s", svg)
	}
}

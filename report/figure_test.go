package report

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
)

// sx4Figure is the layout of Figure 7 of papers/mpich-sx4.txt.
func sx4Figure() Figure {
	return Figure{
		Title: "MPICH on the SX-4: ping-pong",
		Panels: []Panel{
			{Title: "Latency", XLabel: "message size (bytes)", Metric: "latency", XLog: true, YLog: true},
			{Title: "Bandwidth", Metric: "bandwidth", XName: "bytes", XLog: true},
		},
	}
}

func TestFigureSave(t *testing.T) {
	rows := sampleResults() // includes x = 0, value = 0, +Inf and NaN
	refs := []Reference{
		{Series: "ch_lfshmem", Metric: "latency", X: 8, Value: 3.6, Unit: "us", Source: "Figure 7"},
		{Series: "ch_lfshmem", Metric: "latency", X: 0, Value: 3.4, Unit: "us"}, // x = 0 on a log axis
		{Series: "ch_lfshmem", Metric: "bandwidth", X: 1 << 20, Value: 30000, Unit: "MB/s"},
		{Series: "paper only", Metric: "bandwidth", X: 1024, Value: 50, Unit: "MB/s"},
	}
	one := Panel{Metric: "latency", XLog: true, YLog: true, Series: []string{"ch_lfshmem"}, XMin: 8, XMax: 8}
	tests := []struct {
		name string
		fig  Figure
		rows []Row
		refs []Reference
	}{
		{"sx4 figure 7", sx4Figure(), rows, refs},
		{"no rows", sx4Figure(), nil, nil},
		{"only references", sx4Figure(), nil, refs},
		{"empty panel", Figure{Panels: []Panel{{Metric: "nothing", XLog: true, YLog: true}, {Metric: "latency"}}}, rows, refs},
		{"log axes all zero", Figure{Panels: []Panel{{Metric: "z", XLog: true, YLog: true}}},
			[]Row{{Series: "s", X: 0, Metric: "z", Value: 0}, {Series: "s", X: -1, Metric: "z", Value: 5}}, nil},
		{"single point on log axes", Figure{Panels: []Panel{one}}, rows, refs},
		{"categories, linear", Figure{Title: "barrier", Panels: []Panel{{Metric: "time", XLabel: "nodes"}}},
			[]Row{{Series: "ScaMPI", X: 2, Metric: "time", Value: 4}, {Series: "ScaMPI", X: 4, Metric: "time", Value: 7},
				{Series: "ScaMPI", X: 8, Metric: "time", Value: 11}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{"a", "b"} {
				if err := tt.fig.Save(filepath.Join(dir, name), tt.rows, tt.refs); err != nil {
					t.Fatal(err)
				}
			}
			for _, ext := range []string{".png", ".svg"} {
				a := readFile(t, filepath.Join(dir, "a"+ext))
				b := readFile(t, filepath.Join(dir, "b"+ext))
				if len(a) == 0 {
					t.Errorf("%s is empty", ext)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("saving twice gives different %s bytes", ext)
				}
			}
		})
	}
}

func TestFigureSaveErrors(t *testing.T) {
	dir := t.TempDir()
	if err := (Figure{Title: "none"}).Save(filepath.Join(dir, "x"), nil, nil); err == nil {
		t.Error("a figure without panels saved without error")
	}
	if err := sx4Figure().Save(filepath.Join(dir, "missing", "x"), nil, nil); err == nil {
		t.Error("saving into a missing directory gave no error")
	}
}

func TestPanelSeriesAndLegend(t *testing.T) {
	rows := sampleResults()
	refs := []Reference{{Series: "paper only", Metric: "latency", X: 8, Value: 3}}
	tests := []struct {
		name   string
		panel  Panel
		legend []string
		bands  []Band
	}{
		{"all series", Panel{Metric: "latency", XLog: true},
			[]string{"ch_lfshmem", "ch_shmem, semop", `quoted "series"`, "paper only (paper)"}, nil},
		{"subset, given order", Panel{Metric: "latency", Series: []string{"ch_shmem, semop", "ch_lfshmem"}},
			[]string{"ch_shmem, semop", "ch_lfshmem"}, nil},
		{"log drops all-zero series", Panel{Metric: "bandwidth", YLog: true, Series: []string{"ch_lfshmem"}},
			[]string{"ch_lfshmem"}, nil},
		{"a band of the paper's prose", Panel{Metric: "latency", Series: []string{"ch_lfshmem"}},
			[]string{"ch_lfshmem (paper: > 100)"}, []Band{{Series: "ch_lfshmem", Metric: "latency", Value: 100, Above: true},
				{Series: "ch_lfshmem", Metric: "bandwidth", Value: 7, Above: true}, {Series: "ch_shmem, semop", Metric: "latency", Value: 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := tt.panel.plot(rows, refs, tt.bands)
			if err != nil {
				t.Fatal(err)
			}
			svg := renderSVG(t, pl.Plot)
			if n := bytes.Count(svg, []byte("(paper: ")); tt.bands != nil && n != 1 {
				t.Errorf("%d bands drawn, want 1 (other metric and series not drawn)", n)
			}
			for _, l := range tt.legend {
				if !bytes.Contains(svg, []byte(html.EscapeString(l))) {
					t.Errorf("legend entry %q missing", l)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func renderSVG(t *testing.T, pl *plot.Plot) []byte {
	t.Helper()
	wt, err := pl.WriterTo(panelWidth, panelHeight, "svg")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

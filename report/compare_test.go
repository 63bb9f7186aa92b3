package report

import (
	"math"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	rows := []Row{
		{Series: "s", X: 1000, Metric: "lat", Value: 11},
		{Series: "s", X: 1024, Metric: "lat", Value: 12},
		{Series: "s", X: 2048, Metric: "lat", Value: 20},
		{Series: "s", X: 1024, Metric: "bw", Value: 99},
		{Series: "t", X: 1024, Metric: "lat", Value: 50},
		{Series: "z", X: 0, Metric: "lat", Value: 0},
		{Series: "z", X: 1, Metric: "lat", Value: -2},
	}
	tests := []struct {
		name   string
		ref    Reference
		found  bool
		simX   float64
		sim    float64
		relErr float64
	}{
		{"exact", Reference{Series: "s", Metric: "lat", X: 1024, Value: 10}, true, 1024, 12, 0.2},
		{"exact beats nearer-by-tolerance", Reference{Series: "s", Metric: "lat", X: 1000, Value: 11}, true, 1000, 11, 0},
		{"nearest within tolerance", Reference{Series: "s", Metric: "lat", X: 2040, Value: 25}, true, 2048, 20, -0.2},
		{"outside tolerance", Reference{Series: "s", Metric: "lat", X: 1500, Value: 25}, false, 0, 0, 0},
		{"other metric", Reference{Series: "s", Metric: "bw", X: 1024, Value: 90}, true, 1024, 99, 0.1},
		{"other series", Reference{Series: "t", Metric: "lat", X: 1024, Value: 100}, true, 1024, 50, -0.5},
		{"unknown series", Reference{Series: "u", Metric: "lat", X: 1024, Value: 1}, false, 0, 0, 0},
		{"zero x and zero value", Reference{Series: "z", Metric: "lat", X: 0, Value: 0}, true, 0, 0, 0},
		{"zero reference, nonzero sim", Reference{Series: "z", Metric: "lat", X: 1, Value: 0}, true, 1, -2, -1},
		{"negative reference", Reference{Series: "z", Metric: "lat", X: 1, Value: -1}, true, 1, -2, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(rows, []Reference{tt.ref})
			if len(got) != 1 {
				t.Fatalf("%d comparisons, want 1", len(got))
			}
			c := got[0]
			if c.Reference != tt.ref || c.Found != tt.found || c.SimX != tt.simX || c.Simulated != tt.sim ||
				math.Abs(c.RelErr-tt.relErr) > 1e-12 {
				t.Errorf("got %+v, want found=%v simX=%v sim=%v relErr=%v", c, tt.found, tt.simX, tt.sim, tt.relErr)
			}
		})
	}
}

func TestWriteSummary(t *testing.T) {
	rows := []Row{{Series: "ch_lfshmem", X: 0, Metric: "latency", Value: 3.85, Unit: "us"}}
	refs := []Reference{
		{Series: "ch_lfshmem", Metric: "latency", X: 0, Value: 3.5, Unit: "us"},
		{Series: "ch_shmem", Metric: "bandwidth", X: 1048576, Value: 900, Unit: "MB/s"},
	}
	var b strings.Builder
	if err := WriteSummary(&b, Compare(rows, refs)); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"series      metric     x        paper  simulated  error   unit  \n" +
		"ch_lfshmem  latency    0        3.5    3.85       +10.0%  us    \n" +
		"ch_shmem    bandwidth  1048576  900    missing    -       MB/s  \n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

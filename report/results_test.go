package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// sampleResults is a small SX-4-like latency/bandwidth sweep with values
// that exercise CSV quoting and number formatting.
func sampleResults() Results {
	var r Results
	for _, s := range []struct {
		name     string
		lat, bw0 float64
	}{{"ch_lfshmem", 3.5, 40}, {"ch_shmem, semop", 1.0 / 3, 1e-7}} {
		for _, n := range []float64{0, 8, 1024, 1 << 20} {
			r.Add(s.name, "bytes", n, "latency", s.lat+n/2500, "us")
			r.Add(s.name, "bytes", n, "bandwidth", s.bw0*n/1e3, "MB/s")
		}
	}
	r.Add(`quoted "series"`, "bytes", 1e21, "latency", math.Copysign(0, -1), "")
	r.Add(`quoted "series"`, "bytes", 1e20, "latency", math.Inf(1), "")
	r.Add(`quoted "series"`, "bytes", -3, "latency", math.NaN(), "")
	return r
}

func TestWriteCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "results.csv")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("CSV differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
	// Deterministic: a second run gives the same bytes.
	var again bytes.Buffer
	if err := WriteCSV(&again, sampleResults()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("WriteCSV is not deterministic")
	}
}

func TestWriteCSV(t *testing.T) {
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{"empty", nil, "series,x_name,x,metric,value,unit\n"},
		{"plain", []Row{{"a", "bytes", 1024, "latency", 12.5, "us"}},
			"series,x_name,x,metric,value,unit\na,bytes,1024,latency,12.5,us\n"},
		{"quoting", []Row{{"a,b", `say "x"`, 1e6, "bw", 0.1, "MB/s"}},
			"series,x_name,x,metric,value,unit\n\"a,b\",\"say \"\"x\"\"\",1000000,bw,0.1,MB/s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteCSV(&b, tt.rows); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestResultsHelpers(t *testing.T) {
	r := sampleResults()
	if got, want := r.Series(), []string{"ch_lfshmem", "ch_shmem, semop", `quoted "series"`}; !slices.Equal(got, want) {
		t.Errorf("Series() = %q, want %q", got, want)
	}
	if got, want := r.Metrics(), []string{"latency", "bandwidth"}; !slices.Equal(got, want) {
		t.Errorf("Metrics() = %q, want %q", got, want)
	}
	tests := []struct {
		name string
		got  Results
		n    int
	}{
		{"ByMetric latency", r.ByMetric("latency"), 11},
		{"ByMetric none", r.ByMetric("nope"), 0},
		{"BySeries", r.BySeries("ch_lfshmem"), 8},
		{"chained", r.BySeries("ch_lfshmem").ByMetric("bandwidth"), 4},
	}
	for _, tt := range tests {
		if len(tt.got) != tt.n {
			t.Errorf("%s: %d rows, want %d", tt.name, len(tt.got), tt.n)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	rows := sampleResults()[:2]
	refs := []Reference{{Series: "ch_lfshmem", Metric: "latency", X: 0, Value: 3.6, Unit: "us", Source: "mpich-sx4.txt, Figure 7"}}
	doc := Document{
		Scenario:    map[string]any{"machine": "sx4", "stack": "mpich", "b": 1, "a": []int{1, 2}},
		Seed:        42,
		Rows:        rows,
		References:  refs,
		Comparisons: Compare(rows, refs),
	}
	var a, b bytes.Buffer
	if err := WriteJSON(&a, doc); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("WriteJSON is not deterministic")
	}
	for _, want := range []string{`"seed": 42`, `"failures": []`, `"x_name": "bytes"`, `"rel_err":`, `"machine": "sx4"`} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, a.String())
		}
	}
}

func TestWriteTable(t *testing.T) {
	var r Results
	r.Add("sync", "bytes", 1024, "MBps", 29.31234, "MB/s")
	r.Add("mpi", "bytes", 1024, "MBps", 12.1, "MB/s")
	r.Add("sync", "bytes", 8, "MBps", 3, "MB/s")
	r.Add("sync", "bytes", 8, "latency_us", 4.5, "us")
	var b strings.Builder
	if err := WriteTable(&b, r, "MBps"); err != nil {
		t.Fatal(err)
	}
	want := "MBps (MB/s) \\ bytes  8  1024\n" +
		"sync                 3  29.312\n" +
		"mpi                  -  12.1\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

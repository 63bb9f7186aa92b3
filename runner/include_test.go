package runner

import (
	"math"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/scenarios"
)

// TestCalibrationIncluded: a scenario that includes a calibration file by
// name (calibration: [NAME]) runs with its fitted values as the defaults
// of the machine or stack they fit; a value the scenario sets wins; an
// unknown name is an error at its line.
func TestCalibrationIncluded(t *testing.T) {
	const src = `name: inc
calibration: [t3d-put-startup]
machine: {name: t3d}
stack: {name: aclmpl}
workload: {name: word-latency, params: {pes: [2]}}
series:
  - name: fitted
  - name: own
    machine: {params: {put_startup_ns: 830}}
`
	s, err := scenarios.Parse("inc.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Specs(all.Default(), s)
	if err != nil {
		t.Fatal(err)
	}
	lat := map[string]float64{}
	for _, x := range sp {
		res, err := RunSeries(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows {
			if r.Metric == "latency_us" {
				lat[x.Series] = r.Value
			}
		}
	}
	// The fitted 790 ns: 4.5 us; the series' own 830 ns: 4.64 us.
	if math.Abs(lat["fitted"]-4.5)/4.5 > 0.01 || math.Abs(lat["own"]-4.64)/4.64 > 0.01 {
		t.Errorf("latencies %v, want fitted about 4.5 us and own about 4.64 us", lat)
	}

	bad, err := scenarios.Parse("bad.yaml", []byte(strings.Replace(src, "[t3d-put-startup]", "[t3d-put-startup, nosuch]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Specs(all.Default(), bad)
	if err == nil || !strings.Contains(err.Error(), `bad.yaml:2:32: field calibration[1]: calibration "nosuch": no such file and no such built-in calibration`) {
		t.Errorf("unknown calibration: %v", err)
	}
}

package report

import (
	"math"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// claimRows: "fast" is twice "slow" everywhere but at 64 where it is 3
// times; "up" rises with a dip at 4; "lg" is 2*ln(x)+1 exactly; "a" and "b"
// cross between 8 and 16 (a below, then above); the highest of "b" and "c"
// is 10 but at 16 (30), their lowest 2 but at 16 (10).
func claimRows() []Row {
	var rows []Row
	add := func(s string, pts ...float64) {
		for i := 0; i < len(pts); i += 2 {
			rows = append(rows, Row{Series: s, XName: "bytes", X: pts[i], Metric: "m", Value: pts[i+1]})
		}
	}
	add("slow", 1, 10, 8, 20, 64, 30)
	add("fast", 1, 20, 8, 40, 64, 90)
	add("up", 1, 1, 2, 2, 4, 1.9, 8, 5)
	for _, x := range []float64{1, 2, 4, 8, 16, 32} {
		add("lg", x, 2*math.Log(x)+1)
	}
	add("a", 1, 1, 8, 5, 16, 20, 32, 40)
	add("b", 1, 10, 8, 10, 16, 10, 32, 10)
	add("c", 1, 2, 8, 2, 16, 30, 32, 2)
	return rows
}

func TestClaimKinds(t *testing.T) {
	tests := []struct {
		name    string
		c       Claim
		holds   bool
		missing bool
		value   float64
		measure string // a substring of Measured
	}{
		{"ratio holds", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", At: []float64{8}, Min: f(1.5), Max: f(2.5)}, true, false, 2, "fast / slow = 2 at bytes=8"},
		{"ratio boundary min inclusive", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", At: []float64{8}, Min: f(2)}, true, false, 2, ""},
		{"ratio boundary max inclusive", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", At: []float64{8}, Max: f(2)}, true, false, 2, ""},
		{"ratio fails at one of several x", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", Min: f(1.5), Max: f(2.5)}, false, false, 2, "to 3 (bytes=64) over 3 points"},
		{"ratio of one series at two x", Claim{Kind: ClaimRatio, Series: "up", At: []float64{8}, OtherAt: f(2), Min: f(2)}, true, false, 2.5, "up / up at bytes=2 = 2.5"},
		{"ratio nearest x within 1%", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", At: []float64{64.5}, Min: f(3)}, true, false, 3, ""},
		{"ratio x absent", Claim{Kind: ClaimRatio, Series: "fast", Other: "slow", At: []float64{100}, Min: f(1)}, false, true, 0, "no m point of series fast at bytes=100"},
		{"above holds", Claim{Kind: ClaimAbove, Series: "fast", Other: "slow"}, true, false, 2, ""},
		{"above with factor fails", Claim{Kind: ClaimAbove, Series: "fast", Other: "slow", Min: f(2.5)}, false, false, 2, "want ≥ 2.5"},
		{"above in range", Claim{Kind: ClaimAbove, Series: "fast", Other: "slow", XMin: f(60), Min: f(2.5)}, true, false, 3, ""},
		{"below fails", Claim{Kind: ClaimBelow, Series: "fast", Other: "slow"}, false, false, 3, ""},
		{"below holds", Claim{Kind: ClaimBelow, Series: "slow", Other: "fast", Max: f(0.5)}, true, false, 0.5, ""},
		{"equal is not above", Claim{Kind: ClaimAbove, Series: "slow", Other: "slow2"}, false, true, 0, "no m rows for series slow2"},
		{"monotone fails on the dip", Claim{Kind: ClaimMonotone, Series: "up", Direction: Increasing}, false, false, 0.05, "from bytes=2 (2) to 4 (1.9)"},
		{"monotone within tolerance", Claim{Kind: ClaimMonotone, Series: "up", Direction: Increasing, Tolerance: 0.05}, true, false, 0.05, ""},
		{"monotone on a range", Claim{Kind: ClaimMonotone, Series: "up", Direction: Increasing, XMax: f(2)}, true, false, -1, "increasing over 2 points"},
		{"monotone decreasing fails", Claim{Kind: ClaimMonotone, Series: "up", Direction: Decreasing}, false, false, 3.1 / 1.9, ""},
		{"monotone needs two points", Claim{Kind: ClaimMonotone, Series: "up", Direction: Increasing, At: []float64{8}}, false, true, 0, "2 points"},
		{"log fit exact", Claim{Kind: ClaimFit, Series: "lg", Model: FitLog, MinR2: 0.999}, true, false, 1, "a=2, b=1"},
		{"linear fit of a log curve is worse", Claim{Kind: ClaimFit, Series: "lg", Model: FitLinear, MinR2: 0.95}, false, false, 0, ""},
		{"fit needs three points", Claim{Kind: ClaimFit, Series: "lg", Model: FitLog, MinR2: 0.9, XMax: f(2)}, false, true, 0, "3 points"},
		{"crossover holds", Claim{Kind: ClaimCrossover, Series: "a", Other: "b", Direction: DirAbove, XMin: f(8), XMax: f(16)}, true, false, 8 + 8*5.0/15, "above at bytes≈10.667 (between 8 and 16)"},
		{"crossover outside range", Claim{Kind: ClaimCrossover, Series: "a", Other: "b", XMax: f(10)}, false, false, 8 + 8*5.0/15, ""},
		{"crossover wrong direction", Claim{Kind: ClaimCrossover, Series: "a", Other: "b", Direction: DirBelow}, false, false, 0, ""},
		{"crossover with the highest of others", Claim{Kind: ClaimCrossover, Series: "a", Others: []string{"b", "c"}, Best: BestHigh, Direction: DirAbove}, true, false, 16 + 16*10.0/40, "a crosses above at bytes≈20 (between 16 and 32) the highest of (b, c)"},
		{"crossover with the lowest of others", Claim{Kind: ClaimCrossover, Series: "a", Others: []string{"b", "c"}, Best: BestLow, Direction: DirAbove}, true, false, 1 + 7*1.0/4, "the lowest of (b, c)"},
		{"ratio to the highest of others", Claim{Kind: ClaimRatio, Series: "a", Others: []string{"b", "c"}, Best: BestHigh, At: []float64{16}, Max: f(1)}, true, false, 20.0 / 30, "a / the highest of (b, c) = 0.66667 at bytes=16"},
		{"above the highest of others fails", Claim{Kind: ClaimAbove, Series: "a", Others: []string{"b", "c"}, Best: BestHigh, At: []float64{16}}, false, false, 20.0 / 30, ""},
		{"others missing a series", Claim{Kind: ClaimAbove, Series: "a", Others: []string{"b", "pvm"}, Best: BestHigh}, false, true, 0, "no m rows for series pvm"},
		{"no crossover", Claim{Kind: ClaimCrossover, Series: "fast", Other: "slow"}, false, false, 0, "stays above slow"},
		{"band each holds", Claim{Kind: ClaimBand, Series: "slow", Min: f(10), Max: f(30)}, true, false, 10, "within 10..30 at all 3 points"},
		{"band each fails", Claim{Kind: ClaimBand, Series: "slow", Min: f(15)}, false, false, 10, "10 at bytes=1"},
		{"band of the max", Claim{Kind: ClaimBand, Series: "slow", Min: f(25), Stat: StatMax}, true, false, 30, "max of slow = 30 at bytes=64"},
		{"band of the min", Claim{Kind: ClaimBand, Series: "slow", Min: f(25), Stat: StatMin}, false, false, 10, ""},
		{"band at x", Claim{Kind: ClaimBand, Series: "fast", At: []float64{64}, Max: f(90)}, true, false, 90, ""},
		{"missing series", Claim{Kind: ClaimBand, Series: "nope", Min: f(1)}, false, true, 0, "no m rows for series nope"},
		{"missing metric", Claim{Kind: ClaimBand, Series: "slow", Metric: "other", Min: f(1)}, false, true, 0, "no other rows"},
		{"empty range", Claim{Kind: ClaimBand, Series: "slow", XMin: f(1000), Min: f(1)}, false, true, 0, "x range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.Metric == "" {
				tc.c.Metric = "m"
			}
			r := EvaluateClaims(claimRows(), []Claim{tc.c})[0]
			if r.Holds != tc.holds || (r.Missing != "") != tc.missing {
				t.Fatalf("holds %v missing %q, want holds %v missing %v: %s", r.Holds, r.Missing, tc.holds, tc.missing, r.Measured)
			}
			if !tc.missing && tc.value != 0 && math.Abs(r.Value-tc.value) > 1e-9 {
				t.Errorf("value %g, want %g: %s", r.Value, tc.value, r.Measured)
			}
			if !strings.Contains(r.Measured, tc.measure) {
				t.Errorf("measured %q does not contain %q", r.Measured, tc.measure)
			}
		})
	}
}

func TestLinearFitConstant(t *testing.T) {
	if _, b, r2 := linearFit([]float64{1, 2, 3}, []float64{4, 4, 4}); b != 4 || r2 != 1 {
		t.Fatalf("b %g r2 %g", b, r2)
	}
}

func TestWriteClaims(t *testing.T) {
	var b strings.Builder
	res := EvaluateClaims(claimRows(), []Claim{
		{Name: "twice", Kind: ClaimRatio, Metric: "m", Series: "fast", Other: "slow", At: []float64{8}, Min: f(4), Quote: "4 to\n 7 times", Section: "5", Note: "lacks x"},
	})
	if err := WriteClaims(&b, res); err != nil {
		t.Fatal(err)
	}
	want := "FAILS  twice (ratio, m): fast / slow = 2 at bytes=8 (want ≥ 4)\n       \"4 to 7 times\" (5)\n       note: lacks x\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

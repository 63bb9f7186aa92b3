package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
)

// measure runs series of scenario with param (COMPONENT.FIELD) at v and
// returns metric at x.
func measure(t *testing.T, scenario, series, param string, v float64, metric string, x float64) float64 {
	t.Helper()
	s, err := scenarios.LoadBuiltin(scenario)
	if err != nil {
		t.Fatal(err)
	}
	s.Series = slices.DeleteFunc(s.Series, func(se scenarios.Series) bool { return se.Name != series })
	c, fl, _ := strings.Cut(param, ".")
	s.Settings = []scenarios.Setting{{Component: c, Field: fl, Node: calibration.Value{Component: c, Field: fl, Value: v}.Node(), Override: true}}
	sp, err := runner.Specs(all.Default(), s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.RunSeries(sp[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Metric == metric && r.X == x {
			return r.Value
		}
	}
	t.Fatalf("no %s at %g", metric, x)
	return 0
}

// TestRecoversSyntheticParameter: one free parameter, its target the
// simulated value at a known parameter value: the fit finds that value
// within 1 %, from a start far from it.
func TestRecoversSyntheticParameter(t *testing.T) {
	const truth = 600.0
	target := measure(t, "t3d-table1", "sync-aclmpl", "t3d.put_startup_ns", truth, "latency_us", 8)
	src := fmt.Sprintf(`name: synthetic
free:
  - {param: t3d.put_startup_ns, min: 50, max: 3000, start: 1500, why: "synthetic"}
training:
  - {scenario: t3d-table1, series: sync-aclmpl, metric: latency_us, x: 8, value: %v, source: "simulated at put_startup_ns %v"}
`, target, truth)
	f, err := calibration.Parse("synthetic.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg := all.Default()
	if err := Check(reg, f); err != nil {
		t.Fatal(err)
	}
	res, err := Run(reg, f, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Values["t3d.put_startup_ns"]
	if math.Abs(got-truth)/truth > 0.01 {
		t.Errorf("fitted %v, want %v within 1 %% (%d evaluations, objective %g)", got, truth, len(res.Evaluations), res.Objective)
	}
	// Deterministic: the same file, the same evaluations.
	again, err := Run(reg, f, Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.Evaluations) != fmt.Sprint(res.Evaluations) {
		t.Errorf("a second fit (-j 1) differs from the first (-j 2)")
	}
}

// TestCheckLocatesNames: unknown components, params, scenarios, series
// and claims are errors at their line.
func TestCheckLocatesNames(t *testing.T) {
	src := `name: bad
free:
  - {param: nosuch.x, min: 1, max: 2, why: "w"}
  - {param: t3d.nosuch_ns, min: 1, max: 2, why: "w"}
  - {param: sp.interrupt_us, min: 1, max: 2, why: "w"}
  - {param: t3d.put_startup_ns, min: 1, max: 2, why: "w"}
training:
  - {scenario: t3d-table1, series: nosuch, metric: latency_us, x: 8, value: 4.5, source: "s"}
  - {scenario: t3d-table1, series: sync-aclmpl, metric: latency_us, x: 8, value: 4.5, source: "s"}
  - {scenario: t3d-table1, claim: nosuch}
  - {scenario: nosuch, series: a, metric: m, x: 1, value: 1, source: "s"}
`
	f, err := calibration.Parse("bad.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = Check(all.Default(), f)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`bad.yaml:3:13: field free[0].param: no machine or stack "nosuch"`,
		`bad.yaml:4:13: field free[1].param: machine t3d has no numeric param "nosuch_ns"`,
		`bad.yaml:5:13: field free[2].param: no training target runs sp`,
		`bad.yaml:8:36: field training[0].series: scenario t3d-table1 has no series "nosuch"`,
		`bad.yaml:10:35: field training[2].claim: scenario t3d-table1 has no claim "nosuch"`,
		`bad.yaml:11:16: field training[3].scenario: scenario "nosuch"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %s\nin %v", want, err)
		}
	}
}

// TestDefaultsAreFitted: every built-in calibration file's fitted values
// are the code's defaults, within the file's tolerance (a default moved
// without a fit, or a fit stored without the default, fails).
func TestDefaultsAreFitted(t *testing.T) {
	reg := all.Default()
	names, err := calibration.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		f, err := calibration.LoadBuiltin(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(reg, f); err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		for _, v := range f.Values() {
			param := v.Component + "." + v.Field
			def, err := Default(reg, param)
			if err != nil {
				t.Errorf("%s: %v", n, err)
				continue
			}
			if d := math.Abs(def-v.Value) / math.Abs(v.Value); d > f.Fitted.Tolerance {
				t.Errorf("%s: %s: default %v, fitted %v (%.1f %% apart, tolerance %.1f %%)", f.Path, param, def, v.Value, 100*d, 100*f.Fitted.Tolerance)
			}
		}
	}
}

func TestClaimDistance(t *testing.T) {
	lo, hi := 4.0, 7.0
	for _, c := range []struct {
		v, want float64
		holds   bool
	}{{5, 0, true}, {3, 0.25, false}, {7.7, 0.1, false}} {
		r := claimResult(lo, hi, c.v, c.holds)
		if got := ClaimDistance(r); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("distance at %v: %v, want %v", c.v, got, c.want)
		}
	}
}

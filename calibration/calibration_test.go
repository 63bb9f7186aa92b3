package calibration

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
)

const good = `name: t
title: "a test"
free:
  - param: sx4.semop_us
    min: 100
    max: 2000
    start: 700
    step: 1
    why: "unknown"
training:
  - scenario: sx4-fig1
    series: shmem-sysv
    metric: latency_us
    x: 0
    value: 750
    source: "Figure 1"
    reduce: {sizes: [0]}
validation:
  claims:
    - {scenario: sx4-fig1}
`

func TestParseGood(t *testing.T) {
	f, err := Parse("t.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Free[0].Component() != "sx4" || f.Free[0].Field() != "semop_us" || f.Free[0].StartValue() != 700 {
		t.Errorf("free: %+v", f.Free[0])
	}
	if got := f.Training[0].Label(); got != "sx4-fig1/shmem-sysv latency_us@0" {
		t.Errorf("label %q", got)
	}
}

// TestParseErrorsLocated: every problem of a file, at once, each with
// file:line:column and the field.
func TestParseErrorsLocated(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unknown field", strings.Replace(good, "title:", "titel:", 1), `t.yaml:2:1: field titel: unknown field "titel"`},
		{"wrong type", strings.Replace(good, "min: 100", "min: low", 1), `t.yaml:5:10: field free[0].min: expected a number, got "low"`},
		{"name", strings.Replace(good, "name: t", "name: other", 1), `t.yaml:1:7: field name: name "other" must equal the file's base name "t"`},
		{"bounds", strings.Replace(good, "max: 2000", "max: 50", 1), `t.yaml:6:10: field free[0].max: the bounds must be finite numbers with min < max`},
		{"start outside", strings.Replace(good, "start: 700", "start: 7000", 1), `t.yaml:7:12: field free[0].start: start 7000 must lie within`},
		{"param", strings.Replace(good, "sx4.semop_us", "semop_us", 1), `t.yaml:4:12: field free[0].param: "semop_us" must be COMPONENT.FIELD`},
		{"zero value", strings.Replace(good, "value: 750", "value: 0", 1), `t.yaml:15:12: field training[0].value: a value target needs a finite, non-zero value`},
		{"claim with value", strings.Replace(good, "    series: shmem-sysv\n", "    claim: x\n", 1), `t.yaml:13:13: field training[0].metric: a claim target takes no metric`},
		{"missing required", strings.Replace(good, "    why: \"unknown\"\n", "", 1), `t.yaml:4:5: field free[0].why: missing required field "why"`},
		{"fitted unknown", good + "fitted:\n  values:\n    sx4.other: 3\n", `t.yaml:23:5: field fitted.values.sx4.other: "sx4.other" is not a free parameter`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.in))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got  %v\nwant %s...", err, c.want)
			}
			for _, e := range strictyaml.Errors(err) {
				var se *strictyaml.Error
				if !errors.As(e, &se) || se.Line == 0 {
					t.Errorf("unlocated error: %v", e)
				}
			}
		})
	}
}

// TestParseAllErrorsAtOnce: two problems, two errors.
func TestParseAllErrorsAtOnce(t *testing.T) {
	in := strings.Replace(strings.Replace(good, "max: 2000", "max: 50", 1), "value: 750", "value: 0", 1)
	_, err := Parse("t.yaml", []byte(in))
	if n := len(strictyaml.Errors(err)); n != 2 {
		t.Errorf("%d errors, want 2: %v", n, err)
	}
}

// TestWithFitted: the fitted: block is replaced or appended, every other
// byte unchanged; the result parses back to the values.
func TestWithFitted(t *testing.T) {
	f, err := Parse("t.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	out := f.WithFitted(map[string]float64{"sx4.semop_us": 673.4})
	if !bytes.HasPrefix(out, []byte(good)) {
		t.Fatalf("the file's text changed:\n%s", out)
	}
	g, err := Parse("t.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Fitted.Values["sx4.semop_us"]; v != 673 {
		t.Errorf("fitted %v, want 673 (step 1)", v)
	}
	// Again: replaced in place, with a key after it kept.
	withAfter := strings.Replace(string(out), "fitted:", "quick: true\nfitted:", 1) + "# after\ndescription: x\n"
	g, err = Parse("t.yaml", []byte(withAfter))
	if err != nil {
		t.Fatal(err)
	}
	again := g.WithFitted(map[string]float64{"sx4.semop_us": 700})
	if strings.Count(string(again), "fitted:") != 1 || !strings.HasSuffix(string(again), "# after\ndescription: x\n") {
		t.Errorf("not replaced in place:\n%s", again)
	}
	h, err := Parse("t.yaml", again)
	if err != nil || h.Fitted.Values["sx4.semop_us"] != 700 || h.Description != "x" {
		t.Errorf("reparse: %v %+v", err, h)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v, step float64
		want    string
	}{{673, 1, "673"}, {39.5, 0.5, "39.5"}, {34, 0.5, "34.0"}, {1234.5678, 0, "1234.57"}, {0.000123456789, 0, "0.000123457"}, {1790, 10, "1790"}} {
		if got := FormatValue(c.v, c.step); got != c.want {
			t.Errorf("FormatValue(%v, %v) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

// TestBuiltins: every built-in file parses, is named after its file, and
// has been fitted.
func TestBuiltins(t *testing.T) {
	names, err := Builtin()
	if err != nil || len(names) == 0 {
		t.Fatal(names, err)
	}
	for _, n := range names {
		f, err := LoadBuiltin(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if len(f.Values()) == 0 {
			t.Errorf("%s: no fitted values (run simrun calibrate %s)", n, n)
		}
	}
}

// FuzzParse: no input makes the parser or the rewriting panic, and every
// error is located.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(good + "fitted:\n  tolerance: 0.1\n  values: {sx4.semop_us: 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			for _, e := range strictyaml.Errors(err) {
				var se *strictyaml.Error
				if !errors.As(e, &se) {
					t.Fatalf("error %T is not a *strictyaml.Error: %v", e, e)
				}
			}
			return
		}
		vals := map[string]float64{}
		for _, p := range c.Free {
			vals[p.Param] = p.StartValue()
		}
		if _, err := Parse("fuzz.yaml", c.WithFitted(vals)); err != nil {
			t.Fatalf("the rewritten file does not parse: %v", err)
		}
	})
}

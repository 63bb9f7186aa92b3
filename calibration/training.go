package calibration

import (
	"fmt"
	"strconv"
)

// Training is what the built-in calibration files fit to: the claims
// and the values (a scenario's series, metric and x) they list under
// training:. Those are "training (fitted)" wherever claims are counted:
// never evidence that the model holds.
type Training struct {
	claims map[string]string // "scenario\x00claim" -> file
	values map[string]string // "scenario\x00series\x00metric\x00x" -> file
}

// BuiltinTraining reads the training targets of every built-in file.
func BuiltinTraining() (*Training, error) {
	names, err := Builtin()
	if err != nil {
		return nil, err
	}
	t := &Training{claims: map[string]string{}, values: map[string]string{}}
	for _, n := range names {
		f, err := LoadBuiltin(n)
		if err != nil {
			return nil, fmt.Errorf("calibration %s: %w", n, err)
		}
		for _, x := range f.Training {
			if x.Claim != "" {
				t.claims[x.Scenario+"\x00"+x.Claim] = n
				continue
			}
			t.values[valueKey(x.Scenario, x.Series, x.Metric, *x.X)] = n
		}
	}
	return t, nil
}

func valueKey(scenario, series, metric string, x float64) string {
	return scenario + "\x00" + series + "\x00" + metric + "\x00" + strconv.FormatFloat(x, 'g', -1, 64)
}

// Claim names the calibration file that trains on the claim of
// scenario, or "" (t may be nil: nothing is training).
func (t *Training) Claim(scenario, claim string) string {
	if t == nil {
		return ""
	}
	return t.claims[scenario+"\x00"+claim]
}

// Value names the calibration file that trains on the value of metric of
// series at x in scenario, or "".
func (t *Training) Value(scenario, series, metric string, x float64) string {
	if t == nil {
		return ""
	}
	return t.values[valueKey(scenario, series, metric, x)]
}

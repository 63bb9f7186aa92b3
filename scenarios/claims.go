package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/report"
)

// claimFields lists, for each claim kind, the optional fields it uses
// beyond name, kind, quote, section, note, metric, series, at, x_min and
// x_max; any other field given is an error, so that a claim never carries
// a bound that is silently not checked.
var claimFields = map[string][]string{
	report.ClaimRatio:     {"other", "others", "best", "other_at", "min", "max"},
	report.ClaimAbove:     {"other", "others", "best", "min"},
	report.ClaimBelow:     {"other", "others", "best", "max"},
	report.ClaimMonotone:  {"direction", "tolerance"},
	report.ClaimFit:       {"model", "min_r2"},
	report.ClaimCrossover: {"other", "others", "best", "direction"},
	report.ClaimBand:      {"min", "max", "stat"},
}

// claims checks the claims: names, kinds, series, and the fields each
// kind needs.
func (v *validator) claims() {
	names := map[string]int{}
	for i, c := range v.s.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		if !nameRE.MatchString(c.Name) {
			v.errorf(f+".name", "%q: use letters, digits, '.', '_' and '-' only", c.Name)
		} else if j, dup := names[c.Name]; dup {
			v.errorf(f+".name", "claim %q is already defined (claims[%d])", c.Name, j)
		} else {
			names[c.Name] = i
		}
		uses, ok := claimFields[c.Kind]
		if !ok {
			v.errorf(f+".kind", "%q is not a claim kind; expected one of %s", c.Kind, strings.Join(report.ClaimKinds, ", "))
			continue
		}
		v.claimText(f, c)
		v.claimFieldsUsed(f, c, uses)
		v.claimNumbers(f, c)
		v.claimKind(f, c)
	}
}

// claimText checks claim c's words and series (c at field f).
func (v *validator) claimText(f string, c report.Claim) {
	for _, s := range []struct{ field, val string }{{"quote", c.Quote}, {"section", c.Section}, {"metric", c.Metric}} {
		if strings.TrimSpace(s.val) == "" {
			v.errorf(f+"."+s.field, "must not be empty")
		}
	}
	if !v.valid(c.Series) {
		v.errorf(f+".series", "unknown series %q (%s)", c.Series, v.known())
	}
	if c.Other != "" && !v.valid(c.Other) {
		v.errorf(f+".other", "unknown series %q (%s)", c.Other, v.known())
	}
	v.claimOthers(f, c)
}

// claimOthers checks claim c's others and best: two or more known series,
// none of them the claim's own, instead of other, and which value is the
// best.
func (v *validator) claimOthers(f string, c report.Claim) {
	if len(c.Others) == 0 {
		if c.Best != "" && c.Kind != report.ClaimMonotone && c.Kind != report.ClaimFit && c.Kind != report.ClaimBand {
			v.errorf(f+".best", "applies only with others (the series whose best is compared)")
		}
		return
	}
	if c.Other != "" {
		v.errorf(f+".others", "give either other (one series) or others (the best of several), not both")
	}
	if len(c.Others) < 2 {
		v.errorf(f+".others", "lists %d series; the best of several needs at least 2 (else use other)", len(c.Others))
	}
	seen := map[string]bool{}
	for k, s := range c.Others {
		switch {
		case !v.valid(s):
			v.errorf(fmt.Sprintf("%s.others[%d]", f, k), "unknown series %q (%s)", s, v.known())
		case s == c.Series:
			v.errorf(fmt.Sprintf("%s.others[%d]", f, k), "must differ from series %q", c.Series)
		case seen[s]:
			v.errorf(fmt.Sprintf("%s.others[%d]", f, k), "series %q is listed twice", s)
		}
		seen[s] = true
	}
	switch c.Best {
	case report.BestHigh, report.BestLow:
	case "":
		v.errorf(f+".best", "others needs best: %q or %q (which value of %s is the best)", report.BestHigh, report.BestLow, c.Metric)
	default:
		v.errorf(f+".best", "%q: expected %q or %q (which value of %s is the best)", c.Best, report.BestHigh, report.BestLow, c.Metric)
	}
}

// claimFieldsUsed checks that claim c gives only the fields its kind uses.
func (v *validator) claimFieldsUsed(f string, c report.Claim, uses []string) {
	given := map[string]bool{
		"other": c.Other != "", "other_at": c.OtherAt != nil, "min": c.Min != nil, "max": c.Max != nil,
		"direction": c.Direction != "", "tolerance": c.Tolerance != 0, "model": c.Model != "",
		"min_r2": c.MinR2 != 0, "stat": c.Stat != "", "others": len(c.Others) > 0, "best": c.Best != "",
	}
	for _, name := range []string{"other", "others", "best", "other_at", "min", "max", "direction", "tolerance", "model", "min_r2", "stat"} {
		if given[name] && !slices.Contains(uses, name) {
			v.errorf(f+"."+name, "does not apply to a %s claim (it uses %s)", c.Kind, strings.Join(uses, ", "))
		}
	}
}

// claimNumbers checks that claim c's numbers are finite and its ranges
// ordered.
func (v *validator) claimNumbers(f string, c report.Claim) {
	finite := func(field string, x *float64) {
		if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
			v.errorf(f+"."+field, "must be a finite number")
		}
	}
	finite("x_min", c.XMin)
	finite("x_max", c.XMax)
	finite("min", c.Min)
	finite("max", c.Max)
	finite("other_at", c.OtherAt)
	for k, x := range c.At {
		finite(fmt.Sprintf("at[%d]", k), &x)
	}
	if len(c.At) > 0 && (c.XMin != nil || c.XMax != nil) {
		v.errorf(f+".at", "give either at (the x values) or x_min/x_max (a range), not both")
	}
	if c.Kind == report.ClaimCrossover && len(c.At) > 0 {
		v.errorf(f+".at", "a crossover uses every common x; bound where it must cross with x_min/x_max")
	}
	if c.XMin != nil && c.XMax != nil && *c.XMin > *c.XMax {
		v.errorf(f+".x_max", "x_max (%g) must not be less than x_min (%g)", *c.XMax, *c.XMin)
	}
	if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
		v.errorf(f+".max", "max (%g) must not be less than min (%g)", *c.Max, *c.Min)
	}
}

// claimKind checks what claim c's kind needs.
func (v *validator) claimKind(f string, c report.Claim) {
	switch c.Kind {
	case report.ClaimRatio:
		if c.Other == "" && len(c.Others) == 0 && c.OtherAt == nil {
			v.errorf(f+".other", "a ratio needs a second series (other, or others) or a second x of the same series (other_at)")
		}
		if c.Min == nil && c.Max == nil {
			v.errorf(f+".min", "a ratio needs min, max or both")
		}
	case report.ClaimAbove, report.ClaimBelow:
		if c.Other == "" && len(c.Others) == 0 {
			v.errorf(f+".other", "an %s claim needs the series it is compared with (other)", c.Kind)
		} else if c.Other == c.Series {
			v.errorf(f+".other", "must differ from series %q", c.Series)
		}
	case report.ClaimCrossover:
		if c.Other == "" && len(c.Others) == 0 {
			v.errorf(f+".other", "a crossover needs the series it crosses (other, or others)")
		} else if c.Other == c.Series {
			v.errorf(f+".other", "must differ from series %q", c.Series)
		}
		if c.Direction != "" && c.Direction != report.DirAbove && c.Direction != report.DirBelow {
			v.errorf(f+".direction", "%q: a crossover's direction is what series becomes: %q or %q", c.Direction, report.DirAbove, report.DirBelow)
		}
	case report.ClaimMonotone:
		if c.Direction != report.Increasing && c.Direction != report.Decreasing {
			v.errorf(f+".direction", "%q: expected %q or %q", c.Direction, report.Increasing, report.Decreasing)
		}
		if c.Tolerance < 0 || c.Tolerance >= 1 || math.IsNaN(c.Tolerance) {
			v.errorf(f+".tolerance", "must be a relative step back in [0, 1), got %g", c.Tolerance)
		}
	case report.ClaimFit:
		if c.Model != report.FitLog && c.Model != report.FitLinear {
			v.errorf(f+".model", "%q: expected %q (a*ln(x)+b) or %q (a*x+b)", c.Model, report.FitLog, report.FitLinear)
		}
		if !(c.MinR2 > 0 && c.MinR2 <= 1) {
			v.errorf(f+".min_r2", "must be in (0, 1], got %g", c.MinR2)
		}
	case report.ClaimBand:
		if c.Min == nil && c.Max == nil {
			v.errorf(f+".min", "a band needs min, max or both")
		}
		if c.Stat != "" && c.Stat != report.StatEach && c.Stat != report.StatMax && c.Stat != report.StatMin {
			v.errorf(f+".stat", "%q: expected %q, %q or %q", c.Stat, report.StatEach, report.StatMax, report.StatMin)
		}
	}
}

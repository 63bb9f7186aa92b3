package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// Verdict is what the failures of a run mean, given what the scenario
// expects (expect.failure).
type Verdict struct {
	Failures []string // "series NAME: kind: detail", in series order
	Kinds    map[string]bool
	OK       bool   // no failure, or only the one the scenario expects
	Message  string // "ok", "expected failure: ...", "FAILED: ..."
}

// Judge is the verdict of the runs of s: every failure a workload
// reported and every run error, worded alike (FailureLine), against what
// s expects.
func Judge(s *scenarios.Scenario, runs []Outcome) Verdict {
	v := Verdict{Kinds: map[string]bool{}}
	for _, r := range runs {
		for _, f := range r.Result.Failures {
			v.Kinds[f.Kind] = true
			v.Failures = append(v.Failures, FailureLine(r.Spec.Series, f.Kind, f.Detail))
		}
		if r.Err != nil {
			k := FailureKind(r.Err)
			v.Kinds[k] = true
			v.Failures = append(v.Failures, FailureLine(r.Spec.Series, k, r.Err.Error()))
		}
	}
	switch {
	case s.Expect == nil && len(v.Kinds) == 0:
		v.OK, v.Message = true, "ok"
	case s.Expect == nil:
		v.Message = fmt.Sprintf("FAILED: %d failure(s), see above", len(v.Failures))
	case v.Kinds[s.Expect.Failure] && len(v.Kinds) == 1:
		v.OK, v.Message = true, fmt.Sprintf("expected failure: %s — %s", s.Expect.Failure, strings.TrimSpace(s.Expect.Why))
	case v.Kinds[s.Expect.Failure]:
		v.Message = fmt.Sprintf("FAILED: the expected %s happened, but so did other failures", s.Expect.Failure)
	default:
		v.Message = fmt.Sprintf("FAILED: the scenario expects a %s (%s), which did not happen", s.Expect.Failure, strings.TrimSpace(s.Expect.Why))
	}
	return v
}

// FailureKind classifies a run error: the kind an error names itself (a
// FailureKind method: a series error recorded earlier, as a shard of a
// run keeps it), a stuck engine's (workloads.StuckKind), else "error".
func FailureKind(err error) string {
	var k interface{ FailureKind() string }
	if errors.As(err, &k) {
		return k.FailureKind()
	}
	if k, ok := workloads.StuckKind(err); ok {
		return k
	}
	return "error"
}

// FailureLine words every failure of a run the same way, whether the
// workload reported it or the engine stopped the run:
// "series NAME: KIND: DETAIL" (a detail repeating the series is trimmed).
func FailureLine(series, kind, detail string) string {
	detail = strings.TrimPrefix(detail, "series "+series+": ")
	detail = strings.TrimPrefix(detail, series+": ")
	return fmt.Sprintf("series %s: %s: %s", series, kind, detail)
}

// RunInputErrors returns the input errors (bad params, a missing verb:
// InputError) the runs met, each once, attributed and positioned as Load's
// (InputErrors); an error without a position names its series
// (SeriesError).
func RunInputErrors(s *scenarios.Scenario, runs []Outcome) []error {
	var errs []error
	for _, r := range runs {
		if r.Err == nil || !InputError(r.Err) {
			continue
		}
		var se *strictyaml.Error
		if errors.As(r.Err, &se) { // names file, line and field already
			errs = append(errs, r.Err)
		} else {
			errs = append(errs, errors.New(SeriesError(r.Spec.Series, r.Err)))
		}
	}
	return InputErrors(s, errors.Join(errs...))
}

// SeriesError prefixes a run error with its series, unless the workload
// already named the series in it.
func SeriesError(series string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, "series "+series+":") || strings.HasPrefix(msg, series+":") {
		return msg
	}
	return fmt.Sprintf("series %s: %s", series, msg)
}

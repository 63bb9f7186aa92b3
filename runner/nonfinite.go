package runner

import (
	"fmt"
	"math"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/workloads"
)

// NonFiniteKind is the failure kind of a result row whose value or x is
// NaN or infinite: a bug in a model or workload, reported instead of
// written.
const NonFiniteKind = "non-finite result"

// NonFinite counts the rows whose value or x is not finite.
func NonFinite(rows []report.Row) int {
	n := 0
	for _, r := range rows {
		if !finite(r) {
			n++
		}
	}
	return n
}

func finite(r report.Row) bool {
	return !math.IsNaN(r.Value) && !math.IsInf(r.Value, 0) && !math.IsNaN(r.X) && !math.IsInf(r.X, 0)
}

// DropNonFinite removes every row whose value or x is not finite from res
// and reports it as a failure naming the metric and x, so that outputs
// hold only numbers (JSON has no Inf or NaN).
func DropNonFinite(res *workloads.Result) {
	if NonFinite(res.Rows) == 0 {
		return
	}
	kept := res.Rows[:0:0]
	for _, r := range res.Rows {
		if finite(r) {
			kept = append(kept, r)
			continue
		}
		res.Failures = append(res.Failures, workloads.Failure{Kind: NonFiniteKind,
			Detail: fmt.Sprintf("metric %s at %s=%g is %g %s (a model or workload bug; the row is not written)", r.Metric, r.XName, r.X, r.Value, r.Unit)})
	}
	res.Rows = kept
}

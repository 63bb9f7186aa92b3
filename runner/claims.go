package runner

import (
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/workloads"
)

// Claims evaluates claims on the rows of a run's series (their results,
// in series order, non-finite rows already dropped): the verdicts a
// scenario's summary and results.json carry.
func Claims(claims []report.Claim, results []workloads.Result) []report.ClaimResult {
	var rows report.Results
	for _, r := range results {
		rows = append(rows, r.Rows...)
	}
	return report.EvaluateClaims(rows, claims)
}

package fit

import "github.com/msgsim/msgsim/report"

func claimResult(lo, hi, v float64, holds bool) report.ClaimResult {
	return report.ClaimResult{Claim: report.Claim{Min: &lo, Max: &hi}, Value: v, Holds: holds}
}

package runner

import (
	"errors"
	"io"

	"github.com/msgsim/msgsim/calibration"
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

// MarkTraining marks the claims of scenario that a calibration file fits
// to (t) as training: they count as "training (fitted)", never as holding.
func MarkTraining(t *calibration.Training, scenario string, results []report.ClaimResult) {
	for i := range results {
		if t.Claim(scenario, results[i].Claim.Name) != "" {
			results[i].Training = true
		}
	}
}

// ScenarioClaims is one scenario's claims evaluated on a run of it.
type ScenarioClaims struct {
	Name    string
	Results []report.ClaimResult
	Verdict Verdict // the run's own failures, whatever the claims say
	Err     error   // the bad input the run met (RunInputErrors): no Results then
}

// SuiteClaims runs the scenarios as a suite (Suite: one pool of jobs
// workers, the largest first) and evaluates each one's claims on its
// rows, the non-finite ones dropped (DropNonFinite), those a built-in
// calibration file trains on marked as training (MarkTraining). progress (if not
// nil) gets the suite's progress lines (Run). err is a *WallError when a
// watchdog abandoned the run.
func SuiteClaims(all []Scenario, jobs int, progress io.Writer) ([]ScenarioClaims, error) {
	training, err := calibration.BuiltinTraining()
	if err != nil {
		return nil, err
	}
	runs, err := Suite(all, jobs, progress)
	if err != nil {
		return nil, err
	}
	out := make([]ScenarioClaims, len(all))
	for i, x := range all {
		out[i].Name = x.Name
		if e := RunInputErrors(x.Scenario, runs[i]); len(e) > 0 {
			out[i].Err = errors.Join(e...)
			continue
		}
		results := make([]workloads.Result, len(runs[i]))
		for k := range runs[i] {
			DropNonFinite(&runs[i][k].Result)
			results[k] = runs[i][k].Result
		}
		out[i].Results = Claims(x.Scenario.Claims, results)
		MarkTraining(training, x.Name, out[i].Results)
		out[i].Verdict = Judge(x.Scenario, runs[i])
	}
	return out, nil
}

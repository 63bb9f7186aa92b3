package fit

import (
	"fmt"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// Validation is the file's validation data judged at fitted values: the
// claims it names (verdicts) and the reference values (relative errors).
type Validation struct {
	Claims     []ValidationClaim
	References []ValidationReference
}

// ValidationClaim is one claim's verdict.
type ValidationClaim struct {
	Scenario string
	Result   report.ClaimResult
	Err      string // the scenario's run failed: no verdict
}

// ValidationReference is one reference value compared.
type ValidationReference struct {
	Scenario   string
	Comparison report.Comparison
}

// Validate runs each scenario the validation names once, with values (the
// fitted ones) over every series' params, and judges its claims and
// references.
func Validate(reg *registry.Registry, f *calibration.File, values map[string]float64, jobs int) (*Validation, error) {
	type want struct {
		claims map[string]bool // "" : all
		refs   bool
	}
	var order []string
	wants := map[string]*want{}
	get := func(name string) *want {
		if w, ok := wants[name]; ok {
			return w
		}
		w := &want{claims: map[string]bool{}}
		wants[name] = w
		order = append(order, name)
		return w
	}
	for _, sel := range f.Validation.Claims {
		get(sel.Scenario).claims[sel.Claim] = true
	}
	for _, sel := range f.Validation.References {
		get(sel.Scenario).refs = true
	}
	var groups []runner.Group
	var scens []*scenarios.Scenario
	for _, name := range order {
		s, err := scenarios.LoadBuiltin(name)
		if err != nil {
			return nil, err
		}
		v := make([]float64, len(f.Free))
		for i, p := range f.Free {
			v[i] = values[p.Param]
		}
		s.Settings = Settings(f, v)
		sp, err := runner.Specs(reg, s)
		if err != nil {
			return nil, fmt.Errorf("validation scenario %s: %w", name, err)
		}
		scens = append(scens, s)
		groups = append(groups, runner.Group{Name: name, Specs: sp, Watchdog: runner.WallLimit(s)})
	}
	outs, err := runner.Run(groups, jobs, nil)
	if err != nil {
		return nil, err
	}
	v := &Validation{}
	for i, name := range order {
		s, w := scens[i], wants[name]
		verdict := runner.Judge(s, outs[i])
		results := make([]workloads.Result, len(outs[i]))
		var rows []report.Row
		for k := range outs[i] {
			runner.DropNonFinite(&outs[i][k].Result)
			results[k] = outs[i][k].Result
			rows = append(rows, results[k].Rows...)
		}
		for _, cr := range runner.Claims(s.Claims, results) {
			if !w.claims[""] && !w.claims[cr.Claim.Name] {
				continue
			}
			vc := ValidationClaim{Scenario: name, Result: cr}
			if !verdict.OK {
				vc.Err = verdict.Message
			}
			v.Claims = append(v.Claims, vc)
		}
		if w.refs {
			var refs []report.Reference
			for _, r := range s.References {
				if r.System != "" {
					continue
				}
				refs = append(refs, report.Reference{Series: r.Series, Metric: r.Metric, X: r.X, Value: r.Value, Unit: r.Unit, Source: r.Source})
			}
			for _, c := range report.Compare(rows, refs) {
				v.References = append(v.References, ValidationReference{Scenario: name, Comparison: c})
			}
		}
	}
	return v, nil
}

package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"gopkg.in/yaml.v3"
)

// networks returns, by machine name, the machine params that run each
// machine of reg with a network (registry.Network) on the flow model, and
// those both runs of a comparison take, which turn off the packet-only
// features a machine's defaults turn on (the SCI reorders packets by
// default), so that the two runs differ in their network model only.
func networks(reg *registry.Registry) (flowParams, packetOff map[string]string) {
	flowParams, packetOff = map[string]string{}, map[string]string{}
	for _, m := range reg.Machines() {
		if m.Network == nil {
			continue
		}
		flowParams[m.Name] = m.Network.Flow
		if m.Network.PacketOff != "" {
			packetOff[m.Name] = m.Network.PacketOff
		}
	}
	return flowParams, packetOff
}

// mergeYAML merges the YAML mapping over into *c (strictyaml.Merge).
func mergeYAML(c *yaml.Node, over string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(over), &doc); err != nil || len(doc.Content) == 0 {
		return fmt.Errorf("%q is not a YAML mapping: %v", over, err)
	}
	if n := strictyaml.Merge(c, doc.Content[0]); n != nil {
		*c = *n
	}
	return nil
}

// setMachines merges params[name] over the params of every machine of s
// named name; it reports whether there was one.
func setMachines(s *scenarios.Scenario, params map[string]string) bool {
	found := false
	if len(s.Series) == 0 {
		if over, ok := params[s.Machine.Name]; ok {
			found = mergeYAML(&s.Machine.Params, over) == nil
		}
		return found
	}
	for i := range s.Series {
		se := &s.Series[i]
		name := s.Machine.Name
		if se.Machine != nil && se.Machine.Name != "" {
			name = se.Machine.Name
		}
		over, ok := params[name]
		if !ok {
			continue
		}
		if se.Machine == nil {
			se.Machine = &scenarios.Component{File: s.File, Field: fmt.Sprintf("series[%d].machine", i)}
		}
		found = mergeYAML(&se.Machine.Params, over) == nil || found
	}
	return found
}

// reduce merges over (a YAML mapping) over the workload params of s and of
// every series that sets its own.
func reduce(s *scenarios.Scenario, over string) error {
	if err := mergeYAML(&s.Workload.Params, over); err != nil {
		return err
	}
	for i := range s.Series {
		if w := s.Series[i].Workload; w != nil && w.HasParams() {
			if err := mergeYAML(&w.Params, over); err != nil {
				return err
			}
		}
	}
	return nil
}

// modelRun is one run of a scenario on one network model.
type modelRun struct {
	runs   []seriesRun
	claims []report.ClaimResult
	v      verdict
	cpu    float64 // CPU seconds
}

// runModel loads arg, adjusted, and runs it.
func runModel(arg string, adjust func(*scenarios.Scenario) error, jobs int, stderr io.Writer) (*modelRun, int) {
	var aerr error
	s, sp, errs := runner.Load(builtins(), arg, runner.LoadOptions{Adjust: func(s *scenarios.Scenario) { aerr = adjust(s) }, MaxEvents: -1})
	if aerr != nil {
		errs = append(errs, aerr)
	}
	if len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return nil, exitUsage
	}
	cpu := cpuSeconds()
	runs, err := execute(sp, jobs, nil, runner.WallLimit(s))
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %s: %v\n", s.Name, err)
		return nil, exitFailed
	}
	cpu = cpuSeconds() - cpu
	if errs := runInputErrors(s, runs); len(errs) > 0 {
		io.WriteString(stderr, joinLines(errs))
		return nil, exitUsage
	}
	dropNonFinite(runs)
	var res []report.Row
	for _, r := range runs {
		res = append(res, r.res.Rows...)
	}
	return &modelRun{runs: runs, claims: report.EvaluateClaims(res, s.Claims), v: judge(s, runs), cpu: cpu}, exitOK
}

// seriesDiff is how far one series' values are apart on the two models.
type seriesDiff struct {
	name         string
	points       int
	largest, med float64 // relative differences
	where        string  // the largest's metric and x
	missing      int     // rows on one model only
}

// diffSeries compares the rows of the two runs series by series (the rows'
// series, in the order they first appear): the relative difference
// |flow - units| / |units| of every (metric, x) both have (0 when both are
// 0).
func diffSeries(units, flow []seriesRun) []seriesDiff {
	type key struct {
		series, metric string
		x              float64
	}
	fv := map[key]float64{}
	for _, r := range flow {
		for _, row := range r.res.Rows {
			fv[key{row.Series, row.Metric, row.X}] = row.Value
		}
	}
	var out []seriesDiff
	rel := map[string][]float64{}
	at := map[string]int{}
	for _, u := range units {
		for _, r := range u.res.Rows {
			i, ok := at[r.Series]
			if !ok {
				i = len(out)
				at[r.Series] = i
				out = append(out, seriesDiff{name: r.Series})
			}
			d := &out[i]
			f, ok := fv[key{r.Series, r.Metric, r.X}]
			if !ok {
				d.missing++
				continue
			}
			var x float64
			switch {
			case f == r.Value:
			case r.Value == 0:
				x = math.Inf(1)
			default:
				x = math.Abs(f-r.Value) / math.Abs(r.Value)
			}
			if len(rel[r.Series]) == 0 || x > d.largest {
				d.largest, d.where = x, fmt.Sprintf("%s at %s=%g", r.Metric, r.XName, r.X)
			}
			rel[r.Series] = append(rel[r.Series], x)
		}
	}
	for i := range out {
		d := &out[i]
		v := rel[d.name]
		d.points = len(v)
		if len(v) > 0 {
			slices.Sort(v)
			if n := len(v); n%2 == 1 {
				d.med = v[n/2]
			} else {
				d.med = (v[n/2-1] + v[n/2]) / 2
			}
		}
	}
	return out
}

// compareNetwork runs scenario arg on the unit and the flow network models
// (both with the packet-only features of the machines' defaults off:
// networks) and prints, per series, the largest and median relative difference of
// its values, and the claims' verdicts on both, as Markdown.
func compareNetwork(arg string, fs *flag.FlagSet, seed uint64, reduceTo string, jobs int, stdout, stderr io.Writer) int {
	flowParams, packetOff := networks(builtins())
	base := func(s *scenarios.Scenario) error {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "seed" {
				s.Seed = seed
			}
		})
		setMachines(s, packetOff)
		if reduceTo != "" {
			s.Title += " [reduced: workload.params " + reduceTo + "]"
			return reduce(s, reduceTo)
		}
		return nil
	}
	var name string
	units, code := runModel(arg, func(s *scenarios.Scenario) error { name = s.Name; return base(s) }, jobs, stderr)
	if units == nil {
		return code
	}
	flow, code := runModel(arg, func(s *scenarios.Scenario) error {
		if !setMachines(s, flowParams) {
			return fmt.Errorf("%s: no series runs on a machine with a network (%s)", s.File, strings.Join(slices.Sorted(maps.Keys(flowParams)), ", "))
		}
		return base(s)
	}, jobs, stderr)
	if flow == nil {
		return code
	}
	title := "### " + name
	if reduceTo != "" {
		title += " (reduced: workload params " + reduceTo + ")"
	}
	fmt.Fprintf(stdout, "%s\n\nCPU: units %.2f s, flow %.2f s (%.2fx).\n\n", title, units.cpu, flow.cpu, flow.cpu/max(units.cpu, 1e-9))
	fmt.Fprintf(stdout, "| series | points | largest difference | at | median difference |\n|---|---|---|---|---|\n")
	for _, d := range diffSeries(units.runs, flow.runs) {
		extra := ""
		if d.missing > 0 {
			extra = fmt.Sprintf(" (%d points on units only)", d.missing)
		}
		fmt.Fprintf(stdout, "| %s | %d%s | %s | %s | %s |\n", d.name, d.points, extra, pct(d.largest), d.where, pct(d.med))
	}
	if !units.v.ok() || !flow.v.ok() {
		fmt.Fprintf(stdout, "\nRun verdict: units %s; flow %s.\n", units.v.word(), flow.v.word())
	}
	if len(units.claims) > 0 {
		fmt.Fprintf(stdout, "\n| claim | units | flow |\n|---|---|---|\n")
		for i, c := range units.claims {
			f := flow.claims[i]
			fmt.Fprintf(stdout, "| %s | %s (%s) | %s (%s) |\n", c.Claim.Name, c.Status(), c.Measured, f.Status(), f.Measured)
		}
		fmt.Fprintf(stdout, "\nClaims: units %s; flow %s.\n", claimCount(units.claims), claimCount(flow.claims))
	}
	fmt.Fprintln(stdout)
	return exitOK
}

func (v verdict) ok() bool { return v.code == exitOK }

func (v verdict) word() string {
	if v.ok() {
		return "ok"
	}
	return firstLine(v.message)
}

func pct(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.2f %%", 100*x)
}

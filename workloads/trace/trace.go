package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/msgsim/msgsim/bench/traces"
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// Name is the workload's name in scenarios.
const Name = "trace"

// Params is workload.params: one of index, program and program_file.
type Params struct {
	// Index is a SimGrid time-independent trace's index file, relative to
	// the scenario file's directory (a built-in scenario's: to
	// bench/traces, whose traces are embedded).
	Index string `yaml:"index"`
	// Program is a hand-written program (a YAML op list, program.go),
	// run on Ranks ranks.
	Program *yaml.Node `yaml:"program"`
	// ProgramFile is a YAML file holding a program, relative to the
	// scenario file's directory.
	ProgramFile string `yaml:"program_file"`
	// Ranks is the number of ranks of a program (a trace has its own).
	Ranks int `yaml:"ranks"`
	// FlopsPerSecond converts a trace's compute amounts into time on the
	// replay's machine: 150e6, the Cray T3D's 150 MHz Alpha 21064 issuing
	// one floating-point result per cycle (hardware.yaml
	// t3d.clock_MHz), which is also the host speed of the SimGrid
	// platform bench/run.sh replays the same traces on, so that both
	// charge compute alike. The time is charged to the rank's CPU
	// (Compute, in its clock's cycles).
	FlopsPerSecond float64 `yaml:"flops_per_second"`
	// ComputeScale multiplies every compute amount (0: communication
	// alone; 2: a processor twice as slow).
	ComputeScale float64 `yaml:"compute_scale"`
	// Collectives is "stack" (the stack's own algorithm where its ranks
	// offer one, else the shared layer) or "shared" (the shared layer
	// always).
	Collectives string `yaml:"collectives"`
}

// DefaultParams: the T3D's flops, compute as traced, the stack's own
// collectives.
func DefaultParams() Params {
	return Params{FlopsPerSecond: 150e6, ComputeScale: 1, Collectives: "stack"}
}

func (p Params) validate() error {
	var errs []error
	given := 0
	for _, g := range []bool{p.Index != "", p.Program != nil && p.Program.Kind != 0, p.ProgramFile != ""} {
		if g {
			given++
		}
	}
	if given != 1 {
		errs = append(errs, fmt.Errorf("give exactly one of index (a SimGrid trace), program (ops in YAML) and program_file"))
	}
	if p.Index == "" && (p.Ranks < 1 || p.Ranks > maxRanks) {
		errs = append(errs, fmt.Errorf("ranks must be between 1 and %d for a program, got %d", maxRanks, p.Ranks))
	}
	if p.Index != "" && p.Ranks != 0 {
		errs = append(errs, fmt.Errorf("ranks is the trace's own (its index lists one file per rank): leave it out"))
	}
	if !(p.FlopsPerSecond > 0) || math.IsInf(p.FlopsPerSecond, 0) {
		errs = append(errs, fmt.Errorf("flops_per_second must be positive, got %g", p.FlopsPerSecond))
	}
	if !(p.ComputeScale >= 0) || math.IsInf(p.ComputeScale, 0) {
		errs = append(errs, fmt.Errorf("compute_scale must be 0 or more, got %g", p.ComputeScale))
	}
	if p.Collectives != "stack" && p.Collectives != "shared" {
		errs = append(errs, fmt.Errorf("collectives must be \"stack\" or \"shared\", got %q", p.Collectives))
	}
	return errors.Join(errs...)
}

func parseParams(s workloads.Spec) (Params, error) {
	p := DefaultParams()
	field := s.Workload.ParamsField("workload")
	if err := strictyaml.DecodeAt(s.File, field, s.Workload.Params, &p); err != nil {
		return Params{}, err
	}
	if err := p.validate(); err != nil {
		var errs []error
		for _, e := range strictyaml.Errors(err) {
			errs = append(errs, fmt.Errorf("%s: %s: %w", s.File, field, e))
		}
		return Params{}, errors.Join(errs...)
	}
	return p, nil
}

// builtin reports whether the scenario file is a built-in one.
func builtin(file string) bool { return strings.HasPrefix(file, "builtin/") }

// reader reads the files a scenario names: a built-in's from the embedded
// traces (named bench/traces/... in errors), another's from disk.
func reader(s workloads.Spec) (Reader, func(string) string) {
	if builtin(s.File) {
		return func(name string) ([]byte, error) {
				return fs.ReadFile(traces.FS, strings.TrimPrefix(name, "bench/traces/"))
			}, func(rel string) string {
				return path.Join("bench/traces", rel)
			}
	}
	return func(name string) ([]byte, error) { return os.ReadFile(filepath.FromSlash(name)) },
		func(rel string) string {
			if filepath.IsAbs(rel) {
				return filepath.ToSlash(rel)
			}
			return filepath.ToSlash(filepath.Join(filepath.Dir(s.File), rel))
		}
}

// Load decodes the series' params and compiles its program.
func Load(s workloads.Spec) (Params, *Program, error) {
	params, err := parseParams(s)
	if err != nil {
		return Params{}, nil, err
	}
	read, rel := reader(s)
	field := s.Workload.ParamsField("workload")
	var prog *Program
	switch {
	case params.Index != "":
		prog, err = ParseIndex(read, rel(params.Index))
		if err != nil && strings.HasPrefix(err.Error(), "trace index:") {
			at := strictyaml.Find(s.Workload.Params, "index")
			return params, nil, strictyaml.Errorf(s.File, at, field+".index", "%v", err)
		}
	case params.ProgramFile != "":
		name := rel(params.ProgramFile)
		data, rerr := read(name)
		if rerr != nil {
			at := strictyaml.Find(s.Workload.Params, "program_file")
			return params, nil, strictyaml.Errorf(s.File, at, field+".program_file", "%v", rerr)
		}
		var n yaml.Node
		if yerr := yaml.Unmarshal(data, &n); yerr != nil {
			return params, nil, fmt.Errorf("%s: %w", name, yerr)
		}
		if n.Kind == 0 {
			n = yaml.Node{Kind: yaml.SequenceNode, Line: 1, Column: 1}
		}
		prog, err = CompileProgram(name, &n, params.Ranks)
	default:
		prog, err = CompileProgram(s.File, params.Program, params.Ranks)
	}
	return params, prog, err
}

// Check validates a series without running it: its params, its program
// and the stack's pairing with as many ranks.
func Check(s workloads.Spec) error {
	_, prog, err := Load(s)
	if err != nil {
		return err
	}
	w, err := s.OpenWorld(sim.NewEngine(s.Seed), prog.Size())
	if err != nil {
		return err
	}
	if _, err := commsOf(w); err != nil {
		return fmt.Errorf("%s: %w", s.File, err)
	}
	return nil
}

// Estimate forecasts the series' events: every message of the program.
func Estimate(s workloads.Spec) (workloads.Estimate, error) {
	params, prog, err := Load(s)
	if err != nil {
		return workloads.Estimate{}, err
	}
	ev := 0.0
	n := float64(prog.Size())
	for _, ops := range prog.Ranks {
		for _, o := range ops {
			switch {
			case o.Kind == Send || o.Kind == Isend || o.Kind == SendRecv:
				ev += workloads.MessageEvents(o.Bytes)
			case o.Kind.Collective():
				// log2(n) tree messages, or n for the all-to-all kinds.
				per := math.Log2(max(n, 2))
				if o.Kind == Alltoall || o.Kind == Alltoallv || o.Kind == Allgather || o.Kind == Allgatherv {
					per = n
				}
				ev += per * workloads.MessageEvents(o.Bytes+o.RecvBytes)
			}
		}
	}
	param := "index"
	if params.Index == "" {
		param = "program"
	}
	return workloads.Estimate{Events: ev, Param: param}, nil
}

// Metrics of the rows.
const (
	MetricPredicted = "predicted_time_us" // x: ranks
	MetricCompute   = "compute_us"        // x: rank
	MetricComm      = "comm_us"
	MetricWait      = "wait_us"
	MetricCount     = "action_count" // x: action (its number, Kinds order)
	MetricKindTime  = "action_time_us"
)

// Run is the workloads.Runner: one replay.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, prog, err := Load(s)
	if err != nil {
		return workloads.Result{}, err
	}
	eng := s.NewEngine(s.Seed)
	w, err := s.OpenWorld(eng, prog.Size())
	if err != nil {
		return workloads.Result{}, err
	}
	out, err := replay(eng, w, prog, s.Seed, params.ComputeScale/params.FlopsPerSecond, params.Collectives == "shared")
	var res workloads.Result
	res.Events, res.SimTime = eng.Events(), eng.Now()
	if err != nil {
		return res, fmt.Errorf("%s: series %s: %w", s.File, s.Series, err)
	}
	res.Failures = out.Failures
	res.Notes = append(res.Notes, notes(s, prog, out)...)
	if len(out.Failures) > 0 {
		return res, nil
	}
	n := prog.Size()
	add := func(xname string, x float64, metric string, v float64, unit string) {
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: xname, X: x, Metric: metric, Value: v, Unit: unit})
	}
	add("ranks", float64(n), MetricPredicted, out.Predicted.Micros(), "us")
	for r := range n {
		add("rank", float64(r), MetricCompute, out.Time[r][catCompute].Micros(), "us")
		add("rank", float64(r), MetricComm, out.Time[r][catComm].Micros(), "us")
		add("rank", float64(r), MetricWait, out.Time[r][catWait].Micros(), "us")
	}
	for _, k := range Kinds() {
		if out.Count[k] > 0 {
			add("action", float64(k), MetricCount, float64(out.Count[k]), "ops")
			add("action", float64(k), MetricKindTime, out.KindTime[k].Micros(), "us")
		}
	}
	files, err := matrixFiles(s, out)
	if err != nil {
		return res, err
	}
	var acts bytes.Buffer
	acts.WriteString("action,count,time_us\n")
	for _, k := range Kinds() {
		if out.Count[k] > 0 {
			fmt.Fprintf(&acts, "%s,%d,%s\n", k, out.Count[k], report.FormatFloat(out.KindTime[k].Micros()))
		}
	}
	res.Files = append(files, workloads.File{Name: fileBase(s) + "-actions.csv", Data: acts.Bytes()})
	return res, nil
}

// notes describe the replay: the program, the algorithms, the actions.
func notes(s workloads.Spec, prog *Program, out *outcome) []string {
	var ns []string
	ops := 0
	for _, r := range prog.Ranks {
		ops += len(r)
	}
	ns = append(ns, fmt.Sprintf("%s: replayed %s: %d ranks, %d ops; predicted time %.3f us (the last rank's end)",
		s.Series, prog.Source, prog.Size(), ops, out.Predicted.Micros()))
	for _, k := range Kinds() {
		if a, ok := out.Algorithms[k]; ok {
			ns = append(ns, fmt.Sprintf("%s: %s: %s", s.Series, k, a))
		}
	}
	var b strings.Builder
	for _, k := range Kinds() {
		if out.Count[k] > 0 {
			fmt.Fprintf(&b, " %s %d (%.3f us)", k, out.Count[k], out.KindTime[k].Micros())
		}
	}
	if b.Len() > 0 {
		ns = append(ns, fmt.Sprintf("%s: actions (count, time summed over ranks):%s", s.Series, b.String()))
	}
	return ns
}

// fileBase is the series' prefix of its output files.
func fileBase(s workloads.Spec) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == ':' || r == '\\' {
			return '-'
		}
		return r
	}, s.Series)
}

// matrixFiles are the communication matrix as CSV (bytes rank i sent rank
// j: point-to-point messages and the shared collective layer's) and its
// heatmap.
func matrixFiles(s workloads.Spec, out *outcome) ([]workloads.File, error) {
	var b bytes.Buffer
	n := len(out.Matrix)
	b.WriteString("from\\to")
	for j := range n {
		fmt.Fprintf(&b, ",%d", j)
	}
	b.WriteString("\n")
	m := make([][]float64, n)
	for i, row := range out.Matrix {
		fmt.Fprintf(&b, "%d", i)
		m[i] = make([]float64, n)
		for j, v := range row {
			fmt.Fprintf(&b, ",%d", v)
			m[i][j] = float64(v)
		}
		b.WriteString("\n")
	}
	base := fileBase(s) + "-comm-matrix"
	png, err := report.Heatmap(s.Series+": bytes sent, rank (row) to rank (column)", "to rank", "from rank", "bytes", m)
	if err != nil {
		return nil, fmt.Errorf("%s: series %s: communication matrix: %w", s.File, s.Series, err)
	}
	return []workloads.File{{Name: base + ".csv", Data: b.Bytes()}, {Name: base + ".png", Data: png}}, nil
}

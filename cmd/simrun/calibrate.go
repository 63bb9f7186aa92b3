package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/calibration/fit"
	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/registry"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const calibrateHelp = `A calibration file fits, in the open, the parameters no source gives: it
names them (free: COMPONENT.FIELD, a machine's or stack's param, with its
bounds and why it is unknown), the data they are fitted to (training: a
built-in scenario's series, metric and x with the paper's value and its
source, or one of its claims), and the data the fit is judged on and never
fitted to (validation: claims and reference values). The built-in files
are in calibration/ (simrun calibrate --list); a file path works too.

  name: sx4-semop
  title: "The SX-4's System V semop, fitted to Figure 1's short-message latency"
  quick: true                     # cheap: --check and CI fit it
  free:
    - param: sx4.semop_us
      min: 100
      max: 2000
      start: 700
      step: 1                     # fitted values are multiples of it
      why: "no published SUPER-UX semop cost"
  training:
    - scenario: sx4-fig1
      series: shmem-sysv
      metric: latency_us
      x: 0
      value: 750
      source: "mpich-sx4.txt Figure 1, 'starting with 750 microseconds'"
      reduce: {sizes: [0]}        # merged over the workload params: run only x
  validation:
    claims: [{scenario: sx4-fig1}]

The fit minimises the sum over targets of weight x (relative residual)^2
(a training claim: its relative distance to its band, 0 when it holds)
with Nelder-Mead on the parameters scaled to [0, 1] by their bounds, each
trial value overriding the default and the scenario's own value; every
simulation of an evaluation runs in parallel on -j workers. Same file,
same values, byte for byte. Progress goes to stderr, one line per
evaluation. Writes DIR/fit.csv (every evaluation: params, objective),
DIR/residuals.csv (each target: value, simulated, relative residual),
DIR/validation.csv and DIR/validation.txt (each validation claim's verdict
and reference's error at the fitted values), DIR/summary.txt (printed),
and rewrites the file's fitted: block (values and tolerance) in place,
every other byte unchanged, unless --dry-run. A built-in's NAME run in the
repository reads and rewrites ./calibration/NAME.yaml (as edited);
elsewhere the copy in the binary is fitted and written to DIR/NAME.yaml. A scenario includes fitted
values by name: calibration: [sx4-semop]. A claim named as training counts
as "training (fitted)" in simrun claims and the report, never as holding.

--check [FILE-or-NAME...] (default: every built-in marked quick) re-fits
each file without writing anything and fails when a fitted value moved
beyond the file's tolerance (relative) from the stored one.

Exit status: 0 fitted (--check: every value within tolerance); 1 a run
failed, or --check found a value moved or missing; 2 bad input (a file
that does not parse, names an unknown param, scenario, series or claim:
every problem listed with file:line:column).
Example:
  simrun calibrate sx4-semop
  simrun calibrate mine.yaml --out /tmp/fit -j 2
  simrun calibrate --check`

func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	out := fs.String("out", "", "output directory (default results/calibration/NAME)")
	jobs := fs.Int("j", 0, "simulations at once (default GOMAXPROCS)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	dry := fs.Bool("dry-run", false, "do not rewrite the file's fitted: block")
	check := fs.Bool("check", false, "re-fit and compare with the stored values (default files: the quick built-ins)")
	list := fs.Bool("list", false, "list the built-in calibration files")
	pos, code, ok := parseFlags(fs, "calibrate", args, stdout, stderr)
	if !ok {
		return code
	}
	reg := builtins()
	progress := io.Writer(stderr)
	if *quiet {
		progress = nil
	}
	switch {
	case *list:
		return calibrateList(stdout, stderr)
	case *check:
		return calibrateCheck(reg, pos, *jobs, progress, stdout, stderr)
	}
	if !wantArgs("calibrate", pos, 1, stderr) {
		return exitUsage
	}
	f, errs := loadCalibration(reg, pos[0])
	if len(errs) > 0 {
		fmt.Fprint(stderr, joinLines(errs))
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", "calibration", f.Name)
	}
	start := time.Now()
	res, err := fit.Run(reg, f, fit.Options{Jobs: *jobs, Progress: progress})
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate %s: %v\n", f.Name, err)
		return exitFailed
	}
	if progress != nil {
		fmt.Fprintf(progress, "simrun calibrate %s: fitted after %d evaluations (%s); validating\n", f.Name, len(res.Evaluations), res.Status)
	}
	val, err := fit.Validate(reg, f, res.Values, *jobs)
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate %s: validation: %v\n", f.Name, err)
		return exitFailed
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return exitFailed
	}
	var summary bytes.Buffer
	writeCalibrationSummary(&summary, res, val, time.Since(start))
	files := map[string][]byte{
		"fit.csv":        fitCSV(res),
		"residuals.csv":  residualsCSV(res),
		"validation.csv": validationCSV(val),
		"validation.txt": validationTable(val),
		"summary.txt":    summary.Bytes(),
	}
	for _, name := range []string{"fit.csv", "residuals.csv", "validation.csv", "validation.txt", "summary.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return exitFailed
		}
	}
	if err := validationFigure(filepath.Join(dir, "validation"), res, val); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: validation figure: %v\n", err)
		return exitFailed
	}
	stdout.Write(summary.Bytes())
	if !*dry {
		target := calibrationTarget(f, dir)
		if err := os.WriteFile(target, f.WithFitted(res.Values), 0o644); err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stdout, "fitted: block written to %s\n", target)
	}
	fmt.Fprintf(stdout, "outputs in %s\n", dir)
	return exitOK
}

// loadCalibration parses and checks a calibration file: every problem,
// located.
func loadCalibration(reg *registry.Registry, arg string) (*calibration.File, []error) {
	// A built-in's name, run in the repository: the file as it is on
	// disk (perhaps edited since the build), which is the one rewritten.
	if local := "calibration/" + arg + ".yaml"; !strings.ContainsAny(arg, `/\.`) {
		if st, err := os.Stat(local); err == nil && !st.IsDir() {
			arg = local
		}
	}
	f, err := calibration.Lookup(arg)
	if f == nil {
		return nil, strictyaml.Errors(err)
	}
	errs := strictyaml.Errors(err)
	if err == nil {
		errs = append(errs, strictyaml.Errors(fit.Check(reg, f))...)
	}
	return f, errs
}

// calibrationTarget is where the fitted file is written: the file it was
// read from (for a built-in's name, ./calibration/NAME.yaml when it
// exists: loadCalibration read that one), else, for a built-in read from
// the binary, DIR/NAME.yaml.
func calibrationTarget(f *calibration.File, dir string) string {
	if st, err := os.Stat(f.Path); err == nil && !st.IsDir() {
		return f.Path
	}
	return filepath.Join(dir, f.Name+".yaml")
}

func calibrateList(stdout, stderr io.Writer) int {
	names, err := calibration.Builtin()
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return exitFailed
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, n := range names {
		f, err := calibration.LoadBuiltin(n)
		if err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return exitFailed
		}
		q := ""
		if f.Quick {
			q = "quick"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n, q, f.Title)
	}
	tw.Flush()
	return exitOK
}

// calibrateCheck re-fits each file and compares with its stored values.
func calibrateCheck(reg *registry.Registry, args []string, jobs int, progress, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		names, err := calibration.Builtin()
		if err != nil {
			fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
			return exitFailed
		}
		for _, n := range names {
			f, err := calibration.LoadBuiltin(n)
			if err != nil {
				fmt.Fprintf(stderr, "%v\n", err)
				return exitUsage
			}
			if f.Quick {
				args = append(args, n)
			}
		}
	}
	status := exitOK
	for _, arg := range args {
		f, errs := loadCalibration(reg, arg)
		if len(errs) > 0 {
			fmt.Fprint(stderr, joinLines(errs))
			return exitUsage
		}
		start := time.Now()
		res, err := fit.Run(reg, f, fit.Options{Jobs: jobs, Progress: progress})
		if err != nil {
			fmt.Fprintf(stderr, "simrun calibrate %s: %v\n", f.Name, err)
			status = exitFailed
			continue
		}
		moved := checkMoved(f, res.Values)
		for _, m := range moved {
			fmt.Fprintf(stdout, "%s: %s\n", f.Path, m)
		}
		verdict := "ok"
		if len(moved) > 0 {
			verdict = "MOVED"
			status = exitFailed
		}
		fmt.Fprintf(stdout, "%s %s: %d parameter(s), %d evaluations, objective %.3g, %.1f s\n", verdict, f.Name, len(f.Free), len(res.Evaluations), res.Objective, time.Since(start).Seconds())
	}
	return status
}

// checkMoved lists each fitted value that moved beyond the file's
// tolerance from the stored one (or has none stored).
func checkMoved(f *calibration.File, values map[string]float64) []string {
	var out []string
	for _, p := range f.Free {
		v := values[p.Param]
		if f.Fitted == nil {
			out = append(out, fmt.Sprintf("%s: no stored value (fitted %s): run simrun calibrate %s", p.Param, calibration.FormatValue(v, p.Step), f.Name))
			continue
		}
		stored, ok := f.Fitted.Values[p.Param]
		if !ok {
			out = append(out, fmt.Sprintf("%s: no stored value (fitted %s): run simrun calibrate %s", p.Param, calibration.FormatValue(v, p.Step), f.Name))
			continue
		}
		if d := math.Abs(v-stored) / math.Max(math.Abs(stored), 1e-300); d > f.Fitted.Tolerance {
			out = append(out, fmt.Sprintf("%s moved: stored %s, fitted %s (%.2f %%, tolerance %.2f %%)", p.Param, calibration.FormatValue(stored, p.Step), calibration.FormatValue(v, p.Step), 100*d, 100*f.Fitted.Tolerance))
		}
	}
	return out
}

func csvBytes(rows [][]string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows)
	return b.Bytes()
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func fitCSV(r *fit.Result) []byte {
	head := []string{"evaluation"}
	for _, p := range r.File.Free {
		head = append(head, p.Param)
	}
	rows := [][]string{append(head, "objective")}
	for _, e := range r.Evaluations {
		row := []string{strconv.Itoa(e.N)}
		for i := range r.File.Free {
			row = append(row, calibration.FormatValue(e.Params[i], 0))
		}
		rows = append(rows, append(row, g(e.Objective)))
	}
	return csvBytes(rows)
}

func residualsCSV(r *fit.Result) []byte {
	rows := [][]string{{"target", "source", "weight", "value", "simulated", "relative_residual"}}
	for _, x := range r.Residuals {
		val := ""
		if x.Target.Value != nil {
			val = g(*x.Target.Value)
		} else if x.Claim != nil {
			val = x.Claim.Status()
		}
		rows = append(rows, []string{x.Label, x.Target.Source, g(x.Target.WeightValue()), val, g(x.Simulated), g(x.Relative)})
	}
	return csvBytes(rows)
}

func validationCSV(v *fit.Validation) []byte {
	rows := [][]string{{"scenario", "kind", "name", "status", "paper", "simulated", "relative_error", "measured"}}
	for _, c := range v.Claims {
		st := c.Result.Status()
		if c.Err != "" {
			st = "run failed: " + c.Err
		}
		rows = append(rows, []string{c.Scenario, "claim", c.Result.Claim.Name, st, "", g(c.Result.Value), "", c.Result.Measured})
	}
	for _, r := range v.References {
		c := r.Comparison
		name := fmt.Sprintf("%s %s@%g", c.Reference.Series, c.Reference.Metric, c.Reference.X)
		if !c.Found {
			rows = append(rows, []string{r.Scenario, "reference", name, "missing", g(c.Reference.Value), "", "", ""})
			continue
		}
		rows = append(rows, []string{r.Scenario, "reference", name, "compared", g(c.Reference.Value), g(c.Simulated), g(c.RelErr), ""})
	}
	return csvBytes(rows)
}

func validationTable(v *fit.Validation) []byte {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	if len(v.Claims) > 0 {
		fmt.Fprintln(tw, "claim\tverdict\tmeasured")
		for _, c := range v.Claims {
			st := c.Result.Status()
			if c.Err != "" {
				st = "run failed"
			}
			fmt.Fprintf(tw, "%s %s\t%s\t%s\n", c.Scenario, c.Result.Claim.Name, st, c.Result.Measured)
		}
	}
	if len(v.References) > 0 {
		if len(v.Claims) > 0 {
			fmt.Fprintln(tw, "\t\t")
		}
		fmt.Fprintln(tw, "reference\tpaper\tsimulated\terror")
		for _, r := range v.References {
			c := r.Comparison
			name := fmt.Sprintf("%s %s %s@%g", r.Scenario, c.Reference.Series, c.Reference.Metric, c.Reference.X)
			if !c.Found {
				fmt.Fprintf(tw, "%s\t%s\tmissing\t\n", name, g(c.Reference.Value))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f %%\n", name, g(c.Reference.Value), g(c.Simulated), 100*c.RelErr)
		}
	}
	tw.Flush()
	return b.Bytes()
}

// writeCalibrationSummary is the fit in a few lines: the values, each
// target's residual, the validation's verdicts.
func writeCalibrationSummary(w io.Writer, r *fit.Result, v *fit.Validation, took time.Duration) {
	f := r.File
	fmt.Fprintf(w, "calibration %s: %s\n", f.Name, f.Title)
	fmt.Fprintf(w, "%d evaluations (%s), objective %.3g, %.1f s\n", len(r.Evaluations), r.Status, r.Objective, took.Seconds())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "parameter\tfitted\tbounds\tstored")
	for i, p := range f.Free {
		stored := "-"
		if f.Fitted != nil {
			if s, ok := f.Fitted.Values[p.Param]; ok {
				stored = calibration.FormatValue(s, p.Step)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t[%g, %g]\t%s\n", p.Param, calibration.FormatValue(r.Params[i], p.Step), *p.Min, *p.Max, stored)
	}
	fmt.Fprintln(tw, "training target\tvalue\tsimulated\tresidual")
	for _, x := range r.Residuals {
		val := ""
		if x.Target.Value != nil {
			val = g(*x.Target.Value)
		} else if x.Claim != nil {
			val = "claim " + x.Claim.Status()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.2f %%\n", x.Label, val, g(x.Simulated), 100*x.Relative)
	}
	tw.Flush()
	holds, fails := 0, 0
	for _, c := range v.Claims {
		if c.Result.Holds && c.Err == "" {
			holds++
		} else {
			fails++
		}
	}
	worst := 0.0
	for _, rf := range v.References {
		if rf.Comparison.Found {
			worst = math.Max(worst, math.Abs(rf.Comparison.RelErr))
		}
	}
	fmt.Fprintf(w, "validation: %d claims, %d hold, %d fail", len(v.Claims), holds, fails)
	if len(v.References) > 0 {
		fmt.Fprintf(w, "; %d reference values, largest error %.1f %%", len(v.References), 100*worst)
	}
	fmt.Fprintln(w)
	if fails > 0 {
		for _, c := range v.Claims {
			if !c.Result.Holds || c.Err != "" {
				fmt.Fprintf(w, "  FAILS %s %s: %s\n", c.Scenario, c.Result.Claim.Name, c.Result.Measured)
			}
		}
	}
}

// validationFigure draws paper against simulated values, training targets
// and validation references apart, on log axes with the line y = x:
// DIR/validation.png and .svg. Nothing is drawn when no value is positive.
func validationFigure(base string, r *fit.Result, v *fit.Validation) error {
	var train, held plotter.XYs
	for _, x := range r.Residuals {
		if x.Target.Value != nil && *x.Target.Value > 0 && x.Simulated > 0 {
			train = append(train, plotter.XY{X: *x.Target.Value, Y: x.Simulated})
		}
	}
	for _, rf := range v.References {
		if c := rf.Comparison; c.Found && c.Reference.Value > 0 && c.Simulated > 0 {
			held = append(held, plotter.XY{X: c.Reference.Value, Y: c.Simulated})
		}
	}
	if len(train)+len(held) == 0 {
		return nil
	}
	p := plot.New()
	p.Title.Text = "calibration " + r.File.Name + ": paper against simulated"
	p.X.Label.Text = "paper value"
	p.Y.Label.Text = "simulated value"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{}, plot.LogTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range append(slicesClone(train), held...) {
		lo, hi = math.Min(lo, math.Min(pt.X, pt.Y)), math.Max(hi, math.Max(pt.X, pt.Y))
	}
	line, err := plotter.NewLine(plotter.XYs{{X: lo / 1.5, Y: lo / 1.5}, {X: hi * 1.5, Y: hi * 1.5}})
	if err != nil {
		return err
	}
	line.Color = color.Gray{Y: 160}
	p.Add(line)
	p.Legend.Add("simulated = paper", line)
	for _, s := range []struct {
		name  string
		pts   plotter.XYs
		col   color.Color
		shape draw.GlyphDrawer
	}{{"training (fitted)", train, color.RGBA{R: 200, A: 255}, draw.CircleGlyph{}}, {"validation (held out)", held, color.RGBA{B: 200, A: 255}, draw.SquareGlyph{}}} {
		if len(s.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = s.col, s.shape, vg.Points(3)
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	p.Legend.Top, p.Legend.Left = true, true
	for _, ext := range []string{"png", "svg"} {
		if err := p.Save(5*vg.Inch, 5*vg.Inch, base+"."+ext); err != nil {
			return err
		}
	}
	return nil
}

func slicesClone(x plotter.XYs) plotter.XYs { return append(plotter.XYs(nil), x...) }

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/calibration"
	"github.com/msgsim/msgsim/report"
)

// resultsDoc is what simrun report reads of a results.json.
type resultsDoc struct {
	Scenario struct {
		Name        string   `json:"name"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		File        string   `json:"file"`
		Series      []string `json:"series"`
		Verdict     string   `json:"verdict"`
		Expect      *struct {
			Failure string `json:"failure"`
			Why     string `json:"why"`
		} `json:"expect"`
	} `json:"scenario"`
	Seed        uint64       `json:"seed"`
	Rows        []report.Row `json:"rows"`
	Comparisons []struct {
		Reference struct {
			Series string  `json:"series"`
			Metric string  `json:"metric"`
			X      float64 `json:"x"`
			Value  float64 `json:"value"`
			Unit   string  `json:"unit"`
			Source string  `json:"source"`
		} `json:"reference"`
		Found     bool    `json:"found"`
		Simulated float64 `json:"simulated"`
		RelErr    float64 `json:"rel_err"`
		Training  string  `json:"-"` // the calibration file fitted to it, if any
	} `json:"comparisons"`
	Claims []struct {
		Claim struct {
			Name    string `json:"name"`
			Quote   string `json:"quote"`
			Section string `json:"section"`
			Note    string `json:"note"`
		} `json:"claim"`
		Holds    bool   `json:"holds"`
		Measured string `json:"measured"`
		Missing  string `json:"missing"`
		Training string `json:"-"` // the calibration file fitted to it, if any
	} `json:"claims"`
	Failures []string `json:"failures"`
	Notes    []string `json:"notes"`
}

// reportPage is one results directory as the report shows it.
type reportPage struct {
	Dir     string // relative to the page showing it
	Page    string // its own page (--pages), relative to the index; "" if none
	Doc     resultsDoc
	Figures []string // PNG files, relative to the page showing them
	Values  []valueTable
	Summary string // summary.txt, if present
	Holds   int    // claims that hold, training claims apart
	Train   int    // training claims: fitted to, never counted as holding
}

// valueTable is one metric's values: x down, series across.
type valueTable struct {
	Metric, Unit, XName string
	Series              []string
	Rows                []valueRow
}

type valueRow struct {
	X      string
	Values []string // by series; "" where a series has no value at X
}

// valueTables arranges rows as one table per metric, in first-seen order.
func valueTables(rows report.Results) []valueTable {
	var out []valueTable
	for _, m := range rows.Metrics() {
		mr := rows.ByMetric(m)
		vt := valueTable{Metric: m, Unit: mr[0].Unit, XName: mr[0].XName, Series: mr.Series()}
		var xs []float64
		for _, r := range mr {
			if !slices.Contains(xs, r.X) {
				xs = append(xs, r.X)
			}
		}
		slices.Sort(xs)
		for _, x := range xs {
			vr := valueRow{X: report.FormatFloat(x), Values: make([]string, len(vt.Series))}
			for _, r := range mr {
				if r.X == x {
					vr.Values[slices.Index(vt.Series, r.Series)] = report.Short(r.Value)
				}
			}
			vt.Rows = append(vt.Rows, vr)
		}
		out = append(out, vt)
	}
	return out
}

var reportFuncs = template.FuncMap{
	"pct":   func(x float64) string { return fmt.Sprintf("%+.1f %%", 100*x) },
	"minus": func(a, b int) int { return a - b },
	"num":   func(x float64) string { return fmt.Sprintf("%.4g", x) },
	"ok":    func(verdict string) bool { return !strings.HasPrefix(verdict, "FAILED") },
}

const pageHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
td.v{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#060}.bad{color:#a00}.train{color:#555}img{max-width:100%;border:1px solid #eee}pre{white-space:pre-wrap}
section{border-top:2px solid #ddd;margin-top:2em}</style>
</head><body>
`

// scenarioBody is a scenario's section: on its own page (--pages) and in
// the index.
const scenarioBody = `{{define "scenario"}}<h2 id="{{.Doc.Scenario.Name}}">{{.Doc.Scenario.Name}}: {{.Doc.Scenario.Title}}</h2>
<p>{{.Doc.Scenario.Description}}</p>
<p>File <code>{{.Doc.Scenario.File}}</code>, seed {{.Doc.Seed}}; series: {{range $i, $s := .Doc.Scenario.Series}}{{if $i}}, {{end}}{{$s}}{{end}}; results in <code>{{.Dir}}</code></p>
<p id="verdict-{{.Doc.Scenario.Name}}" class="{{if ok .Doc.Scenario.Verdict}}ok{{else}}bad{{end}}">Result: {{.Doc.Scenario.Verdict}}</p>
<h3>Figures</h3>
{{range .Figures}}<p><img src="{{.}}" alt="{{.}}"></p>
{{else}}<p>none</p>
{{end}}<h3>Values</h3>
<div id="values-{{.Doc.Scenario.Name}}">{{range .Values}}<table><caption>{{.Metric}}{{if .Unit}} ({{.Unit}}){{end}}</caption>
<tr><th>{{.XName}}</th>{{range .Series}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td class="v">{{.X}}</td>{{range .Values}}<td class="v">{{.}}</td>{{end}}</tr>
{{end}}</table>
{{else}}<p>none</p>
{{end}}</div>
<h3>Paper vs simulated</h3>
{{if .Doc.Comparisons}}<table id="references-{{.Doc.Scenario.Name}}"><tr><th>series</th><th>metric</th><th>x</th><th>paper</th><th>simulated</th><th>error</th><th>source</th></tr>
{{range .Doc.Comparisons}}<tr><td>{{.Reference.Series}}</td><td>{{.Reference.Metric}}</td><td class="v">{{num .Reference.X}}</td><td class="v">{{num .Reference.Value}} {{.Reference.Unit}}</td><td class="v">{{if .Found}}{{num .Simulated}}{{else}}missing{{end}}</td><td class="v">{{if .Found}}{{pct .RelErr}}{{end}}</td><td>{{.Reference.Source}}{{if .Training}} <small class="train">(training: fitted by calibration/{{.Training}}.yaml)</small>{{end}}</td></tr>
{{end}}</table>
{{else}}<p>none</p>
{{end}}<h3>Claims of the paper</h3>
{{if .Doc.Claims}}<table id="claims-{{.Doc.Scenario.Name}}"><tr><th>claim</th><th>status</th><th>measured</th><th>the paper's words</th></tr>
{{range .Doc.Claims}}<tr><td>{{.Claim.Name}}</td><td class="{{if .Training}}train{{else if .Holds}}ok{{else}}bad{{end}}">{{if .Training}}training (fitted: calibration/{{.Training}}.yaml){{if not .Holds}}, FAILS{{end}}{{else if .Holds}}holds{{else}}FAILS{{end}}</td><td>{{.Measured}}{{.Missing}}</td><td>“{{.Claim.Quote}}” ({{.Claim.Section}}){{if .Claim.Note}}<br><small>{{.Claim.Note}}</small>{{end}}</td></tr>
{{end}}</table>
{{else}}<p>none</p>
{{end}}<h3>Failures</h3>
{{if .Doc.Failures}}<ul id="failures-{{.Doc.Scenario.Name}}">{{range .Doc.Failures}}<li><pre>{{.}}</pre></li>{{end}}</ul>{{else}}<p>none</p>{{end}}
<h3>Notes</h3>
{{if .Doc.Notes}}<pre id="notes-{{.Doc.Scenario.Name}}">{{range .Doc.Notes}}{{.}}
{{end}}</pre>{{else}}<p>none</p>{{end}}
{{if .Summary}}<details><summary>summary.txt</summary><pre>{{.Summary}}</pre></details>{{end}}
{{end}}`

var pageTmpl = template.Must(template.New("page").Funcs(reportFuncs).Parse(pageHead + `{{if .Up}}<p><a href="{{.Up}}">index</a></p>
{{end}}{{with .P}}{{template "scenario" .}}{{end}}</body></html>
` + scenarioBody))

var indexTmpl = template.Must(template.New("index").Funcs(reportFuncs).Parse(pageHead + `<h1>{{.Title}}</h1>
<p>{{len .Pages}} scenario(s) simulated by msgsim, read from <code>{{.Root}}</code>: what each ran, its figures and values, the paper's values against the simulated ones, and the paper's claims.</p>
<table id="scenarios"><tr><th>scenario</th><th>title</th><th>result</th><th>claims</th><th>references</th></tr>
{{range .Pages}}<tr><td><a href="{{if .Page}}{{.Page}}{{else}}#{{.Doc.Scenario.Name}}{{end}}">{{.Doc.Scenario.Name}}</a></td><td>{{.Doc.Scenario.Title}}</td><td class="{{if ok .Doc.Scenario.Verdict}}ok{{else}}bad{{end}}">{{.Doc.Scenario.Verdict}}</td><td>{{if .Doc.Claims}}{{.Holds}} of {{minus (len .Doc.Claims) .Train}} hold{{if .Train}}, {{.Train}} training (fitted){{end}}{{end}}</td><td>{{len .Doc.Comparisons}}</td></tr>
{{end}}</table>
{{range .Pages}}<section>{{template "scenario" .}}</section>
{{end}}</body></html>
` + scenarioBody))

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "the report's file (default DIR/index.html; DIR.html when DIR is itself a results directory)")
	title := fs.String("title", "", "the report's title (default: msgsim results, and the scenarios when they are few)")
	pages := fs.Bool("pages", false, "also write a page per results directory, DIR/NAME/index.html")
	pos, code, ok := parseFlags(fs, "report", args, stdout, stderr)
	if !ok {
		return code
	}
	root := "results"
	if len(pos) > 1 {
		wantArgs("report", pos, 1, stderr)
		return exitUsage
	}
	if len(pos) == 1 {
		root = pos[0]
	}
	n, file, err := writeReport(root, reportOptions{out: *out, title: *title, pages: *pages})
	if err != nil {
		fmt.Fprintf(stderr, "simrun report: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%d scenario(s); open %s\n", n, file)
	return exitOK
}

// reportOptions are simrun report's flags.
type reportOptions struct {
	out, title string
	pages      bool
}

// writeReport writes one HTML file (opts.out, by default root/index.html,
// or root.html when root is itself a results directory) showing every
// results directory under root (root itself, or its subdirectories,
// holding a results.json): an index table, then each scenario's figures,
// values, references, claims, failures and notes. Nothing is written into
// the results directories unless opts.pages asks for a page in each.
// Static files only: no server, no network, no script. It returns the
// number of scenarios and the file written.
func writeReport(root string, opts reportOptions) (int, string, error) {
	training, err := calibration.BuiltinTraining()
	if err != nil {
		return 0, "", err
	}
	single := false
	var dirs []string
	if _, err := os.Stat(filepath.Join(root, "results.json")); err == nil {
		dirs, single = append(dirs, "."), true
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w (run simrun run first; results go to results/NAME)", root, err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "results.json")); e.IsDir() && err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) == 0 {
		return 0, "", fmt.Errorf("no results.json in %s or its subdirectories (run simrun run first)", root)
	}
	out := opts.out
	switch {
	case out != "":
	case single:
		out = filepath.Clean(root) + ".html"
	default:
		out = filepath.Join(root, "index.html")
	}
	base := filepath.Dir(out)
	rel := func(path string) (string, error) {
		r, err := filepath.Rel(base, path)
		if err != nil {
			return "", fmt.Errorf("%s from %s: %w", path, base, err)
		}
		return filepath.ToSlash(r), nil
	}
	var pages []reportPage
	for _, d := range dirs {
		dir := filepath.Join(root, d)
		data, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err != nil {
			return 0, "", err
		}
		var p reportPage
		if err := json.Unmarshal(data, &p.Doc); err != nil {
			return 0, "", fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
		}
		if sum, err := os.ReadFile(filepath.Join(dir, "summary.txt")); err == nil {
			p.Summary = string(sum)
		}
		name := p.Doc.Scenario.Name
		for i := range p.Doc.Claims {
			c := &p.Doc.Claims[i]
			c.Training = training.Claim(name, c.Claim.Name)
			switch {
			case c.Training != "":
				p.Train++
			case c.Holds:
				p.Holds++
			}
		}
		for i := range p.Doc.Comparisons {
			r := &p.Doc.Comparisons[i].Reference
			p.Doc.Comparisons[i].Training = training.Value(name, r.Series, r.Metric, r.X)
		}
		p.Values = valueTables(p.Doc.Rows)
		pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
		slices.Sort(pngs)
		if opts.pages && !single {
			// The scenario's own page, in its directory, as asked.
			own := p
			own.Dir = "."
			for _, f := range pngs {
				own.Figures = append(own.Figures, filepath.Base(f))
			}
			up, err := filepath.Rel(dir, out)
			if err != nil {
				return 0, "", err
			}
			var b bytes.Buffer
			if err := pageTmpl.Execute(&b, map[string]any{"Title": p.Doc.Scenario.Name, "P": own, "Up": filepath.ToSlash(up)}); err != nil {
				return 0, "", err
			}
			if err := os.WriteFile(filepath.Join(dir, "index.html"), b.Bytes(), 0o644); err != nil {
				return 0, "", err
			}
			if p.Page, err = rel(filepath.Join(dir, "index.html")); err != nil {
				return 0, "", err
			}
		}
		if p.Dir, err = rel(dir); err != nil {
			return 0, "", err
		}
		for _, f := range pngs {
			r, err := rel(f)
			if err != nil {
				return 0, "", err
			}
			p.Figures = append(p.Figures, r)
		}
		pages = append(pages, p)
	}
	title := opts.title
	if title == "" {
		title = reportTitle(pages)
	}
	var b bytes.Buffer
	if err := indexTmpl.Execute(&b, map[string]any{"Title": title, "Root": root, "Pages": pages}); err != nil {
		return 0, "", err
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return 0, "", fmt.Errorf("writing the report: %w", err)
	}
	return len(pages), out, nil
}

// reportTitle is the default title: "msgsim results: " and the scenarios'
// names (up to three), else their number.
func reportTitle(pages []reportPage) string {
	if len(pages) > 3 {
		return fmt.Sprintf("msgsim results: %d scenarios", len(pages))
	}
	var names []string
	for _, p := range pages {
		names = append(names, p.Doc.Scenario.Name)
	}
	return "msgsim results: " + strings.Join(names, ", ")
}

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
	Seed        uint64 `json:"seed"`
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
	} `json:"claims"`
	Failures []string `json:"failures"`
	Notes    []string `json:"notes"`
}

// reportPage is one results directory as the report shows it.
type reportPage struct {
	Dir     string // relative to the index
	Doc     resultsDoc
	Figures []string // PNG files, relative to Dir
	Summary string   // summary.txt, if present
	Holds   int
}

var reportFuncs = template.FuncMap{
	"pct": func(x float64) string { return fmt.Sprintf("%+.1f %%", 100*x) },
	"num": func(x float64) string { return fmt.Sprintf("%.4g", x) },
	"ok":  func(verdict string) bool { return !strings.HasPrefix(verdict, "FAILED") },
}

const pageHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
.ok{color:#060}.bad{color:#a00}img{max-width:100%;border:1px solid #eee}pre{white-space:pre-wrap}</style>
</head><body>
`

var pageTmpl = template.Must(template.New("page").Funcs(reportFuncs).Parse(pageHead + `<p><a href="{{.Up}}">index</a></p>
{{with .P}}<h1>{{.Doc.Scenario.Name}}</h1>
<p>{{.Doc.Scenario.Title}}</p>
<p>{{.Doc.Scenario.Description}}</p>
<p>File <code>{{.Doc.Scenario.File}}</code>, seed {{.Doc.Seed}}; series: {{range $i, $s := .Doc.Scenario.Series}}{{if $i}}, {{end}}{{$s}}{{end}}</p>
<p id="verdict" class="{{if ok .Doc.Scenario.Verdict}}ok{{else}}bad{{end}}">Result: {{.Doc.Scenario.Verdict}}</p>
<h2>Figures</h2>
{{range .Figures}}<p><img src="{{.}}" alt="{{.}}"></p>
{{else}}<p>none</p>
{{end}}<h2>Paper vs simulated</h2>
{{if .Doc.Comparisons}}<table id="references"><tr><th>series</th><th>metric</th><th>x</th><th>paper</th><th>simulated</th><th>error</th><th>source</th></tr>
{{range .Doc.Comparisons}}<tr><td>{{.Reference.Series}}</td><td>{{.Reference.Metric}}</td><td>{{num .Reference.X}}</td><td>{{num .Reference.Value}} {{.Reference.Unit}}</td><td>{{if .Found}}{{num .Simulated}}{{else}}missing{{end}}</td><td>{{if .Found}}{{pct .RelErr}}{{end}}</td><td>{{.Reference.Source}}</td></tr>
{{end}}</table>
{{else}}<p>none</p>
{{end}}<h2>Claims of the paper</h2>
{{if .Doc.Claims}}<table id="claims"><tr><th>claim</th><th>status</th><th>measured</th><th>the paper's words</th></tr>
{{range .Doc.Claims}}<tr><td>{{.Claim.Name}}</td><td class="{{if .Holds}}ok{{else}}bad{{end}}">{{if .Holds}}holds{{else}}FAILS{{end}}</td><td>{{.Measured}}{{.Missing}}</td><td>“{{.Claim.Quote}}” ({{.Claim.Section}}){{if .Claim.Note}}<br><small>{{.Claim.Note}}</small>{{end}}</td></tr>
{{end}}</table>
{{else}}<p>none</p>
{{end}}<h2>Failures</h2>
{{if .Doc.Failures}}<ul id="failures">{{range .Doc.Failures}}<li><pre>{{.}}</pre></li>{{end}}</ul>{{else}}<p>none</p>{{end}}
<h2>Notes</h2>
{{if .Doc.Notes}}<pre id="notes">{{range .Doc.Notes}}{{.}}
{{end}}</pre>{{else}}<p>none</p>{{end}}
{{if .Summary}}<h2>summary.txt</h2><pre>{{.Summary}}</pre>{{end}}
{{end}}</body></html>
`))

var indexTmpl = template.Must(template.New("index").Funcs(reportFuncs).Parse(pageHead + `<h1>{{.Title}}</h1>
<table id="scenarios"><tr><th>scenario</th><th>title</th><th>result</th><th>claims</th><th>references</th></tr>
{{range .Pages}}<tr><td><a href="{{.Dir}}/index.html">{{.Doc.Scenario.Name}}</a></td><td>{{.Doc.Scenario.Title}}</td><td class="{{if ok .Doc.Scenario.Verdict}}ok{{else}}bad{{end}}">{{.Doc.Scenario.Verdict}}</td><td>{{if .Doc.Claims}}{{.Holds}} of {{len .Doc.Claims}} hold{{end}}</td><td>{{len .Doc.Comparisons}}</td></tr>
{{end}}</table>
</body></html>
`))

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
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
	pages, err := writeReport(root)
	if err != nil {
		fmt.Fprintf(stderr, "simrun report: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%d scenario page(s); open %s\n", pages, filepath.Join(root, "index.html"))
	return exitOK
}

// writeReport writes an index.html in every results directory under root
// (root itself, or its subdirectories, holding a results.json) and an
// index.html in root linking them. Static files only: no server, no
// network, no script. It returns the number of scenario pages.
func writeReport(root string) (int, error) {
	var dirs []string
	if _, err := os.Stat(filepath.Join(root, "results.json")); err == nil {
		dirs = append(dirs, ".")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w (run simrun run first; results go to results/NAME)", root, err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "results.json")); e.IsDir() && err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) == 0 {
		return 0, fmt.Errorf("no results.json in %s or its subdirectories (run simrun run first)", root)
	}
	var pages []reportPage
	for _, d := range dirs {
		dir := filepath.Join(root, d)
		data, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err != nil {
			return 0, err
		}
		p := reportPage{Dir: d}
		if err := json.Unmarshal(data, &p.Doc); err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
		}
		if sum, err := os.ReadFile(filepath.Join(dir, "summary.txt")); err == nil {
			p.Summary = string(sum)
		}
		pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
		for _, f := range pngs {
			p.Figures = append(p.Figures, filepath.Base(f))
		}
		slices.Sort(p.Figures)
		for _, c := range p.Doc.Claims {
			if c.Holds {
				p.Holds++
			}
		}
		up := "../index.html"
		if d == "." {
			up = "index.html"
		}
		var b bytes.Buffer
		if err := pageTmpl.Execute(&b, map[string]any{"Title": p.Doc.Scenario.Name, "P": p, "Up": up}); err != nil {
			return 0, err
		}
		name := "index.html"
		if d == "." {
			name = "scenario.html"
			p.Dir = "."
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return 0, err
		}
		pages = append(pages, p)
	}
	if len(dirs) == 1 && dirs[0] == "." {
		// A single results directory: its page is the index.
		return 1, os.Rename(filepath.Join(root, "scenario.html"), filepath.Join(root, "index.html"))
	}
	var b bytes.Buffer
	if err := indexTmpl.Execute(&b, map[string]any{"Title": "msgsim results: " + root, "Pages": pages}); err != nil {
		return 0, err
	}
	return len(pages), os.WriteFile(filepath.Join(root, "index.html"), b.Bytes(), 0o644)
}

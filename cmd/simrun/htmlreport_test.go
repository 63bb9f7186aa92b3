package main

import (
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// htmlDoc is what the test reads back of a page: every element's
// attributes and the text under each element with an id.
type htmlDoc struct {
	hrefs, imgs []string
	byID        map[string]string
	title       string // of the h1
}

// parseHTML parses a page with encoding/xml in HTML mode (void elements
// auto-closed, HTML entities): a page that does not parse fails the test.
func parseHTML(t *testing.T, path string) htmlDoc {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	doc := htmlDoc{byID: map[string]string{}}
	var ids []string // open elements' ids ("" when none)
	inH1 := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			id := ""
			for _, a := range x.Attr {
				switch {
				case a.Name.Local == "href":
					doc.hrefs = append(doc.hrefs, a.Value)
				case a.Name.Local == "src" && x.Name.Local == "img":
					doc.imgs = append(doc.imgs, a.Value)
				case a.Name.Local == "id":
					id = a.Value
				}
			}
			ids = append(ids, id)
			inH1 = x.Name.Local == "h1"
		case xml.EndElement:
			inH1 = false
			if len(ids) > 0 {
				ids = ids[:len(ids)-1]
			}
		case xml.CharData:
			if inH1 {
				doc.title += string(x)
			}
			for _, id := range ids {
				if id != "" {
					doc.byID[id] += string(x)
				}
			}
		}
	}
	return doc
}

// TestReport: simrun report writes one titled page, DIR/index.html, with
// an index of the scenarios and, for each, its figures, a table of its
// values and the paper-vs-simulated table; every link and image
// resolves; nothing is written into the results directories unless
// --pages asks for a page in each.
func TestReport(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	names := []string{"litmus-mp", "sx4-lockfree-nofence", "sx4-fig6"}
	for _, s := range names {
		if code, out, errs := simrun(t, "run", s, "--quiet", "--out", filepath.Join(root, s)); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s%s", s, code, out, errs)
		}
	}
	listing := func() []string {
		var files []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			files = append(files, p)
			return err
		})
		return files
	}
	before := listing()
	if code, out, errs := simrun(t, "report", root); code != exitOK || !strings.Contains(out, "3 scenario(s)") {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	if got := listing(); len(got) != len(before)+1 || !slices.Contains(got, filepath.Join(root, "index.html")) {
		t.Errorf("report wrote %v, want only %s", got, filepath.Join(root, "index.html"))
	}
	index := parseHTML(t, filepath.Join(root, "index.html"))
	if !strings.Contains(index.title, "litmus-mp, sx4-fig6, sx4-lockfree-nofence") || strings.Contains(index.title, ": results") {
		t.Errorf("title %q", index.title)
	}
	for _, s := range names {
		if !strings.Contains(index.byID["scenarios"], s) || !slices.Contains(index.hrefs, "#"+s) {
			t.Errorf("index: %s not linked (links %v)", s, index.hrefs)
		}
		if !strings.Contains(index.byID["verdict-"+s], "Result: ") {
			t.Errorf("%s: no verdict", s)
		}
	}
	if !strings.Contains(index.byID["failures-sx4-lockfree-nofence"], "corruption") || !strings.Contains(index.byID["verdict-sx4-lockfree-nofence"], "expected failure") {
		t.Errorf("failures %q verdict %q", index.byID["failures-sx4-lockfree-nofence"], index.byID["verdict-sx4-lockfree-nofence"])
	}
	if !strings.Contains(index.byID["references-sx4-fig6"], "Figure 6") {
		t.Errorf("references %q", index.byID["references-sx4-fig6"])
	}
	// litmus-mp's values: the runs per final state, by series.
	if v := index.byID["values-litmus-mp"]; !strings.Contains(v, "count (runs)") || !strings.Contains(v, "MP+fences-pso") || !strings.Contains(v, "state_r0r1") {
		t.Errorf("values of litmus-mp: %q", v)
	}
	if len(index.imgs) < 2 {
		t.Errorf("images %v", index.imgs)
	}
	for _, src := range index.imgs {
		if _, err := os.Stat(filepath.Join(root, src)); err != nil {
			t.Errorf("%s does not resolve: %v", src, err)
		}
	}

	// --pages: a page per results directory too, linked from the index.
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := simrun(t, "report", root, "--pages", "--out", out, "--title", "My runs"); code != exitOK {
		t.Fatal(errs)
	}
	index = parseHTML(t, out)
	if index.title != "My runs" {
		t.Errorf("title %q", index.title)
	}
	for _, s := range names {
		page := filepath.Join(root, s, "index.html")
		p := parseHTML(t, page)
		if !strings.Contains(p.byID["verdict-"+s], "Result: ") {
			t.Errorf("%s: no verdict", page)
		}
		for _, src := range append(p.imgs, p.hrefs...) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), src)); err != nil {
				t.Errorf("%s: %s does not resolve: %v", page, src, err)
			}
		}
	}
	for _, h := range index.hrefs {
		if _, err := os.Stat(filepath.Join(filepath.Dir(out), h)); err != nil {
			t.Errorf("index link %s does not resolve: %v", h, err)
		}
	}

	// One results directory: the report goes beside it, not into it.
	one := filepath.Join(root, "litmus-mp")
	if code, out, errs := simrun(t, "report", one); code != exitOK || !strings.Contains(out, one+".html") {
		t.Fatalf("report of one directory: exit %d\n%s%s", code, out, errs)
	}
	// A directory without results is bad input.
	if code, _, errs := simrun(t, "report", t.TempDir()); code != exitUsage || !strings.Contains(errs, "no results.json") {
		t.Errorf("empty dir: exit %d %s", code, errs)
	}
}

// TestReportScreenshot renders the report in a headless Chromium when one
// is installed (Debian: apt-get install chromium) and checks it produced
// an image; it skips, saying so, where there is none.
func TestReportScreenshot(t *testing.T) {
	var browser string
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no Chromium here (apt-get install chromium): the report is checked by parsing only")
	}
	root := filepath.Join(t.TempDir(), "results")
	if code, out, errs := simrun(t, "run", "litmus-mp", "--quiet", "--out", filepath.Join(root, "litmus-mp")); code != exitOK {
		t.Fatalf("run: %d\n%s%s", code, out, errs)
	}
	if code, _, errs := simrun(t, "report", root); code != exitOK {
		t.Fatal(errs)
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--screenshot="+shot, "--window-size=1200,900",
		"file://"+filepath.Join(root, "index.html"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
		t.Errorf("no screenshot: %v", err)
	}
}

// TestReportAnchorsUnique: two results directories of one scenario (a run
// and a copy) get anchors of their own, named by their directories, and
// the index links each to its section.
func TestReportAnchorsUnique(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	for _, d := range []string{"a", "b"} {
		if code, _, errs := simrun(t, "run", "litmus-sb-tso", "--quiet", "--out", filepath.Join(root, d)); code != exitOK {
			t.Fatalf("run: %s", errs)
		}
	}
	if code, _, errs := simrun(t, "report", root); code != exitOK {
		t.Fatalf("report: %s", errs)
	}
	raw, err := os.ReadFile(filepath.Join(root, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(string(raw), -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 || id == "" {
			t.Errorf("id %q used %d times", id, n)
		}
	}
	doc := parseHTML(t, filepath.Join(root, "index.html"))
	for _, want := range []string{"#litmus-sb-tso--a", "#litmus-sb-tso--b"} {
		if !slices.Contains(doc.hrefs, want) || ids[strings.TrimPrefix(want, "#")] != 1 {
			t.Errorf("no link %s to a section of that id (links %v)", want, doc.hrefs)
		}
	}
}

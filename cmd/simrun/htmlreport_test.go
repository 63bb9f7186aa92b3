package main

import (
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// htmlDoc is what the test reads back of a page: every element's
// attributes and the text under each element with an id.
type htmlDoc struct {
	hrefs, imgs []string
	byID        map[string]string
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
		case xml.EndElement:
			if len(ids) > 0 {
				ids = ids[:len(ids)-1]
			}
		case xml.CharData:
			for _, id := range ids {
				if id != "" {
					doc.byID[id] += string(x)
				}
			}
		}
	}
	return doc
}

// TestReport: simrun report writes an index linking a page per results
// directory; every link and image resolves; a page shows the verdict,
// the failures of a teaching scenario and the paper-vs-simulated table.
func TestReport(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	for _, s := range []string{"litmus-mp", "sx4-lockfree-nofence", "sx4-fig6"} {
		if code, out, errs := simrun(t, "run", s, "--quiet", "--out", filepath.Join(root, s)); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s%s", s, code, out, errs)
		}
	}
	if code, out, errs := simrun(t, "report", root); code != exitOK || !strings.Contains(out, "3 scenario page(s)") {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	index := parseHTML(t, filepath.Join(root, "index.html"))
	if len(index.hrefs) != 3 || !strings.Contains(index.byID["scenarios"], "litmus-mp") {
		t.Fatalf("index links %v, table %q", index.hrefs, index.byID["scenarios"])
	}
	for _, h := range index.hrefs {
		page := filepath.Join(root, h)
		p := parseHTML(t, page)
		if !strings.Contains(p.byID["verdict"], "Result: ") {
			t.Errorf("%s: no verdict", h)
		}
		if len(p.imgs) == 0 && !strings.HasPrefix(h, "sx4-lockfree-nofence") { // no rows, no figure
			t.Errorf("%s: no figure", h)
		}
		for _, src := range append(p.imgs, p.hrefs...) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), src)); err != nil {
				t.Errorf("%s: %s does not resolve: %v", h, src, err)
			}
		}
		switch {
		case strings.HasPrefix(h, "sx4-lockfree-nofence"):
			if !strings.Contains(p.byID["failures"], "corruption") || !strings.Contains(p.byID["verdict"], "expected failure") {
				t.Errorf("%s: failures %q verdict %q", h, p.byID["failures"], p.byID["verdict"])
			}
		case strings.HasPrefix(h, "sx4-fig6"):
			if !strings.Contains(p.byID["references"], "Figure 6") {
				t.Errorf("%s: references %q", h, p.byID["references"])
			}
		}
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
		"file://"+filepath.Join(root, "litmus-mp", "index.html"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
		t.Errorf("no screenshot: %v", err)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chromeEvent is one Chrome Trace Event, as Perfetto reads it.
type chromeEvent struct {
	Ph   string            `json:"ph"`
	Pid  *int              `json:"pid"`
	Tid  *int              `json:"tid"`
	Name *string           `json:"name"`
	Ts   *float64          `json:"ts"`
	Dur  *float64          `json:"dur"`
	S    string            `json:"s"`
	Args map[string]string `json:"args"`
}

// checkChrome validates a trace against the Trace Event Format's rules
// that Perfetto's importer enforces for the events simrun writes: a
// top-level object with a traceEvents array; every event with a known
// phase, integer pid and tid, and a name; X with ts and dur ≥ 0; B and i
// with ts (i with scope t); M thread_name with args.name, one per thread
// used; per thread, complete spans that do not overlap, and a begun
// span after every complete one. It returns the counts per phase.
func checkChrome(t *testing.T, data []byte) map[string]int {
	t.Helper()
	var doc struct {
		DisplayTimeUnit string         `json:"displayTimeUnit"`
		TraceEvents     []*chromeEvent `json:"traceEvents"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not Chrome trace JSON: %v", err)
	}
	if doc.TraceEvents == nil || (doc.DisplayTimeUnit != "ns" && doc.DisplayTimeUnit != "ms") {
		t.Fatalf("traceEvents missing or displayTimeUnit %q", doc.DisplayTimeUnit)
	}
	count := map[string]int{}
	named := map[int]bool{}
	lastEnd := map[int]float64{}
	begun := map[int]bool{}
	for i, e := range doc.TraceEvents {
		where := fmt.Sprintf("event %d (%+v)", i, *e)
		if e.Pid == nil || e.Tid == nil || e.Name == nil {
			t.Fatalf("%s: pid, tid and name are required", where)
		}
		count[e.Ph]++
		switch e.Ph {
		case "M":
			if *e.Name != "thread_name" || e.Args["name"] == "" {
				t.Errorf("%s: metadata must name a thread", where)
			}
			named[*e.Tid] = true
			continue
		case "X":
			if e.Ts == nil || e.Dur == nil || *e.Dur < 0 || *e.Ts < 0 {
				t.Errorf("%s: complete event needs ts and dur ≥ 0", where)
				continue
			}
			if *e.Ts < lastEnd[*e.Tid]-1e-6 || begun[*e.Tid] {
				t.Errorf("%s: overlaps the previous span of thread %d", where, *e.Tid)
			}
			lastEnd[*e.Tid] = *e.Ts + *e.Dur
		case "B":
			if e.Ts == nil || e.Dur != nil || *e.Ts < lastEnd[*e.Tid]-1e-6 || begun[*e.Tid] {
				t.Errorf("%s: begin event needs ts, after the thread's spans, once", where)
			}
			begun[*e.Tid] = true
		case "i":
			if e.Ts == nil || e.S != "t" {
				t.Errorf("%s: instant event needs ts and scope t", where)
			}
		default:
			t.Errorf("%s: unknown phase %q", where, e.Ph)
		}
		if !named[*e.Tid] {
			t.Errorf("%s: thread %d has no thread_name", where, *e.Tid)
		}
	}
	return count
}

var traceCounts = regexp.MustCompile(`: (\d+) spans, (\d+) marks(?:, (\d+) waits or spins)?`)

// TestTraceChrome: simrun trace writes valid Chrome trace JSON holding
// exactly the spans and marks it reports, including the spin the
// teaching livelock ends in (the README's own example) and the spans of
// a ping-pong.
func TestTraceChrome(t *testing.T) {
	for _, c := range []struct {
		scenario string
		spin     bool
	}{{"litmus-mp-spin-noncoherent", true}, {"sx4-fig1", false}} {
		t.Run(c.scenario, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "trace.json")
			code, out, errs := simrun(t, "trace", c.scenario, "--out", f)
			if code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errs)
			}
			data := read(t, f)
			got := checkChrome(t, data)
			m := traceCounts.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no counts in %q", out)
			}
			spans, _ := strconv.Atoi(m[1])
			marks, _ := strconv.Atoi(m[2])
			unended, _ := strconv.Atoi(m[3])
			if got["X"] != spans || got["i"] != marks || got["B"] != unended || spans == 0 {
				t.Errorf("printed %d spans, %d marks, %d unended; written %v", spans, marks, unended, got)
			}
			if hasSpin := strings.Contains(string(data), `"ph":"B","pid":1,"tid":1,"name":"spin: `); hasSpin != c.spin {
				t.Errorf("spin span written: %v, want %v", hasSpin, c.spin)
			}
		})
	}
}

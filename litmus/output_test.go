package litmus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/sim/trace"
)

// herdResult is what a script reading herd7 or litmus7 output extracts.
type herdResult struct {
	name, kind  string
	states      []string
	counts      []int // litmus7 only
	ok          bool
	pos, neg    int
	cond        string
	observation string
	obsPos      int
	obsNeg      int
}

// readHerd is a small reader of herd7's and litmus7's output format,
// ignoring '%' comment lines as their readers do.
func readHerd(out string) (herdResult, error) {
	var r herdResult
	sc := bufio.NewScanner(strings.NewReader(out))
	nstates, inStates, histogram := 0, false, false
	last := ""
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "%") || line == "" {
			continue
		}
		last = line
		if inStates {
			if histogram {
				f := strings.Fields(line)
				n, err := strconv.Atoi(f[0])
				if err != nil {
					return r, fmt.Errorf("histogram line %q", line)
				}
				r.counts = append(r.counts, n)
				line = strings.TrimSpace(strings.TrimPrefix(line, f[0]))
				line = strings.TrimPrefix(strings.TrimPrefix(line, "*>"), ":>")
			}
			r.states = append(r.states, line)
			inStates = len(r.states) < nstates
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "Test" && len(f) == 3:
			r.name, r.kind = f[1], f[2]
		case f[0] == "States":
			nstates, _ = strconv.Atoi(f[1])
			inStates = nstates > 0
		case f[0] == "Histogram":
			fmt.Sscanf(line, "Histogram (%d states)", &nstates)
			inStates, histogram = nstates > 0, true
		case line == "Ok" || line == "No":
			r.ok = line == "Ok"
		case f[0] == "Positive:":
			if _, err := fmt.Sscanf(strings.ReplaceAll(line, ",", ""), "Positive: %d Negative: %d", &r.pos, &r.neg); err != nil {
				return r, fmt.Errorf("witness line %q: %v", line, err)
			}
		case f[0] == "Condition":
			r.cond = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(line, "Condition "), " is validated"), " is NOT validated")
		case f[0] == "Observation":
			if _, err := fmt.Sscanf(line, "Observation %s %s %d %d", &r.name, &r.observation, &r.obsPos, &r.obsNeg); err != nil {
				return r, fmt.Errorf("observation line %q: %v", line, err)
			}
		}
	}
	if !strings.HasPrefix(last, "Observation ") {
		return r, fmt.Errorf("last line %q is not the observation", last)
	}
	if len(r.states) != nstates {
		return r, fmt.Errorf("%d states listed, %d announced", len(r.states), nstates)
	}
	return r, nil
}

// TestOutputFormat: both forms of the output read back, by a reader of
// herd7's format, to the outcome printed.
func TestOutputFormat(t *testing.T) {
	cfg, _ := mem.Builtin("tso")
	for _, c := range []struct {
		test       string
		exhaustive bool
	}{{"SB", false}, {"SB", true}, {"testdata/R.litmus", true}, {"testdata/Counter+lock.litmus", true}, {"testdata/Counter+lock.litmus", false}} {
		tt, err := LoadTest(c.test, "")
		if err != nil {
			t.Fatal(err)
		}
		var o *Outcome
		if c.exhaustive {
			o, err = Explore(tt, "tso", cfg, true)
		} else {
			opts := DefaultOptions(tt, cfg)
			opts.Runs = 300
			o, err = RunTest(tt, "tso", cfg, opts)
		}
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Write(&b, o); err != nil {
			t.Fatal(err)
		}
		r, err := readHerd(b.String())
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.test, err, b.String())
		}
		kind := map[Quant]string{Exists: "Allowed", NotExists: "Forbidden", Forall: "Required"}[tt.Cond.Quant]
		want := herdResult{name: tt.Name, kind: kind, ok: o.Validated(), pos: o.Positive, neg: o.Negative,
			cond: tt.Cond.Quant.String() + " (" + tt.CondString() + ")", observation: o.Observation(), obsPos: o.Positive, obsNeg: o.Negative}
		for _, s := range o.States {
			want.states = append(want.states, s.Text)
			if !c.exhaustive {
				want.counts = append(want.counts, s.Count)
			}
		}
		if fmt.Sprint(r) != fmt.Sprint(want) {
			t.Errorf("%s exhaustive=%v: read back\n%+v\nwant\n%+v\n%s", c.test, c.exhaustive, r, want, b.String())
		}
	}
}

// TestTraceMarksReadsFrom: a traced run marks every instruction, and each
// load with the store it read from.
func TestTraceMarksReadsFrom(t *testing.T) {
	tt, _ := Lookup("MP")
	cfg, _ := mem.Builtin("sc")
	opts := DefaultOptions(tt, cfg)
	opts.Runs = 1
	var traced *sim.Engine
	opts.NewEngine = func(seed uint64) *sim.Engine {
		traced = sim.NewEngine(seed)
		trace.Enable(traced)
		return traced
	}
	// Start P1 late enough that it sees both stores on sc.
	opts.StartJitterCycles, opts.OpJitterCycles = 0, 0
	if _, err := RunTest(tt, "sc", cfg, opts); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := trace.Of(traced).WriteChrome(&b, traced.Now()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"P0: x=1"`, `"P0: y=1"`, `"P1: r0=y read `, `"P1: r1=x read `, `(rf from `} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("trace lacks %s:\n%s", want, b.String())
		}
	}
	// The reads-from edges are flow arrows: one s/f pair per load that
	// read a store, from P0 to P1 (with no jitter on sc, P1 reads y before
	// P0 stores it and x after: one edge, x=1 -> r1=x).
	var doc struct {
		TraceEvents []struct {
			Ph, Name, Bp string
			ID, Tid      int
			Ts           float64
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	names := map[int]string{}
	starts, finishes := map[int]float64{}, map[int]float64{}
	for _, ev := range doc.TraceEvents {
		switch ev.Ph {
		case "M":
			names[ev.Tid] = ev.Name
		case "s":
			starts[ev.ID] = ev.Ts
			if !strings.HasPrefix(ev.Name, "rf: P0's ") {
				t.Errorf("flow %d named %q, want an rf edge from P0", ev.ID, ev.Name)
			}
		case "f":
			finishes[ev.ID] = ev.Ts
		}
	}
	if len(starts) != 1 || len(finishes) != 1 || !strings.Contains(b.String(), `"rf: P0's x=1 -> P1's r1=x"`) {
		t.Errorf("%d flow starts and %d finishes, want 1 each, x=1 -> r1=x:\n%s", len(starts), len(finishes), b.String())
	}
	for id, ts := range starts {
		if f, ok := finishes[id]; !ok || f < ts {
			t.Errorf("flow %d: start at %g, finish at %g (present: %v)", id, ts, f, ok)
		}
	}
}

// TestOutputObservedLocations: a state lists the registers and only the
// locations that the condition or the locations line names (herd7's
// observed locations), never every written location.
func TestOutputObservedLocations(t *testing.T) {
	cfg, _ := mem.Builtin("tso")
	for _, c := range []struct{ src, want, absent string }{
		{"testdata/R.litmus", "1:EAX=0; y=2;", "x="},
		{"X86 L\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\nlocations [y;]\nexists (1:EAX=0)\n", "y=1;", "x="},
	} {
		var tt Test
		var err error
		if strings.HasPrefix(c.src, "testdata/") {
			tt, err = LoadTest(c.src, "")
		} else {
			tt, err = Parse("L.litmus", []byte(c.src))
		}
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		o, err := Explore(tt, "tso", cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := Write(&b, o); err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, s := range o.States {
			states = append(states, s.Text)
		}
		all := strings.Join(states, "\n")
		if strings.Contains(all, c.absent) || !strings.Contains(all, c.want) {
			t.Errorf("%s: states\n%s\nwant %q and no %q", tt.Name, all, c.want, c.absent)
		}
	}
}

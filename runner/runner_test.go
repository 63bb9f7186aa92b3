package runner

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

// spec is a series whose run returns one row of value v after waiting
// for release (if not nil), and records its start in started.
func spec(series string, v float64, release <-chan struct{}, started func(string)) workloads.Spec {
	return workloads.Spec{Series: series, Run: func(sp workloads.Spec) (workloads.Result, error) {
		if started != nil {
			started(sp.Series)
		}
		if release != nil {
			<-release
		}
		return workloads.Result{Rows: []report.Row{{Series: sp.Series, Metric: "m", XName: "x", X: 1, Value: v}}}, nil
	}}
}

func TestRunOutcomesInSpecOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 8} {
		var specs []workloads.Spec
		for i, name := range []string{"a", "b", "c", "d"} {
			specs = append(specs, spec(name, float64(i), nil, nil))
		}
		out, err := Run([]Group{{Specs: specs}}, jobs, nil)
		if err != nil {
			t.Fatalf("-j %d: %v", jobs, err)
		}
		for i, o := range out[0] {
			if o.Spec.Series != specs[i].Series || o.Result.Rows[0].Value != float64(i) || o.Err != nil {
				t.Errorf("-j %d: outcome %d: %+v", jobs, i, o)
			}
		}
	}
}

func TestRunSeriesTurnsPanicsIntoErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		sp   workloads.Spec
		want string
	}{
		{"panic", workloads.Spec{Series: "p", Run: func(workloads.Spec) (workloads.Result, error) { panic("boom") }}, "internal error (a bug, please report it): boom"},
		{"unresolved", workloads.Spec{Series: "u", Workload: workloads.Component{Name: "w"}}, `series u: workload "w" not resolved`},
	} {
		if _, err := RunSeries(c.sp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestSuiteLargestFirst: on one worker the scenarios start largest
// declared cost first, and outcomes come back in the suite's order.
func TestSuiteLargestFirst(t *testing.T) {
	var mu sync.Mutex
	var order []string
	started := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	sc := func(name string, cost float64, series ...string) Scenario {
		s := &scenarios.Scenario{Name: name}
		s.Cost.WallSeconds = cost
		x := Scenario{Name: name, Scenario: s}
		for _, se := range series {
			x.Specs = append(x.Specs, spec(se, cost, nil, started))
		}
		return x
	}
	all := []Scenario{sc("small", 0, "s1"), sc("big", 60, "b1", "b2"), sc("mid", 5, "m1")}
	out, err := Suite(all, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, " "); got != "b1 b2 m1 s1" {
		t.Errorf("start order %q, want largest first", got)
	}
	for i, x := range all {
		if len(out[i]) != len(x.Specs) || out[i][0].Spec.Series != x.Specs[0].Series {
			t.Errorf("scenario %s: outcomes %+v", x.Name, out[i])
		}
	}
}

// TestWatchdogAbandonsRun: a group still running when its watchdog fires
// makes Run return a *WallError naming the series still running.
func TestWatchdogAbandonsRun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	g := Group{Name: "slow", Specs: []workloads.Spec{spec("hang", 1, release, nil)}, Watchdog: Watchdog{Limit: time.Millisecond, Seconds: 0.001, Set: true}}
	_, err := Run([]Group{g}, 1, nil)
	var we *WallError
	if !errors.As(err, &we) {
		t.Fatalf("got %v, want a *WallError", err)
	}
	if len(we.Running) != 1 || we.Running[0] != "series hang (no point finished yet)" {
		t.Errorf("running %q", we.Running)
	}
}

func TestWallErrorMessage(t *testing.T) {
	for _, c := range []struct {
		e    WallError
		want string
	}{
		{WallError{Watchdog: Watchdog{Seconds: 600}, Running: []string{"series a (no point finished yet)"}},
			"the default wall-time limit of 600 s reached at series a (no point finished yet); the run was abandoned and nothing was written (a wall-clock limit never decides a result); set limits.max_wall_seconds or run with fewer -j"},
		{WallError{Scenario: "t3d-fig4", Watchdog: Watchdog{Seconds: 300, Set: true}, Running: []string{"series x (last finished point: alltoall pes=128 bytes=8: 1 us)", "series y (no point finished yet)"}},
			"t3d-fig4: the wall-time limit (limits.max_wall_seconds) of 300 s reached at series x (last finished point: alltoall pes=128 bytes=8: 1 us), series y (no point finished yet); the run was abandoned and nothing was written (a wall-clock limit never decides a result); raise limits.max_wall_seconds or run with fewer -j"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestDropNonFinite(t *testing.T) {
	res := workloads.Result{Rows: []report.Row{
		{Series: "s", XName: "bytes", X: 8, Metric: "lat", Value: 1.5, Unit: "us"},
		{Series: "s", XName: "bytes", X: 0, Metric: "bw", Value: math.Inf(1), Unit: "MB/s"},
		{Series: "s", XName: "bytes", X: math.NaN(), Metric: "lat", Value: 2, Unit: "us"},
	}}
	if n := NonFinite(res.Rows); n != 2 {
		t.Errorf("NonFinite = %d, want 2", n)
	}
	DropNonFinite(&res)
	if len(res.Rows) != 1 || len(res.Failures) != 2 || res.Failures[0].Kind != NonFiniteKind ||
		res.Failures[0].Detail != "metric bw at bytes=0 is +Inf MB/s (a model or workload bug; the row is not written)" {
		t.Errorf("rows %v failures %v", res.Rows, res.Failures)
	}
}

// TestClaims: claims see the rows of every series of the run.
func TestClaims(t *testing.T) {
	lo, hi := 1.5, 2.5
	results := []workloads.Result{
		{Rows: []report.Row{{Series: "a", Metric: "m", XName: "x", X: 1, Value: 4}}},
		{Rows: []report.Row{{Series: "b", Metric: "m", XName: "x", X: 1, Value: 2}}},
	}
	got := Claims([]report.Claim{
		{Name: "a-twice-b", Kind: report.ClaimRatio, Metric: "m", Series: "a", Other: "b", Min: &lo, Max: &hi},
		{Name: "c", Kind: report.ClaimBand, Metric: "m", Series: "c"},
	}, results)
	if len(got) != 2 || !got[0].Holds || got[0].Value != 2 || got[1].Holds || got[1].Missing == "" {
		t.Errorf("got %+v", got)
	}
}

// TestSuiteClaims: each scenario's claims are evaluated on its own rows,
// the non-finite ones dropped and reported in the verdict; a run's bad
// input is the scenario's error.
func TestSuiteClaims(t *testing.T) {
	lo := 1.0
	claim := []report.Claim{{Name: "high", Kind: report.ClaimBand, Metric: "m", Series: "s", Min: &lo}}
	bad := workloads.Spec{Series: "s", Run: func(workloads.Spec) (workloads.Result, error) {
		return workloads.Result{}, strictyaml.Errorf("f.yaml", nil, "workload.params.n", "must be positive")
	}}
	nan := workloads.Spec{Series: "n", Run: func(sp workloads.Spec) (workloads.Result, error) {
		return workloads.Result{Rows: []report.Row{{Series: "n", Metric: "m", XName: "x", X: 1, Value: math.NaN()}}}, nil
	}}
	all := []Scenario{
		{Name: "holds", Scenario: &scenarios.Scenario{Claims: claim}, Specs: []workloads.Spec{spec("s", 2, nil, nil)}},
		{Name: "fails", Scenario: &scenarios.Scenario{Claims: claim}, Specs: []workloads.Spec{spec("s", 0.5, nil, nil), nan}},
		{Name: "bad", Scenario: &scenarios.Scenario{Claims: claim}, Specs: []workloads.Spec{bad}},
	}
	out, err := SuiteClaims(all, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := out[0]; r.Err != nil || len(r.Results) != 1 || !r.Results[0].Holds || !r.Verdict.OK {
		t.Errorf("holds: %+v", r)
	}
	if r := out[1]; r.Err != nil || len(r.Results) != 1 || r.Results[0].Holds || r.Verdict.OK || !strings.Contains(r.Verdict.Failures[0], NonFiniteKind) {
		t.Errorf("fails: %+v", r)
	}
	if r := out[2]; r.Err == nil || !strings.Contains(r.Err.Error(), "workload.params.n") || r.Results != nil {
		t.Errorf("bad: %+v", r)
	}
}

// syncBuffer is a strings.Builder safe for the run's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHeartbeat: a run whose series report nothing for a heartbeat period
// says which series are still running.
func TestHeartbeat(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	g := Group{Name: "long", Specs: []workloads.Spec{spec("quick", 1, nil, nil), spec("hang", 1, release, func(string) {
		go func() { time.Sleep(50 * time.Millisecond); once.Do(func() { close(release) }) }()
	})}}
	var out syncBuffer
	if _, err := run([]Group{g}, 2, &out, 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := "simrun: 1 of 2 series done; running long series hang"; !strings.Contains(out.String(), want) {
		t.Errorf("progress lines\n%s\nlack %q", out.String(), want)
	}
}

package runner

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
)

// Outcome is one series' spec (as run: with the runner's hooks) and what
// running it gave.
type Outcome struct {
	Spec   workloads.Spec
	Result workloads.Result
	Err    error
	// Engines counts the engines the workload created; RandUsed says
	// whether any asked for its random generator (sim.WithRandUse).
	Engines  *atomic.Int64
	RandUsed *atomic.Bool
}

// SeedIndependent reports whether no engine of any run asked for a random
// number (and there was at least one engine): the results are the same
// for every seed.
func SeedIndependent(runs []Outcome) bool {
	for _, r := range runs {
		if r.Engines == nil || r.Engines.Load() == 0 || r.RandUsed.Load() {
			return false
		}
	}
	return len(runs) > 0
}

// Group is the series of one scenario of a run (a suite runs many).
type Group struct {
	Name     string // the scenario, in progress lines and the watchdog's message ("": a run of one scenario)
	Specs    []workloads.Spec
	Watchdog Watchdog
}

// Run runs the series of every group on one pool of jobs tokens (jobs <=
// 0: GOMAXPROCS), the groups in order, each group's series in spec order,
// and returns each group's outcomes in spec order, so that they do not
// depend on jobs. A series that has free tokens runs its sweep points on
// them (workloads.Spec.Points). progress (if not nil) gets one line per
// finished series and the workloads' own progress lines.
//
// A group's watchdog starts when its first series starts; if it fires
// before the group's last series ends, Run returns a *WallError at once
// naming the series still running (their goroutines are left to the
// process's exit: an engine cannot be stopped from another goroutine).
func Run(groups []Group, jobs int, progress io.Writer) ([][]Outcome, error) {
	return run(groups, jobs, progress, heartbeat)
}

// run is Run with a heartbeat period of its own.
func run(groups []Group, jobs int, progress io.Writer, period time.Duration) ([][]Outcome, error) {
	x := newExecution(groups, jobs, progress)
	x.period = period
	defer x.stopTimers()
	done := make(chan struct{})
	go x.runAll(done)
	var beat <-chan time.Time
	if progress != nil {
		t := time.NewTicker(period)
		defer t.Stop()
		beat = t.C
	}
	for {
		select {
		case <-done:
			return x.out, nil
		case <-beat:
			x.heartbeat()
		case g := <-x.fired:
			x.mu.Lock()
			over := x.left[g] > 0
			x.mu.Unlock()
			if over {
				return nil, x.abort(g)
			}
		}
	}
}

// heartbeat is the longest a Run with progress lines stays silent: when
// no series finished or reported a point for that long, it says what is
// still running.
const heartbeat = 5 * time.Second

// heartbeat says which series are running and how far the run is, unless
// a progress line went out within the last heartbeat period.
func (x *execution) heartbeat() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if time.Since(x.said) < x.period {
		return
	}
	left := 0
	for _, n := range x.left {
		left += n
	}
	var running []string
	for _, t := range x.tasks {
		if !x.running[t] {
			continue
		}
		at := "series " + x.groups[t.g].Specs[t.i].Series
		if name := x.groups[t.g].Name; name != "" {
			at = name + " " + at
		}
		if l, ok := x.last[t]; ok {
			at += " (last point: " + l + ")"
		}
		running = append(running, at)
	}
	fmt.Fprintf(x.progress, "simrun: %d of %d series done; running %s\n", len(x.tasks)-left, len(x.tasks), strings.Join(running, ", "))
	x.said = time.Now()
}

// task is one series of one group.
type task struct{ g, i int }

// execution is the state of a Run.
type execution struct {
	groups   []Group
	tasks    []task // in the order they start
	out      [][]Outcome
	progress io.Writer
	workers  int
	pool     *workloads.Pool
	fired    chan int // the groups whose watchdog fired

	mu      sync.Mutex // guards progress, left, started, running, last, timers
	left    []int      // series of the group not finished
	started []bool
	running map[task]bool
	last    map[task]string // the task's last progress line
	said    time.Time       // when the last progress line went out
	period  time.Duration   // of the heartbeat
	timers  []*time.Timer
}

func newExecution(groups []Group, jobs int, progress io.Writer) *execution {
	x := &execution{
		groups: groups, progress: progress,
		out:     make([][]Outcome, len(groups)),
		left:    make([]int, len(groups)),
		started: make([]bool, len(groups)),
		running: map[task]bool{}, last: map[task]string{},
		fired:   make(chan int, len(groups)),
		workers: jobs,
	}
	for g, gr := range groups {
		x.out[g] = make([]Outcome, len(gr.Specs))
		x.left[g] = len(gr.Specs)
		for i := range gr.Specs {
			x.tasks = append(x.tasks, task{g, i})
		}
	}
	if x.workers <= 0 {
		x.workers = max(1, runtime.GOMAXPROCS(0))
	}
	x.pool = workloads.NewPool(x.workers)
	return x
}

func (x *execution) stopTimers() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, t := range x.timers {
		t.Stop()
	}
}

func (x *execution) say(format string, args ...any) {
	if x.progress == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	fmt.Fprintf(x.progress, format, args...)
	x.said = time.Now()
}

// prefix starts the progress lines of group g.
func (x *execution) prefix(g int) string {
	if name := x.groups[g].Name; name != "" {
		return "simrun: " + name
	}
	return "simrun:"
}

// runAll starts every task as a token frees, and closes done when all
// have finished.
func (x *execution) runAll(done chan struct{}) {
	defer close(done)
	var wg sync.WaitGroup
	for _, t := range x.tasks {
		x.pool.Acquire()
		sp := x.start(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer x.pool.Release()
			res, err := RunSeries(sp)
			x.finish(t, res, err)
		}()
	}
	wg.Wait()
}

// start prepares task t's spec (progress, engine observation, the pool)
// and marks it running, starting its group's watchdog with its first
// series.
func (x *execution) start(t task) workloads.Spec {
	gr := x.groups[t.g]
	sp := gr.Specs[t.i]
	n := len(gr.Specs)
	prefix := x.prefix(t.g)
	sp.Progress = func(msg string) {
		// Workloads may name the series in their lines: once is enough.
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, "series "+sp.Series+": "), sp.Series+": ")
		x.mu.Lock()
		x.last[t] = msg
		x.mu.Unlock()
		x.say("%s series %d/%d %s: %s\n", prefix, t.i+1, n, sp.Series, msg)
	}
	r := &x.out[t.g][t.i]
	r.Engines, r.RandUsed = new(atomic.Int64), new(atomic.Bool)
	observe := sp.Observe
	sp.Observe = func(e *sim.Engine) {
		r.Engines.Add(1)
		e.Set(sim.WithRandUse(r.RandUsed))
		if observe != nil {
			observe(e)
		}
	}
	r.Spec = sp
	if x.workers > 1 {
		sp.Pool = x.pool
	}
	x.mu.Lock()
	x.running[t] = true
	if !x.started[t.g] {
		x.started[t.g] = true
		if gr.Watchdog.Limit > 0 {
			g := t.g
			x.timers = append(x.timers, time.AfterFunc(gr.Watchdog.Limit, func() { x.fired <- g }))
		}
	}
	x.mu.Unlock()
	return sp
}

// finish records task t's outcome and says how it ended.
func (x *execution) finish(t task, res workloads.Result, err error) {
	sp := x.groups[t.g].Specs[t.i]
	x.mu.Lock()
	delete(x.running, t)
	x.left[t.g]--
	x.mu.Unlock()
	x.out[t.g][t.i].Result, x.out[t.g][t.i].Err = res, err
	status := "done"
	if err != nil {
		status = "failed: " + firstLine(err.Error())
	} else if bad := NonFinite(res.Rows); bad > 0 {
		status = fmt.Sprintf("%d non-finite result(s)", bad)
	} else if len(res.Failures) > 0 {
		status = fmt.Sprintf("%d failure(s)", len(res.Failures))
	}
	x.say("%s series %d/%d %s: %s (%d rows, %d events, %v simulated)\n", x.prefix(t.g), t.i+1, len(x.groups[t.g].Specs), sp.Series, status, len(res.Rows), res.Events, res.SimTime)
}

// abort is the error of group g's watchdog: what is still running.
func (x *execution) abort(g int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := &WallError{Scenario: x.groups[g].Name, Watchdog: x.groups[g].Watchdog}
	for _, t := range x.tasks {
		if t.g != g || !x.running[t] {
			continue
		}
		at := "series " + x.groups[g].Specs[t.i].Series
		if l, ok := x.last[t]; ok {
			at += fmt.Sprintf(" (last finished point: %s)", l)
		} else {
			at += " (no point finished yet)"
		}
		e.Running = append(e.Running, at)
	}
	return e
}

// RunSeries runs one spec alone, turning a panic in model code into an
// error.
// Errors are returned as the workload gave them: the caller names the
// series when it reports them, once.
func RunSeries(sp workloads.Spec) (res workloads.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (a bug, please report it): %v", r)
		}
	}()
	if sp.Run == nil {
		return res, fmt.Errorf("internal error (a bug, please report it): series %s: workload %q not resolved", sp.Series, sp.Workload.Name)
	}
	return sp.Run(sp)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

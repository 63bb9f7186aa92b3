package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
)

// Run functions of the cases, as workloads.Runner.

// RunOneToAll runs the one-to-all case.
func RunOneToAll(s workloads.Spec) (workloads.Result, error) { return sweep(s, "onetoall") }

// RunAllToOne runs the all-to-one case.
func RunAllToOne(s workloads.Spec) (workloads.Result, error) { return sweep(s, "alltoone") }

// RunAllToAll runs the all-to-all case.
func RunAllToAll(s workloads.Spec) (workloads.Result, error) { return sweep(s, "alltoall") }

// RunBcast runs the broadcast case.
func RunBcast(s workloads.Spec) (workloads.Result, error) { return sweep(s, "bcast") }

// RunReduce runs the reduce case.
func RunReduce(s workloads.Spec) (workloads.Result, error) { return sweep(s, "reduce") }

// RunLatency runs the one-word latency case.
func RunLatency(s workloads.Spec) (workloads.Result, error) { return sweep(s, "latency") }

// RunTable runs the five cases of Table 2 at one size and partition.
func RunTable(s workloads.Spec) (workloads.Result, error) { return sweep(s, "table") }

// Check decodes and validates a series' workload params, what its stack
// offers and the memory every case needs, without running it.
func Check(kind string) func(workloads.Spec) error {
	return func(s workloads.Spec) error {
		_, err := configure(s, kind)
		return err
	}
}

// caseMetric is the metric and unit of a case's rows.
func caseMetric(kind string) (metric, unit string) {
	switch kind {
	case "onetoall", "alltoone", "alltoall":
		return "throughput_MBps", "MB/s"
	case "bcast", "reduce":
		return "time_s", "s"
	}
	return "latency_us", "us"
}

func sweep(s workloads.Spec, kind string) (workloads.Result, error) {
	cfg, err := configureRun(s, kind)
	if err != nil {
		return workloads.Result{}, err
	}
	return sweepConfig(s, cfg)
}

// sweepConfig runs every point of a configured series.
func sweepConfig(s workloads.Spec, cfg config) (workloads.Result, error) {
	var res workloads.Result
	kind, params := cfg.kind, cfg.params
	xname := "bytes"
	if len(params.PEs) > 1 {
		xname = "pes"
	}
	if kind == "table" && cfg.oneSided {
		res.Notes = append(res.Notes, s.Series+": "+cfg.title+" has no broadcast or reduce in this benchmark")
	}
	type task struct {
		pes, n int
		x      float64
		c      string
	}
	var tasks []task
	for _, pes := range params.PEs {
		for _, n := range params.Bytes {
			x := float64(n)
			if xname == "pes" {
				x = float64(pes)
			}
			for _, c := range cases(kind, cfg.oneSided) {
				tasks = append(tasks, task{pes, n, x, c})
			}
		}
	}
	// Every point is its own simulation: they run in parallel when the run
	// has free tokens (Spec.Points) and are merged in order below, keeping
	// only what the result needs (not the point's machine and memory).
	type outcome struct {
		v       float64
		ran     bool
		events  uint64
		simTime sim.Time
		fails   []workloads.Failure
		err     error
	}
	outs := make([]outcome, len(tasks))
	if cfg.flip != nil { // a test's injected corruption: one point at a time
		s.Pool = nil
	}
	// The first task runs on the world configureRun opened for the first
	// partition (the first task's); the others open their own.
	first := cfg.first
	cfg.first = nil
	s.Points(len(tasks), func(i int) {
		t := tasks[i]
		var w *opened
		if i == 0 {
			w, first = first, nil
		}
		v, pt, err := runCase(s, cfg, t.c, t.pes, t.n, w)
		o := outcome{v: v, err: err}
		if pt != nil {
			o.ran, o.events, o.simTime, o.fails = true, pt.eng.Events(), pt.eng.Now(), pt.failures()
		}
		outs[i] = o
		if err == nil && s.Progress != nil {
			_, unit := caseMetric(t.c)
			s.Progress(fmt.Sprintf("%s %s pes=%d bytes=%d: %.4g %s", s.Series, t.c, t.pes, t.n, v, unit))
		}
	})
	for i, t := range tasks {
		o := outs[i]
		if o.ran {
			res.Events += o.events
			res.SimTime += o.simTime
			res.Failures = append(res.Failures, o.fails...)
		}
		if o.err != nil {
			return res, fmt.Errorf("%s: series %s: %s on %d PEs, %d bytes: %w", s.File, s.Series, t.c, t.pes, t.n, o.err)
		}
		metric, unit := caseMetric(t.c)
		if kind == "table" {
			metric = tableMetric(t.c)
		}
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: xname, X: t.x, Metric: metric, Value: o.v, Unit: unit})
	}
	return res, nil
}

// runCase runs one case at one point, on a world already opened for it
// (nil: open one), and returns its value.
func runCase(s workloads.Spec, cfg config, kind string, pes, n int, o *opened) (float64, *point, error) {
	pt, err := newPointOn(s, cfg, pes, n, o)
	if err != nil {
		return 0, nil, err
	}
	var body func(p *sim.Proc, pe int) error
	switch kind {
	case "onetoall":
		body = pt.oneToAll
	case "alltoone":
		body = pt.allToOne
	case "alltoall":
		body = pt.allToAll
	case "bcast":
		body, pt.sources = pt.bcast, 1
	case "reduce":
		body = pt.reduce
	case "latency":
		body = pt.latency
	default:
		return 0, nil, fmt.Errorf("collective: unknown case %q", kind)
	}
	if err := pt.run(body); err != nil {
		return 0, pt, err
	}
	if pt.sys.oneSided() && pt.sys.delivered != nil && kind != "latency" {
		pt.checkReceived(kind)
	}
	switch _, unit := caseMetric(kind); unit {
	case "MB/s":
		if pt.elapsed <= 0 {
			return 0, pt, fmt.Errorf("no simulated time elapsed between the barriers")
		}
		return float64((pes-1)*n) / pt.elapsed.Seconds() / 1e6, pt, nil
	case "s":
		return pt.elapsed.Seconds(), pt, nil
	}
	// latency: the time between the barriers is latencyIters round trips.
	return (pt.elapsed / (2 * latencyIters)).Micros(), pt, nil
}

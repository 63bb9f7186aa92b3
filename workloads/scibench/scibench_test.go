package scibench

import (
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
	"math"
	"testing"
)

// TestLogFit: points on c*log2(N) give back c, no deviation and R^2 1.
func TestLogFit(t *testing.T) {
	xs := []float64{2, 4, 8, 16, 96}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3.5 * math.Log2(x)
	}
	c, worst, r2 := logFit(xs, ys)
	if math.Abs(c-3.5) > 1e-12 || worst > 1e-12 || math.Abs(r2-1) > 1e-12 {
		t.Errorf("c %g worst %g r2 %g", c, worst, r2)
	}
}

func spec(t *testing.T, workload, params string) workloads.Spec {
	t.Helper()
	open, err := registry.Default().Resolve("t.yaml", registry.Ref{Name: "sci"}, registry.Ref{Name: "scampi"})
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(params), &n); err != nil {
		t.Fatal(err)
	}
	return workloads.Spec{Series: "s", File: "t.yaml", Seed: 1, Workload: workloads.Component{Name: workload, Params: n.Content[0]}, Open: open}
}

// TestRunners: the three workloads run on ScaMPI with every delivery
// checked, and give a row per point.
func TestRunners(t *testing.T) {
	for _, c := range []struct {
		run    workloads.Runner
		name   string
		params string
		rows   int
	}{
		{RunAlltoall, "alltoall-mbps", "{procs: [2, 3, 5], block_bytes: 3000, repetitions: 2, warmup: 1}", 3},
		{RunAlltoall, "alltoall-mbps", "{procs: [2, 4], block_bytes: 100, repetitions: 1, warmup: 1}", 2}, // blocks too short for one stream
		{RunBarrier, "barrier-time", "{procs: [2, 3, 7], fit: true}", 6},
		{RunRandom, "random-messages", "{procs: [4], messages: 30}", 0},
	} {
		res, err := c.run(spec(t, c.name, c.params))
		if err != nil || len(res.Failures) > 0 {
			t.Fatalf("%s: %v %v", c.name, err, res.Failures)
		}
		if c.rows > 0 && len(res.Rows) != c.rows {
			t.Errorf("%s: %d rows, want %d", c.name, len(res.Rows), c.rows)
		}
		for _, r := range res.Rows {
			if r.Metric == "delivered" && r.Value != 30 {
				t.Errorf("random-messages delivered %v of 30", r.Value)
			}
		}
	}
}

// TestAlltoallStreamMatchesPerBlock: the alltoall's blocks cut from one
// shared stream (blockStream) time every point exactly as blocks written
// one by one with their own patterns: the same row and events; and a
// stream's windows are distinct blocks.
func TestAlltoallStreamMatchesPerBlock(t *testing.T) {
	s := spec(t, "alltoall-mbps", "{procs: [3, 17], block_bytes: 12000, repetitions: 1, warmup: 1}")
	p, err := parse(s)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range p.Procs {
		if blockStream(s.Seed, n, 2, p.BlockBytes) == nil {
			t.Fatalf("%d ranks: no stream", n)
		}
		shared := runAlltoallPoint(s, p, i, n)
		q := p
		q.perBlock = true
		copied := runAlltoallPoint(s, q, i, n)
		if shared.err != nil || copied.err != nil || len(shared.fails)+len(copied.fails) > 0 {
			t.Fatalf("%d ranks: %v %v %v %v", n, shared.err, copied.err, shared.fails, copied.fails)
		}
		if shared.row != copied.row || shared.events != copied.events || shared.simTime != copied.simTime {
			t.Errorf("%d ranks: stream %+v (%d events), per block %+v (%d events)", n, shared.row, shared.events, copied.row, copied.events)
		}
	}
	seen := map[int]bool{}
	for k := 0; k < 2; k++ {
		for src := 0; src < 17; src++ {
			for dst := 0; dst < 17; dst++ {
				if o := blockOff(17, 12000, src, dst, k); seen[o] {
					t.Fatalf("block %d->%d of round %d starts where another does", src, dst, k)
				} else {
					seen[o] = true
				}
			}
		}
	}
}

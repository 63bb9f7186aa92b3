package trace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// spec is a resolved series of the replay on machine and stack; file
// "builtin/..." reads the checked-in traces of bench/traces.
func spec(t *testing.T, file, machine, stack, stackParams, params string) workloads.Spec {
	t.Helper()
	node := func(src string) *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	open, err := registry.Default().Resolve(file, registry.Ref{Name: machine}, registry.Ref{Name: stack, Params: node(stackParams)})
	if err != nil {
		t.Fatal(err)
	}
	return workloads.Spec{Scenario: "test", Series: machine + " " + stack, File: file, Seed: 1,
		Limits: sim.Limits{MaxEvents: 50_000_000}, Machine: machine, Stack: stack, Open: open,
		Workload: workloads.Component{Name: Name, Params: node(params)}}
}

// pairings are the targets: every action of the checked-in traces
// replays on them.
var pairings = []struct{ machine, stack, params string }{
	{"t3d", "mpich", "{device: ch_t3d}"},
	{"t3d", "aclmpl", ""},
	{"sci", "scampi", ""},
	{"sp", "mpich", "{device: ch_t3d, receive_queue: per-sender}"},
}

// TestReplayCheckedIn: every checked-in trace at 4 ranks (and the
// ping-pongs, every action, every datatype, and testdata/misc: the actions
// SimGrid's tracing does not write, sleep and the communicator calls, and
// the v-variants at the root's edge cases) replays on each target pairing
// with every delivery checked, every op counted.
func TestReplayCheckedIn(t *testing.T) {
	traces := []string{"testdata/misc/misc.txt", "actions/4/actions.txt", "datatypes/2/datatypes.txt", "jacobi/4/jacobi.txt", "cg/4/cg.txt", "ring/4/ring.txt", "pingpong/8/pingpong.txt", "pingpong/1024/pingpong.txt"}
	if !testing.Short() {
		traces = append(traces, "jacobi/16/jacobi.txt", "cg/16/cg.txt", "ring/16/ring.txt")
	}
	for _, pr := range pairings {
		for _, tr := range traces {
			t.Run(pr.machine+"/"+pr.stack+"/"+tr, func(t *testing.T) {
				file := "builtin/test.yaml" // the checked-in traces of bench/traces
				if strings.HasPrefix(tr, "testdata/") {
					file = "test.yaml"
				}
				s := spec(t, file, pr.machine, pr.stack, pr.params, "{index: "+tr+"}")
				_, prog, err := Load(s)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Run(s)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Failures) > 0 {
					t.Fatalf("failures: %v", res.Failures)
				}
				var want [numKinds]int
				for _, ops := range prog.Ranks {
					for _, o := range ops {
						want[o.Kind]++
					}
				}
				got := map[int]float64{}
				pred := 0.0
				for _, r := range res.Rows {
					switch r.Metric {
					case MetricCount:
						got[int(r.X)] = r.Value
					case MetricPredicted:
						pred = r.Value
					}
				}
				for k, n := range want {
					if float64(n) != got[k] {
						t.Errorf("%s: %v replayed, the trace has %d", Kind(k), got[k], n)
					}
				}
				if pred <= 0 {
					t.Errorf("predicted time %v", pred)
				}
				if len(res.Files) != 3 || !strings.HasSuffix(res.Files[0].Name, "-comm-matrix.csv") {
					t.Errorf("files %v", res.Files)
				}
			})
		}
	}
}

// TestReplayPingPongEqualsWorkload: the traced ping-pong (compute left
// out) gives the pingpong workload's MPI latency on each MPI pairing:
// same ops, same numbers.
func TestReplayPingPongEqualsWorkload(t *testing.T) {
	for _, pr := range pairings {
		if pr.stack == "aclmpl" {
			continue // not MPI: its blocking calls are another protocol (TestReplayPrograms runs it)
		}
		for _, n := range []int{8, 1024} {
			s := spec(t, "builtin/test.yaml", pr.machine, pr.stack, pr.params, fmt.Sprintf("{index: pingpong/%d/pingpong.txt, compute_scale: 0}", n))
			res, err := Run(s)
			if err != nil || len(res.Failures) > 0 {
				t.Fatal(err, res.Failures)
			}
			pp := spec(t, "test.yaml", pr.machine, pr.stack, pr.params, fmt.Sprintf("{sizes: [%d], repetitions: 4, warmup: 0}", n))
			run, ok := registryWorkload(t, "pingpong")
			if !ok {
				t.Skip("no pingpong")
			}
			ppRes, err := run(pp)
			if err != nil || len(ppRes.Rows) == 0 {
				t.Fatal(err, ppRes.Failures)
			}
			// The workload times rank 0, from its first send to its last
			// receive: rank 0's time in the replay (its compute, comm and
			// wait rows). The predicted time is the last rank's end, which
			// on ScaMPI is rank 1's last send securing its data after rank
			// 0 has it.
			lat := ppRes.Rows[0].Value
			rank0 := 0.0
			for _, r := range res.Rows {
				if r.XName == "rank" && r.X == 0 {
					rank0 += r.Value
				}
			}
			t.Logf("%s/%s, %d bytes: %.4f us (trace, rank 0) and %.4f us (pingpong)", pr.machine, pr.stack, n, rank0/8, lat)
			if got := rank0 / 8; fmt.Sprintf("%.4f", got) != fmt.Sprintf("%.4f", lat) {
				t.Errorf("%s/%s, %d bytes: trace %.6f us per message, pingpong workload %.6f us", pr.machine, pr.stack, n, got, lat)
			}
		}
	}
}

// TestReplayDeadlock: a trace that cannot complete is a failure naming
// each waiting rank and the op it waits in.
func TestReplayDeadlock(t *testing.T) {
	for _, pr := range pairings {
		s := spec(t, "test.yaml", pr.machine, pr.stack, pr.params, "{index: testdata/deadlock/deadlock.txt}")
		res, err := Run(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failures) != 1 || len(res.Rows) != 0 {
			t.Fatalf("%s/%s: failures %v, %d rows", pr.machine, pr.stack, res.Failures, len(res.Rows))
		}
		d := res.Failures[0].Detail
		for _, want := range []string{"rank 0 waits in recv 1 0 8B (testdata/deadlock/rank0.txt:3:3)", "rank 1 waits in recv 0 1 16B (testdata/deadlock/rank1.txt:3:3)"} {
			if !strings.Contains(d, want) {
				t.Errorf("%s/%s: %q lacks %q", pr.machine, pr.stack, d, want)
			}
		}
	}
}

// TestReplayOneSidedRefused: a one-sided stack is refused, naming message
// passing.
func TestReplayOneSidedRefused(t *testing.T) {
	err := Check(spec(t, "builtin/test.yaml", "t3d", "shmem", "", "{index: ring/4/ring.txt}"))
	var mc *machines.MissingCapability
	if !errors.As(err, &mc) || !strings.Contains(err.Error(), "message passing") {
		t.Errorf("error %v, want a missing capability naming message passing", err)
	}
}

// TestReplayDeterministic: the same series twice gives the same rows and
// the same files, byte for byte.
func TestReplayDeterministic(t *testing.T) {
	run := func() workloads.Result {
		res, err := Run(spec(t, "builtin/test.yaml", "sci", "scampi", "", "{index: jacobi/4/jacobi.txt}"))
		if err != nil || len(res.Failures) > 0 {
			t.Fatal(err, res.Failures)
		}
		return res
	}
	a, b := run(), run()
	if fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || fmt.Sprint(a.Notes) != fmt.Sprint(b.Notes) || a.Events != b.Events {
		t.Error("rows, notes or events differ between two runs")
	}
	for i := range a.Files {
		if !bytes.Equal(a.Files[i].Data, b.Files[i].Data) {
			t.Errorf("%s differs between two runs", a.Files[i].Name)
		}
	}
}

// TestReplayPrograms: hand-written programs replay: the ring, the 2D
// halo and the butterfly, on a stack with its own collectives and on one
// without, through the shared layer too.
func TestReplayPrograms(t *testing.T) {
	ring := `{ranks: 8, program_file: testdata/ring.yaml}`
	halo := "{ranks: 16, program: " + flow(halo2D) + "}"
	bfly := "{ranks: 8, program: " + flow(butterfly) + "}"
	for _, pr := range pairings {
		for _, p := range []string{ring, halo, bfly, strings.Replace(halo, "{", "{collectives: shared, ", 1)} {
			res, err := Run(spec(t, "test.yaml", pr.machine, pr.stack, pr.params, p))
			if err != nil || len(res.Failures) > 0 || len(res.Rows) == 0 {
				t.Errorf("%s/%s %.40s: %v %v", pr.machine, pr.stack, p, err, res.Failures)
			}
		}
	}
}

// flow turns a block YAML program into flow style for a params string.
func flow(src string) string {
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		panic(err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			b.WriteString("[")
			for i, e := range x {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(e)
			}
			b.WriteString("]")
		case map[string]any:
			b.WriteString("{")
			i := 0
			for _, k := range sortedKeys(x) {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(k + ": ")
				walk(x[k])
				i++
			}
			b.WriteString("}")
		case nil:
			b.WriteString("null")
		case string:
			b.WriteString(fmt.Sprintf("%q", x))
		default:
			b.WriteString(fmt.Sprint(x))
		}
	}
	walk(v)
	return b.String()
}

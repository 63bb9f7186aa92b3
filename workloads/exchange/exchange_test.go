package exchange

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
	"gopkg.in/yaml.v3"
)

// spec is a resolved series of the exchange on machine and stack.
func spec(t *testing.T, machine, stack, stackParams, params string) workloads.Spec {
	t.Helper()
	node := func(src string) *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	open, err := registry.Default().Resolve("test.yaml", registry.Ref{Name: machine}, registry.Ref{Name: stack, Params: node(stackParams)})
	if err != nil {
		t.Fatal(err)
	}
	return workloads.Spec{Scenario: "test", Series: "s", File: "test.yaml", Seed: 1,
		Limits: sim.Limits{MaxEvents: 1_000_000}, Machine: machine, Stack: stack, Open: open,
		Workload: workloads.Component{Name: Name, Params: node(params)}}
}

// TestExchange: the posted-receive exchange completes under MPI's rule
// with either send and on ACLMPL with its asynchronous send; ACLMPL's
// blocking send (its synchronous protocol) never meets the asynchronous
// receive: a livelock naming the request block.
func TestExchange(t *testing.T) {
	for _, tc := range []struct {
		name, machine, stack, stackParams, params string
		livelock                                  bool
	}{
		{"mpich blocking", "t3d", "mpich", "{device: ch_t3d}", "{send: blocking}", false},
		{"mpich ring of 3 nonblocking", "sx4", "mpich", "{device: ch_lfshmem}", "{procs: 3, send: nonblocking, bytes: 4096}", false},
		{"scampi blocking", "sci", "scampi", "", "{send: blocking, bytes: 100}", false},
		{"aclmpl nonblocking", "t3d", "aclmpl", "", "{send: nonblocking}", false},
		{"aclmpl blocking", "t3d", "aclmpl", "", "{send: blocking}", true},
		{"aclmpl ring of 3 blocking", "sp", "aclmpl", "", "{procs: 3, send: blocking}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(spec(t, tc.machine, tc.stack, tc.stackParams, tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if tc.livelock {
				if len(res.Failures) != 1 || res.Failures[0].Kind != workloads.Livelock || !strings.Contains(res.Failures[0].Detail, "waits for its request block") || len(res.Rows) != 0 {
					t.Errorf("want one livelock on the request block and no row, got %v, %d rows", res.Failures, len(res.Rows))
				}
				return
			}
			if len(res.Failures) != 0 || len(res.Rows) != 1 || res.Rows[0].Metric != Metric || res.Rows[0].Value <= 0 {
				t.Errorf("want one positive %s row and no failure, got %v, %v", Metric, res.Rows, res.Failures)
			}
		})
	}
}

// TestExchangeBadParams: each bad param is an error naming the field.
func TestExchangeBadParams(t *testing.T) {
	for _, p := range []string{"{procs: 1}", "{bytes: -1}", "{send: sometimes}", "{sends: blocking}"} {
		err := Check(spec(t, "t3d", "aclmpl", "", p))
		if err == nil || !strings.Contains(err.Error(), "test.yaml") || !strings.Contains(err.Error(), "workload.params") {
			t.Errorf("%s: error %v, want one naming test.yaml and workload.params", p, err)
		}
	}
}

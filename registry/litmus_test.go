package registry

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/litmus"
)

// TestLitmusAdapters: every built-in machine has its adapter, listed in
// registration order; params come from the machine's defaults, the
// adapter's flag defaults and the command line, in that order; a bad param
// is named; a registration that does not fit its machine is refused.
func TestLitmusAdapters(t *testing.T) {
	r := Default()
	var got []string
	for _, e := range r.LitmusMachines() {
		got = append(got, e.Machine)
		if e.Summary == "" {
			t.Errorf("%s: no summary", e.Machine)
		}
	}
	if strings.Join(got, ",") != "sx4,t3d,sci,sp,challenge,tcpcluster" {
		t.Errorf("adapters %v", got)
	}
	for _, c := range []struct {
		machine string
		set     []LitmusParam
		head    string
		remote  bool
	}{
		{"sx4", nil, "SX-4", false},
		{"challenge", nil, "Power Challenge", false},
		{"t3d", nil, "T3D", true},
		{"sci", nil, "SCI, reorder_ns 200", true},
		{"sci", []LitmusParam{{"reorder_ns", "3000"}}, "SCI, reorder_ns 3000", true},
		{"sp", nil, "SP, LAPI in interrupt mode, switch_jitter_us 40", true},
		{"sp", []LitmusParam{{"switch_jitter_us", "0"}, {"progress", "polling"}, {"switch_jitter_us", "7"}}, "SP, LAPI in polling mode, switch_jitter_us 7", true},
	} {
		mc, err := r.LitmusMachine(c.machine, c.set)
		if err != nil {
			t.Fatalf("%s %v: %v", c.machine, c.set, err)
		}
		remote, err := mc.Remote(2)
		if mc.Name != c.machine || mc.Head != c.head || err != nil || remote != c.remote {
			t.Errorf("%s %v: name %q head %q remote %v %v", c.machine, c.set, mc.Name, mc.Head, remote, err)
		}
	}
	if sci.DefaultParams().ReorderNs != 200 || sp.DefaultParams().SwitchJitterUs == 40 {
		t.Errorf("the defaults above assume sci reorder_ns 200 and an sp switch_jitter_us other than the litmus flag's 40")
	}
	for _, c := range []struct {
		machine string
		set     []LitmusParam
		want    string
	}{
		{"sci", []LitmusParam{{"reorder_ns", "-1"}}, "machine sci: field params.reorder_ns: -1 ns is outside"},
		{"sci", []LitmusParam{{"reorder", "1"}}, `field params.reorder: unknown field "reorder"`},
		{"sp", []LitmusParam{{"progress", "sometimes"}}, `unknown progress mode "sometimes"`},
		{"ksr1", nil, `unknown machine "ksr1" (machines: sx4, t3d, sci, sp, challenge, tcpcluster)`},
	} {
		if _, err := r.LitmusMachine(c.machine, c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.machine, c.set, err, c.want)
		}
	}
	e, _ := r.LookupLitmus("sp")
	if len(e.Flags) != 2 || e.Flags[0].Shown != "interrupt" || e.Flags[1].Shown != "40" {
		t.Errorf("sp flags %+v: want --progress (default interrupt) and --switch-jitter-us (default 40)", e.Flags)
	}
	for _, c := range []struct {
		e    LitmusEntry
		want string
	}{
		{Litmus("ksr1", "", func(b litmus.Builder, _ sci.Params) litmus.Machine { return litmus.Machine{} }), "no such machine"},
		{Litmus("sci", "", func(b litmus.Builder, _ sci.Params) litmus.Machine { return litmus.Machine{} }), "already has a litmus adapter"},
	} {
		if err := r.AddLitmus(c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddLitmus %s: %v, want %q", c.e.Machine, err, c.want)
		}
	}
	r = New()
	for _, m := range Default().Machines() {
		if err := r.AddMachine(m); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		e    LitmusEntry
		want string
	}{
		{Litmus("sci", "", func(b litmus.Builder, _ sp.Params) litmus.Machine { return litmus.Machine{} }), "takes params sp.Params, the machine's are sci.Params"},
		{Litmus("sci", "", func(b litmus.Builder, _ sci.Params) litmus.Machine { return litmus.Machine{} }, LitmusFlag{Name: "jitter", Param: "jitter_ns"}), `flag "jitter" sets "jitter_ns", not a param`},
	} {
		if err := r.AddLitmus(c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddLitmus %s: %v, want %q", c.e.Machine, err, c.want)
		}
	}
	// Without adapters every machine has the generic one.
	if e, ok := r.LookupLitmus("sci"); !ok || !strings.Contains(e.Summary, "remote writes of a word (PutWord), remote loads are remote reads (Get)") {
		t.Errorf("generic sci adapter: %+v", e)
	}
	if e, ok := r.LookupLitmus("t3d"); !ok || !strings.Contains(e.Summary, "Quiet then a flush of the non-coherent cache") {
		t.Errorf("generic t3d adapter: %+v", e)
	}
	if e, ok := r.LookupLitmus("sx4"); !ok || !strings.Contains(e.Summary, "one node") {
		t.Errorf("generic sx4 adapter: %+v", e)
	}
}

// TestWorkloads: workloads are registered once, by name, with a runner.
func TestWorkloads(t *testing.T) {
	r := New()
	run := func(workloads.Spec) (workloads.Result, error) { return workloads.Result{}, nil }
	if err := r.AddWorkload(Workload("w", run, nil)); err != nil {
		t.Fatal(err)
	}
	for _, e := range []WorkloadEntry{Workload("w", run, nil), Workload("", run, nil), Workload("x", nil, nil)} {
		if err := r.AddWorkload(e); err == nil {
			t.Errorf("AddWorkload(%q) accepted", e.Name)
		}
	}
	if w, ok := r.LookupWorkload("w"); !ok || w.Run == nil || len(r.Workloads()) != 1 {
		t.Errorf("lookup: %+v %v", w, ok)
	}
	if _, ok := r.LookupWorkload("x"); ok {
		t.Error("found an unregistered workload")
	}
}

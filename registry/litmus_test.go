package registry

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/workloads"
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
	if strings.Join(got, ",") != "sx4,t3d,sp,sci,challenge,tcpcluster" {
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
		{"ksr1", nil, `unknown machine "ksr1" (machines: sx4, t3d, sp, sci, challenge, tcpcluster)`},
	} {
		if _, err := r.LitmusMachine(c.machine, c.set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.machine, c.set, err, c.want)
		}
	}
	e, _ := r.LookupLitmus("sp")
	if len(e.Flags) != 2 || e.Flags[0].Shown != "interrupt" || e.Flags[1].Shown != "40" {
		t.Errorf("sp flags %+v: want --progress (default interrupt) and --switch-jitter-us (default 40)", e.Flags)
	}
	// A machine's flag must set one of its params.
	r = New()
	bad := Machine("bad", "an SCI cluster with a flag of no param", sci.DefaultParams, func(eng *sim.Engine, procs int, p sci.Params) (badFlag, error) {
		m, err := sci.New(eng, procs, p)
		return badFlag{m}, err
	})
	if err := r.AddMachine(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := r.LitmusMachine("bad", nil); err == nil || !strings.Contains(err.Error(), `flag "jitter" sets "jitter_ns", not a param`) {
		t.Errorf("bad flag: %v", err)
	}
	r = New()
	for _, m := range Default().Machines() {
		if err := r.AddMachine(m); err != nil {
			t.Fatal(err)
		}
	}
	// The generic mapping, as a machine without traits would get it.
	gen := func(name string) string {
		m, _ := r.LookupMachine(name)
		return GenericLitmusSummary(m)
	}
	if s := gen("sci"); !strings.Contains(s, "remote writes of a word (PutWord), remote loads are remote reads (Get)") {
		t.Errorf("generic sci adapter: %s", s)
	}
	if s := gen("t3d"); !strings.Contains(s, "Quiet then a flush of the non-coherent cache") {
		t.Errorf("generic t3d adapter: %s", s)
	}
	if s := gen("sx4"); !strings.Contains(s, "one node") {
		t.Errorf("generic sx4 adapter: %s", s)
	}
}

// badFlag is an SCI cluster whose litmus flag sets no param.
type badFlag struct{ *sci.Machine }

func (m badFlag) LitmusTraits() machines.LitmusTraits {
	tr := m.Machine.LitmusTraits()
	tr.Flags = []machines.LitmusFlag{{Name: "jitter", Param: "jitter_ns"}}
	return tr
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

package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"gopkg.in/yaml.v3"
)

func params(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// TestResolve: names, params and pairings are checked once, with errors
// naming file, line and field or the missing capability; the opener builds
// the machine and opens the stack with the processes asked for.
func TestResolve(t *testing.T) {
	r := Default()
	open, err := r.Resolve("s.yaml", Ref{Name: "t3d", Params: params(t, "{memory_mb: 16}")}, Ref{Name: "aclmpl"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := open(sim.NewEngine(1), 8)
	if err != nil || w.Size() != 8 || w.Stack != "aclmpl" || w.Machine.Name() != "t3d" {
		t.Fatalf("%v %+v", err, w)
	}
	if mm := w.Machine.(machines.Memory); mm.MemoryBytes() != 16<<20 {
		t.Errorf("memory_mb 16 not applied: %d bytes", mm.MemoryBytes())
	}
	if open, err := r.Resolve("s.yaml", Ref{}, Ref{}); open != nil || err != nil {
		t.Errorf("no machine and no stack: %v, %v; want a nil opener", open != nil, err)
	}
	for _, c := range []struct {
		machine, stack Ref
		want           string
	}{
		{Ref{Name: "cm5"}, Ref{Name: "mpich"}, `s.yaml: field machine.name: unknown machine "cm5"; machines: sx4, t3d, sp, sci`},
		{Ref{Name: "sx4"}, Ref{Name: "cmmd", Field: "series[2].stack"}, `field series[2].stack.name: unknown stack "cmmd"`},
		{Ref{Name: "sx4"}, Ref{}, "s.yaml: field stack.name: no stack named (a series with a machine needs a stack and the other way round); stacks: mpich, aclmpl, shmem, armci, scampi, pvm"},
		{Ref{Name: "sx4", Params: params(t, "\nsemop_us: -3")}, Ref{Name: "mpich"}, "s.yaml:2:11: field machine.params.semop_us"},
		{Ref{Name: "t3d", Params: params(t, "{torus_nodes: [1, 1, 1], pes_per_node: 1}")}, Ref{Name: "aclmpl"}, "field machine.params.torus_nodes"},
		{Ref{Name: "sx4"}, Ref{Name: "mpich", Params: params(t, "{lock: spin}")}, "field stack.params.lock"},
		{Ref{Name: "sx4"}, Ref{Name: "shmem", Params: params(t, "{x: 1}")}, `field stack.params.x: unknown field "x"`},
		{Ref{Name: "challenge"}, Ref{Name: "aclmpl"}, "s.yaml: field stack: aclmpl cannot run on machine challenge: it needs remote-write: one-sided remote write (put) with its completion (quiet) (machines.RemoteWrite)"},
	} {
		_, err := r.Resolve("s.yaml", c.machine, c.stack)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: got %v, want %q", c.machine.Name, c.stack.Name, err, c.want)
		}
	}
	var mc *machines.MissingCapability
	if _, err := r.Resolve("s.yaml", Ref{Name: "t3d"}, Ref{Name: "mpich", Params: params(t, "{device: ch_shmem}")}); !errors.As(err, &mc) {
		t.Errorf("mpich's ch_shmem on the T3D: %v, want a missing capability", err)
	}
}

// TestRegister: names are unique; entries list in registration order.
func TestRegister(t *testing.T) {
	r := Default()
	m, _ := r.LookupMachine("sx4")
	if err := r.AddMachine(m); err == nil {
		t.Error("a second machine sx4 was registered")
	}
	s, _ := r.LookupStack("shmem")
	if err := r.AddStack(s); err == nil {
		t.Error("a second stack shmem was registered")
	}
	var got []string
	for _, e := range r.Machines() {
		got = append(got, e.Name)
	}
	for _, e := range r.Stacks() {
		got = append(got, e.Name)
	}
	if strings.Join(got, " ") != "sx4 t3d sp sci challenge tcpcluster mpich aclmpl shmem armci scampi pvm" {
		t.Errorf("registered %v", got)
	}
}

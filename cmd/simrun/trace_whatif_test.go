package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/trace"
	"gopkg.in/yaml.v3"
)

// TestWhatifTracePairings: whatif-trace runs the Jacobi trace on every
// registered machine and stack that can run it, and its description lists
// every other pairing ("machine/stack") with the verb the refusal names.
func TestWhatifTracePairings(t *testing.T) {
	s, err := scenarios.LoadBuiltin("whatif-trace")
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]bool{}
	for _, r := range s.Resolved() {
		ran[r.Machine.Name+"/"+r.Stack.Name] = true
	}
	desc := strings.Join(strings.Fields(s.Description), " ")
	reg := all.Default()
	var params yaml.Node
	if err := yaml.Unmarshal([]byte("{index: jacobi/16/jacobi.txt}"), &params); err != nil {
		t.Fatal(err)
	}
	for _, m := range reg.Machines() {
		for _, st := range reg.Stacks() {
			pair := m.Name + "/" + st.Name
			if ran[pair] {
				continue
			}
			open, err := reg.Resolve("builtin/x.yaml", registry.Ref{Name: m.Name}, registry.Ref{Name: st.Name})
			if err == nil {
				err = trace.Check(workloads.Spec{File: "builtin/x.yaml", Open: open, Workload: workloads.Component{Name: trace.Name, Params: &params}})
			}
			var mc *machines.MissingCapability
			if err == nil || (!errors.As(err, &mc) && !strings.Contains(err.Error(), "cannot run on machine")) {
				t.Errorf("%s runs the trace (or fails otherwise: %v) but is not a series of whatif-trace", pair, err)
				continue
			}
			i := strings.Index(desc, pair+",")
			if i < 0 {
				i = strings.Index(desc, pair+":")
			}
			if i < 0 {
				t.Errorf("%s is refused (%v) but whatif-trace's description does not list it", pair, err)
				continue
			}
			why := desc[i:]
			why = why[strings.Index(why, ":")+1:]
			if j := strings.IndexAny(why, ",;."); j >= 0 {
				why = why[:j]
			}
			if why = strings.TrimSpace(why); !strings.Contains(err.Error(), why) {
				t.Errorf("%s: the description says %q, the refusal is %v", pair, why, err)
			}
		}
	}
}

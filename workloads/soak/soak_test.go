package soak_test

import (
	"testing"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads/soak"
)

// TestRunWithinProgressRule: programs with blocking and nonblocking sends
// complete, every message once and intact, on a stack with MPI's rule and
// on ACLMPL, whose split rule the programs follow (seed 4 livelocked when
// ACLMPL's blocking Send met an Irecv).
func TestRunWithinProgressRule(t *testing.T) {
	reg := registry.Default()
	for _, tc := range []struct {
		machine, stack string
		split          bool
	}{
		{"t3d", "aclmpl", true},
		{"sp", "aclmpl", true},
		{"t3d", "mpich", false},
		{"sci", "scampi", false},
	} {
		open, err := reg.Resolve("", registry.Ref{Name: tc.machine}, registry.Ref{Name: tc.stack})
		if err != nil {
			t.Fatal(err)
		}
		w, err := open(sim.NewEngine(1), 2)
		if err != nil {
			t.Fatal(err)
		}
		if r := stacks.ProgressOf(w); r.Split != tc.split || r.Source == "" || r.Rule == "" {
			t.Errorf("%s/%s: progress rule %+v, want split %v with a rule and its source", tc.machine, tc.stack, r, tc.split)
		}
		msgs := 0
		for seed := uint64(1); seed <= 30; seed++ {
			o := soak.Run(open, seed, soak.Procs(seed), sim.Limits{MaxEvents: 5_000_000})
			if o.Failure != nil || o.Delivered != o.Messages {
				t.Errorf("%s/%s seed %d: %d of %d delivered: %v", tc.machine, tc.stack, seed, o.Delivered, o.Messages, o.Failure)
			}
			msgs += o.Messages
		}
		if msgs < 100 {
			t.Errorf("%s/%s: %d messages in 30 runs", tc.machine, tc.stack, msgs)
		}
	}
}

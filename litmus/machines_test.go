package litmus

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
)

// on is On, less its error: a machine that cannot be built has no
// traits, and running on it reports the build's error.
func on(name string, build Builder) Machine {
	mc, _ := On(name, build)
	return mc
}

// t3dOf is the T3D litmus machine of params.
func t3dOf(params t3d.Params) Machine {
	return on("t3d", func(eng *sim.Engine, procs int) (machines.Machine, error) { return t3d.New(eng, procs, params) })
}

// sciOf is the SCI litmus machine of params.
func sciOf(params sci.Params) Machine {
	return on("sci", func(eng *sim.Engine, procs int) (machines.Machine, error) { return sci.New(eng, procs, params) })
}

// sciJitter is the default start jitter on an SCI cluster of params.
func sciJitter(params sci.Params) (float64, error) { return sciOf(params).JitterCycles() }

// sciOpJitter is the default instruction jitter on an SCI cluster of
// params.
func sciOpJitter(t *testing.T, params sci.Params) float64 {
	t.Helper()
	j, err := sciOf(params).OpJitter(0)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// sciHomes are the default homes of tt on an SCI cluster of params.
func sciHomes(t *testing.T, tt Test, params sci.Params, place []int) []int {
	t.Helper()
	h, err := sciOf(params).Homes(tt, place)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// t3dJitter is the default start jitter on a T3D of params.
func t3dJitter(params t3d.Params) (float64, error) { return t3dOf(params).JitterCycles() }

// runT3D is RunMachine on a T3D of params.
func runT3D(t Test, params t3d.Params, homes []int, opts Options) (*Outcome, error) {
	return RunMachine(t, t3dOf(params), homes, opts)
}

// runSCI is RunMachine on an SCI cluster of params.
func runSCI(t Test, params sci.Params, homes []int, opts Options) (*Outcome, error) {
	return RunMachine(t, sciOf(params), homes, opts)
}

// bare is a machine with none of the litmus capabilities.
type bare struct{ eng *sim.Engine }

func (b bare) Name() string        { return "bare" }
func (b bare) Engine() *sim.Engine { return b.eng }
func (b bare) Procs() int          { return 2 }

// TestMachineMissingCapability: a machine without the verbs a runner needs
// is an error naming them, not a panic.
func TestMachineMissingCapability(t *testing.T) {
	mp, err := Lookup("MP")
	if err != nil {
		t.Fatal(err)
	}
	build := func(eng *sim.Engine, procs int) (machines.Machine, error) { return bare{eng}, nil }
	opts := Options{Runs: 1, Seed: 1}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"RunMachine", func() error {
			_, err := RunMachine(mp, Machine{Name: "bare", Build: build}, []int{1, 1}, opts)
			return err
		}, "remote-write"},
		{"JitterCycles", func() error { _, err := Machine{Name: "bare", Build: build}.JitterCycles(); return err }, "remote-write"},
		{"Remote", func() error { _, err := Machine{Name: "bare", Build: build}.Remote(2); return err }, "shared segments"},
	} {
		err := c.run()
		var mc *machines.MissingCapability
		if !errors.As(err, &mc) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bare") {
			t.Errorf("%s on a bare machine: %v, want a MissingCapability naming %s", c.name, err, c.want)
		}
	}
}

// checkObserved fails the test if a run of o failed, and reports it if o's
// relaxed outcome was (not) observed against want.
func checkObserved(t *testing.T, o *Outcome, want bool) {
	t.Helper()
	if o.Failed > 0 {
		t.Fatalf("%d runs failed: %v", o.Failed, o.FirstFailure)
	}
	if o.Observed() != want {
		t.Errorf("%s %d %d, want observed=%v", o.Observation(), o.Positive, o.Negative, want)
	}
}

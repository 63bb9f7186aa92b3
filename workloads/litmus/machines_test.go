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

// t3dOf is the builder and config of RunT3D on a T3D of params.
func t3dOf(params t3d.Params) (Builder, T3DConfig) {
	return func(eng *sim.Engine, procs int) (machines.Machine, error) { return t3d.New(eng, procs, params) },
		T3DConfig{ClockMHz: params.ClockMHz}
}

// sciOf is the builder and config of RunSCI on an SCI cluster of params.
func sciOf(params sci.Params) (Builder, SCIConfig) {
	return func(eng *sim.Engine, procs int) (machines.Machine, error) { return sci.New(eng, procs, params) },
		SCIConfig{ClockMHz: params.ClockMHz, LoadNs: params.LoadNs, ReorderNs: params.ReorderNs, ProcsPerNode: params.ProcsPerNode}
}

// sciJitter is SCIJitterCycles on an SCI cluster of params, one process
// per node.
func sciJitter(params sci.Params) (float64, error) {
	one := params
	one.ProcsPerNode = 1
	b, cfg := sciOf(one)
	return SCIJitterCycles(b, cfg)
}

// cfgOf is the SCIConfig of params.
func cfgOf(params sci.Params) SCIConfig { _, c := sciOf(params); return c }

// t3dJitter is T3DJitterCycles on a T3D of params.
func t3dJitter(params t3d.Params) (float64, error) {
	b, c := t3dOf(params)
	return T3DJitterCycles(b, c)
}

// runT3D is RunT3D on a T3D of params.
func runT3D(t Test, params t3d.Params, homes []int, opts Options) (*Outcome, error) {
	b, c := t3dOf(params)
	return RunT3D(t, b, c, homes, opts)
}

// runSCI is RunSCI on an SCI cluster of params.
func runSCI(t Test, params sci.Params, homes []int, opts Options) (*Outcome, error) {
	b, c := sciOf(params)
	return RunSCI(t, b, c, homes, opts)
}

// bare is a machine with none of the litmus capabilities.
type bare struct{ eng *sim.Engine }

func (b bare) Name() string        { return "bare" }
func (b bare) Engine() *sim.Engine { return b.eng }
func (b bare) Procs() int          { return 2 }

// TestMachineMissingCapability: a machine without what a runner needs is
// an error naming the capability, not a panic.
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
		{"RunT3D", func() error { _, err := RunT3D(mp, build, T3DConfig{ClockMHz: 150}, []int{1, 1}, opts); return err }, "litmus.T3DMachine"},
		{"T3DJitterCycles", func() error { _, err := T3DJitterCycles(build, T3DConfig{ClockMHz: 150}); return err }, "litmus.T3DMachine"},
		{"RunSCI", func() error { _, err := RunSCI(mp, build, SCIConfig{ClockMHz: 200}, []int{1, 1}, opts); return err }, "litmus.SCIMachine"},
		{"SCIJitterCycles", func() error { _, err := SCIJitterCycles(build, SCIConfig{ClockMHz: 200}); return err }, "litmus.SCIMachine"},
	} {
		err := c.run()
		var mc *machines.MissingCapability
		if !errors.As(err, &mc) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bare") {
			t.Errorf("%s on a bare machine: %v, want a MissingCapability naming %s", c.name, err, c.want)
		}
	}
}

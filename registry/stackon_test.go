package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/stacks"
)

// TestStackOn: a stack built on another declares the lower stack by name
// and the type of opener it needs; the registry wires the lower stack's
// opener with its default params, and refuses a lower stack it does not
// hold. The built-in ARMCI is built on MPICH.
func TestStackOn(t *testing.T) {
	type lowerParams struct {
		Depth int `yaml:"depth"`
	}
	type opener func(m machines.Machine) (*stacks.World, error)
	errLower := errors.New("lower opened")
	var gotDepth int
	lower := Stack("lower", "a test stack", Decode(func() lowerParams { return lowerParams{Depth: 7} }),
		func(m machines.Machine, p lowerParams) (*stacks.World, error) {
			gotDepth = p.Depth
			return nil, errLower
		})
	upper := StackOn("upper", "a test stack on lower", "lower", Decode(func() struct{} { return struct{}{} }),
		func(lo opener) func(m machines.Machine, p struct{}) (*stacks.World, error) {
			return func(m machines.Machine, _ struct{}) (*stacks.World, error) { return lo(m) }
		})
	if upper.On != "lower" {
		t.Errorf("On = %q, want lower", upper.On)
	}
	r := New()
	if err := r.AddStack(upper); err == nil || !strings.Contains(err.Error(), `built on stack "lower", which is not registered before it`) {
		t.Errorf("upper before lower: %v", err)
	}
	if err := r.AddStack(lower); err != nil {
		t.Fatal(err)
	}
	if err := r.AddStack(upper); err != nil {
		t.Fatal(err)
	}
	e, _ := r.LookupStack("upper")
	p, err := e.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.open(nil, p); !errors.Is(err, errLower) || gotDepth != 7 {
		t.Errorf("upper opened: %v, lower's depth %d; want lower opened with its default depth 7", err, gotDepth)
	}
	a, ok := Default().LookupStack("armci")
	if !ok || a.On != "mpich" {
		t.Errorf("armci: On = %q, want mpich", a.On)
	}
}

package registry

import (
	"runtime"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"gopkg.in/yaml.v3"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// TestSetupMemoryStated builds every pairing (each stack variant on each
// machine) at two sizes and checks that the set-up memory its machine
// and stack state (machines.SetupSizer) covers what the larger size
// takes over the smaller one: the estimate validate and run refuse by
// never falls short by more than the collector's noise.
func TestSetupMemoryStated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every pairing at two sizes")
	}
	r := Default()
	for _, me := range r.Machines() {
		mp, _ := me.Defaults()
		if _, ok := mp.(machines.SetupSizer); !ok {
			t.Errorf("machine %s states no set-up memory: give its Params a SetupMemory method (machines.SetupSizer; e.g. machines/t3d/setup.go), with the figures this test measures", me.Name)
		}
		for _, se := range r.Stacks() {
			if sp, _ := se.Defaults(); sp != nil {
				if _, ok := sp.(machines.SetupSizer); !ok {
					t.Errorf("stack %s states no set-up memory: give its Params a SetupMemory method (machines.SetupSizer; e.g. stacks/scampi/setup.go), with the figures this test measures", se.Name)
				}
			}
			vs := se.Variants
			if len(vs) == 0 {
				vs = []string{""}
			}
			for _, v := range vs {
				open, setup, err := r.ResolveSetup("", Ref{Name: me.Name}, variantRef(t, se.Name, v))
				if err != nil {
					continue // a pairing that cannot work
				}
				n1, n2 := 4, 16
				if me.Name == "t3d" || me.Name == "sp" {
					n1, n2 = 16, 64
				}
				size := func(n int) (float64, bool) {
					h0 := liveHeap()
					w, err := open(sim.NewEngine(1), n)
					if err != nil {
						return 0, false
					}
					h := liveHeap() - h0
					runtime.KeepAlive(w)
					return h, true
				}
				b1, ok1 := size(n1)
				b2, ok2 := size(n2)
				if !ok1 || !ok2 {
					continue // a size the pairing does not take
				}
				measured, stated := b2-b1, setup.Bytes(n2)-setup.Bytes(n1)
				if measured > 1.25*stated+4096 {
					t.Errorf("%s %s on %s: %d to %d processes took %.0f more bytes; the stated set-up (%s) says %.0f", se.Name, v, me.Name, n1, n2, measured, setup.Describe(), stated)
				}
			}
		}
	}
}

func TestSetupFit(t *testing.T) {
	s := machines.Setup{PerProc: 1000, PerPair: 100}
	for _, budget := range []float64{0, 999, 1000, 1e6, 1e9, 1e14} {
		n := s.Fit(budget)
		if s.Bytes(n) > budget || s.Bytes(n+1) <= budget {
			t.Errorf("Fit(%g) = %d: %g bytes, %g for one more", budget, n, s.Bytes(n), s.Bytes(n+1))
		}
	}
}

// variantRef is a reference to stack with the params of variant v (a YAML
// flow map, as StackEntry.Variants lists them; "" for the defaults).
func variantRef(t *testing.T, stack, v string) Ref {
	t.Helper()
	if v == "" {
		return Ref{Name: stack}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
		t.Fatal(err)
	}
	return Ref{Name: stack, Params: doc.Content[0]}
}

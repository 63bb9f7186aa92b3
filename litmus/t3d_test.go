package litmus

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
)

// TestT3D runs tests on a T3D partition: remote stores are puts, remote
// loads gets, local loads read a cache that puts do not update.
func TestT3D(t *testing.T) {
	params := t3d.DefaultParams()
	j, err := t3dJitter(params)
	if err != nil || j <= 0 {
		t.Fatalf("jitter %g, %v", j, err)
	}
	for _, c := range []struct {
		test     string
		homes    []int // nil: DefaultT3DHomes
		warm     bool
		observed bool
		livelock bool
		runs     int // 0: 1000; 100 where (nearly) every run shows it
	}{
		// Each thread's load of the other's location is a get that may
		// leave before the other's put has landed.
		{test: "SB", observed: true},
		// shmem_quiet before the load: the put has landed.
		{test: "SB+fences"},
		// A warm reader reads its cached zeros for ever.
		{test: "SB", warm: true, observed: true, runs: 100},
		// A reader whose first poll caches the flag before the put lands
		// spins on its stale copy: shmem_udcflush is missing.
		{test: "MP+spin", livelock: true, runs: 100},
		// With the flag at the writer, the reader polls it with gets.
		{test: "MP+spin+fences", homes: []int{1, 0}},
	} {
		t.Run(fmt.Sprintf("%s/warm=%v/%v", c.test, c.warm, c.homes), func(t *testing.T) {
			tt, _ := Lookup(c.test)
			homes := c.homes
			if homes == nil {
				homes = DefaultT3DHomes(tt)
			}
			runs := c.runs
			if runs == 0 {
				runs = 1000
			}
			o, err := runT3D(tt, params, homes, Options{Runs: runs, Seed: 1, Warm: c.warm, StartJitterCycles: j, OpJitterCycles: j})
			if err != nil {
				t.Fatal(err)
			}
			if c.livelock {
				if o.Failed == 0 || !sim.IsLivelock(o.FirstFailure) || !strings.Contains(o.FirstFailure.Error(), "non-coherent cache whose copy is stale") {
					t.Fatalf("want livelocks, got %d failed: %v", o.Failed, o.FirstFailure)
				}
				return
			}
			checkObserved(t, o, c.observed)
		})
	}
}

func TestT3DHomesAndErrors(t *testing.T) {
	mp, _ := Lookup("MP")
	if h := DefaultT3DHomes(mp); fmt.Sprint(h) != "[1 1]" {
		t.Errorf("MP homes %v, want the reader's PE for both", h)
	}
	w, _ := Lookup("2+2W")
	if h := DefaultT3DHomes(w); fmt.Sprint(h) != "[0 0]" {
		t.Errorf("2+2W homes %v, want the first writer's PE", h)
	}
	opts := Options{Runs: 1, Seed: 1}
	if _, err := runT3D(mp, t3d.DefaultParams(), []int{0, 2}, opts); err == nil || !strings.Contains(err.Error(), "location y on PE 2") {
		t.Errorf("bad home: %v", err)
	}
	xchg := parseFile(t, filepath.Join("testdata", "SB+xchgs.litmus"))
	if _, err := runT3D(xchg, t3d.DefaultParams(), DefaultT3DHomes(xchg), opts); err == nil || !strings.Contains(err.Error(), "atomics") {
		t.Errorf("atomic: %v", err)
	}
}

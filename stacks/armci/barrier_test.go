package armci

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
)

// TestDisseminationBarrier: the SHMEM port's barrier of remote writes
// (machines without a barrier verb) lets no rank leave before the last
// has arrived, episode after episode. Its flags are polled with uncached
// loads; polled through the cache instead, a T3D PE (whose cache does not
// see remote writes) reads its stale copy of a flag forever, which the run
// reports as a livelock naming the stale word, while an SCI node's cache,
// kept coherent with the adapter's writes by snooping, sees them.
func TestDisseminationBarrier(t *testing.T) {
	for _, c := range []struct {
		name     string
		build    func(*sim.Engine, int) (machines.Machine, error)
		n        int
		cached   bool
		livelock bool
	}{
		{"t3d-no-barrier", t3dNoBarrier, 5, false, false},
		{"t3d-no-barrier cached polls", t3dNoBarrier, 5, true, true},
		{"sci", sciBuild, 6, false, false},
		{"sci cached polls", sciBuild, 6, true, false},
		{"sci-smp", sciReorder(1000, 2), 7, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := sim.NewEngine(1)
			m, err := c.build(e, c.n)
			if err != nil {
				t.Fatal(err)
			}
			w, err := Open(m, DefaultParams(), nil)
			if err != nil {
				t.Fatal(err)
			}
			sw := w.Ranks[0].(*shmemRank).w
			if sw.rounds == 0 {
				t.Fatalf("no dissemination barrier on %s", c.name)
			}
			sw.cachedPolls = c.cached
			const episodes = 4
			var lastIn, firstOut [episodes]sim.Time
			for i, x := range w.Ranks {
				r := x.(*shmemRank)
				e.Spawn(fmt.Sprintf("rank%d", i), func(p *sim.Proc) {
					for k := range episodes {
						p.Sleep(sim.Micro(float64(10 * ((i + k) % c.n))))
						lastIn[k] = max(lastIn[k], p.Now())
						r.Barrier(p)
						if firstOut[k] == 0 || p.Now() < firstOut[k] {
							firstOut[k] = p.Now()
						}
					}
				})
			}
			err = e.Run()
			var ll *sim.LivelockError
			if c.livelock {
				if !errors.As(err, &ll) || !strings.Contains(err.Error(), "stale") {
					t.Fatalf("got %v, want a livelock on a stale cached flag", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k := range episodes {
				if firstOut[k] < lastIn[k] {
					t.Errorf("episode %d: a rank left at %v, before the last arrived at %v", k, firstOut[k], lastIn[k])
				}
			}
		})
	}
}

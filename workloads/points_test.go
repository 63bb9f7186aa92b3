package workloads

import (
	"sync"
	"testing"
	"time"

	"github.com/msgsim/msgsim/sim"
)

// TestPointsParallelWithObserver: with a pool, the points of a series run
// at once on its free tokens even when an observer is set (simrun always
// sets one): each of two points waits for the other to start.
func TestPointsParallelWithObserver(t *testing.T) {
	pool := NewPool(2)
	pool.Acquire() // the series' own token
	s := Spec{Pool: pool, Observe: func(*sim.Engine) {}}
	var started sync.WaitGroup
	started.Add(2)
	done := make(chan struct{})
	go func() {
		s.Points(2, func(int) {
			started.Done()
			started.Wait()
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Fatal("the points ran one at a time: the second never started while the first waited for it")
	}
}

package workloads

import "sync"

// Pool bounds how many simulations a run has going at once (one token
// each): the series of a scenario and the points of a sweep share it, so
// that -j bounds the host memory of the whole run.
type Pool struct{ tokens chan struct{} }

// NewPool returns a pool of n tokens (at least one).
func NewPool(n int) *Pool { return &Pool{tokens: make(chan struct{}, max(1, n))} }

// Acquire takes a token, waiting for one if none is free.
func (p *Pool) Acquire() { p.tokens <- struct{}{} }

// Release gives a token back.
func (p *Pool) Release() { <-p.tokens }

func (p *Pool) tryAcquire() bool {
	select {
	case p.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

// Points calls run(i) for i in [0, n), each an independent simulation (its
// own engine) that stores its outcome in its own slot; the caller then
// merges the slots in index order, so that the outputs do not depend on the
// parallelism. The series runs points on its own token (it holds one) and
// on every token of s.Pool it finds free, so a sweep never waits for
// another series; without a pool (s.Pool nil: tracing, tests), the points
// run in order on the calling goroutine. With a pool, s.Observe is called
// from the points' goroutines: it must be safe for concurrent use.
func (s Spec) Points(n int, run func(i int)) {
	if s.Pool == nil || n <= 1 {
		for i := range n {
			run(i)
		}
		return
	}
	var mu sync.Mutex
	next := 0
	claim := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	var panicked any // a helper's panic, raised again on the caller's goroutine
	var work func()
	work = func() {
		for {
			i, ok := claim()
			if !ok {
				return
			}
			mu.Lock()
			more := next < n
			mu.Unlock()
			if more && s.Pool.tryAcquire() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer s.Pool.Release()
					defer func() {
						if r := recover(); r != nil {
							mu.Lock()
							panicked, next = r, n
							mu.Unlock()
						}
					}()
					work()
				}()
			}
			run(i)
		}
	}
	func() {
		defer wg.Wait() // a panic here waits for the helpers too
		work()
	}()
	if panicked != nil {
		panic(panicked)
	}
}

package main

import (
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
)

// growPacing reports whether SIMRUN_GC=grow asks for gcPacer (any other
// non-empty value is an error). It is not the default: a sweep whose
// points each build a large memory and then churn through payloads
// (t3d-fig9: 0.73 -> 1.47 GB peak RSS) holds up to twice its GOGC=25 peak
// when its first churning collection comes at the limit a growing phase
// set. It suits a run that builds one large machine and keeps it, such
// as the what-if broadcast on 2^20 PEs (docs/scale.md).
func growPacing(getenv func(string) string) (bool, error) {
	switch v := getenv("SIMRUN_GC"); v {
	case "":
		return false, nil
	case "grow":
		return true, nil
	default:
		return false, fmt.Errorf("SIMRUN_GC=%q: want grow (or unset)", v)
	}
}

// gcPacer paces the collector while a run's heap grows with live data.
// After each collection it looks at what the collection kept: when at
// least half of what was allocated since the previous collection is
// still live (the heap grows with state the run keeps: a large machine
// being built, a million processes parked at once), it turns
// percent-based collection off and sets a memory limit at twice what the
// runtime holds, so the next collection comes when that has doubled (as
// GOGC=100 would for the heap alone) and the runtime's forced collection
// every two minutes of wall time is off too; as soon as a collection
// finds that most of what was allocated was garbage (payload copies,
// messages come and gone), back to percent-based collection (percentFor) and no limit. In a growing heap every
// collection at 25 % rescans all that is live, every parked process's
// stack included, to free a few percent (docs/scale.md: the what-if
// broadcast on 2^20 PEs, 15 collections of which the last 6 scanned a
// million stacks each and freed under 8 %, 3 of them forced by the
// two-minute timer). It changes when the collector runs, never what a
// run computes.
type gcPacer struct {
	percent func(int) int     // debug.SetGCPercent
	limit   func(int64) int64 // debug.SetMemoryLimit
	read    func() heapState
	growing bool
	last    heapState
}

// heapState is what the runtime reports after a collection.
type heapState struct {
	live      uint64 // heap bytes the collection found live
	allocated uint64 // heap bytes allocated since the program started
	held      uint64 // memory the runtime holds, what a memory limit counts
}

// cycle is called after each collection.
func (g *gcPacer) cycle() {
	h := g.read()
	grew := h.live - min(h.live, g.last.live)
	alloc := h.allocated - min(h.allocated, g.last.allocated)
	g.last = h
	growing := alloc > 0 && 2*grew >= alloc
	switch {
	case growing:
		g.limit(int64(min(2*h.held, math.MaxInt64)))
		if !g.growing {
			g.percent(-1)
		}
	case g.growing:
		g.percent(percentFor(h.live))
		g.limit(math.MaxInt64)
	}
	g.growing = growing
}

// gcSizer sets the collector's percent after each collection from the
// heap it left live (percentFor): 100 for a small heap, 25 for a large
// one. It changes when the collector runs, never what a run computes.
type gcSizer struct {
	percent func(int) int // debug.SetGCPercent
	read    func() heapState
	cur     int // the percent set
}

// cycle is called after each collection.
func (g *gcSizer) cycle() {
	if p := percentFor(g.read().live); p != g.cur {
		g.percent(p)
		g.cur = p
	}
}

// heapNow reads the heap's state from runtime/metrics.
func heapNow() heapState {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return heapState{live: u(0), allocated: u(1), held: u(2) - min(u(2), u(3))}
}

// afterEachGC runs f after every collection, on the runtime's finalizer
// goroutine: a finalizer on an unreachable object runs once the
// collection that finds it is over, and arms the next one.
func afterEachGC(f func()) {
	type sentinel struct {
		_ *int // not a tiny pointer-free object: those may share a block and never be finalized
		_ [2]uint64
	}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			f()
			arm()
		})
	}
	arm()
}

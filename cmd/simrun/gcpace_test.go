package main

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestGCPacer: while collections keep at least half of what was
// allocated since the previous one (a heap growing with live state),
// percent-based collection is off and the memory limit is what the
// runtime holds twice over; as soon as one finds mostly garbage,
// back to gcPercent and no limit. Settings change only when needed.
func TestGCPacer(t *testing.T) {
	const off, none = -1, math.MaxInt64
	type step struct {
		h       heapState // what the collection leaves
		percent int       // the GC percent after it (0: not set)
		limit   int64     // the memory limit after it (0: not set)
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"garbage", []step{{heapState{10, 100, 50}, 0, 0}, {heapState{11, 200, 50}, 0, 0}, {heapState{10, 300, 50}, 0, 0}}},
		{"growing", []step{{heapState{80, 100, 120}, off, 240}, {heapState{160, 200, 230}, 0, 460}, {heapState{250, 300, 330}, 0, 660}}},
		{"grows then churns", []step{{heapState{80, 100, 120}, off, 240}, {heapState{150, 200, 220}, 0, 440}, {heapState{150, 400, 330}, gcPercent, none}, {heapState{160, 440, 330}, 0, 0}}},
		{"half kept", []step{{heapState{50, 100, 60}, off, 120}, {heapState{99, 200, 120}, gcPercent, none}}},
		{"shrinks", []step{{heapState{80, 100, 90}, off, 180}, {heapState{10, 200, 90}, gcPercent, none}}},
	} {
		var h heapState
		var percent int
		var limit int64
		g := &gcPacer{
			percent: func(p int) int { percent = p; return 0 },
			limit:   func(l int64) int64 { limit = l; return 0 },
			read:    func() heapState { return h },
		}
		for i, s := range c.steps {
			h, percent, limit = s.h, 0, 0
			g.cycle()
			if percent != s.percent || limit != s.limit {
				t.Errorf("%s: after collection %d (%+v): percent %d, limit %d set; want %d, %d", c.name, i, s.h, percent, limit, s.percent, s.limit)
			}
		}
	}
}

// TestGCSizer: after each collection the percent follows the heap left
// live, 100 under smallHeap and 25 from there, set only when it changes.
func TestGCSizer(t *testing.T) {
	const small, large = smallHeap - 1, smallHeap
	for _, c := range []struct {
		name string
		live []uint64
		want []int // the percent set after each collection (0: none)
	}{
		{"small", []uint64{1 << 20, 100 << 20, small}, []int{0, 0, 0}},
		{"grows large", []uint64{small, large, 2 * large}, []int{0, gcPercentLarge, 0}},
		{"large, then small", []uint64{large, large, small, 1 << 20, large}, []int{gcPercentLarge, 0, gcPercent, 0, gcPercentLarge}},
	} {
		var live uint64
		var set int
		g := &gcSizer{percent: func(p int) int { set = p; return 0 }, read: func() heapState { return heapState{live: live} }, cur: gcPercent}
		for i, l := range c.live {
			live, set = l, 0
			g.cycle()
			if set != c.want[i] {
				t.Errorf("%s: after collection %d (live %d): percent %d set, want %d", c.name, i, l, set, c.want[i])
			}
		}
	}
}

// TestGrowPacing: SIMRUN_GC is grow or unset; anything else is an error
// naming it.
func TestGrowPacing(t *testing.T) {
	for _, c := range []struct {
		v       string
		want    bool
		wantErr bool
	}{{"", false, false}, {"grow", true, false}, {"off", false, true}, {"Grow", false, true}} {
		got, err := growPacing(func(k string) string { return map[string]string{"SIMRUN_GC": c.v}[k] })
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("SIMRUN_GC=%q: growPacing = %v, %v", c.v, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), "SIMRUN_GC") {
			t.Errorf("SIMRUN_GC=%q: error %q does not name the variable", c.v, err)
		}
	}
}

// TestAfterEachGC: the hook runs after a collection, and again after the
// next one.
func TestAfterEachGC(t *testing.T) {
	ran := make(chan struct{}, 1)
	afterEachGC(func() { // runs after every later collection of the test binary too: never blocks
		select {
		case ran <- struct{}{}:
		default:
		}
	})
	for i := 0; i < 2; i++ {
		runtime.GC()
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("the hook did not run after collection %d", i+1)
		}
	}
}

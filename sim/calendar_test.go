package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCalendarOrderWithCancels: events scheduled at random times (some at
// the current time, in the lane), some cancelled or moved, run in (time,
// scheduling order) and the cancelled ones never run nor count.
func TestCalendarOrderWithCancels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := NewEngine(1)
	type ev struct {
		at  Time
		seq int
	}
	var want, got []ev
	seq := 0
	var handles []Handle
	var ids []int
	var spawnSome func()
	spawnSome = func() {
		for range 3 {
			if seq >= 3000 {
				return
			}
			seq++
			id, at := seq, e.Now()+Time(r.IntN(4)*r.IntN(50))
			h := e.At(at, func() {
				got = append(got, ev{e.Now(), id})
				spawnSome()
			})
			handles, ids = append(handles, h), append(ids, id)
			want = append(want, ev{at, id})
		}
		// Cancel a random pending one.
		if k := r.IntN(len(handles)); e.Cancel(handles[k]) {
			cancelled := ids[k]
			want = slices.DeleteFunc(want, func(x ev) bool { return x.seq == cancelled })
		}
	}
	e.At(0, spawnSome)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(want, func(a, b ev) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.seq - b.seq
	})
	if !slices.Equal(got, want) {
		t.Fatalf("ran %d events, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if e.Events() != uint64(len(got)+1) {
		t.Errorf("events = %d, want %d (cancelled events do not count)", e.Events(), len(got)+1)
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

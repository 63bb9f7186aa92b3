package litmus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParsePlace reads a thread placement, "P0=3,P1=0" (each thread of t on a
// processor or node; a unit word before the number is allowed, as in
// P1=node3, pe3 or cpu3), into Options.Place. Threads not named keep their
// own number. Errors quote the item at fault.
func ParsePlace(t Test, s string) ([]int, error) {
	place := make([]int, len(t.Threads))
	for i := range place {
		place[i] = i
	}
	seen := make([]bool, len(t.Threads))
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		th, where, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want THREAD=PROCESSOR, e.g. P1=3 or P1=node3", item)
		}
		n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(th), "P"))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(th), "P") || n < 0 || n >= len(t.Threads) {
			return nil, fmt.Errorf("%q: %q is not a thread of %s (P0..P%d)", item, strings.TrimSpace(th), t.Name, len(t.Threads)-1)
		}
		if seen[n] {
			return nil, fmt.Errorf("%q: P%d placed twice", item, n)
		}
		seen[n] = true
		where = strings.TrimSpace(where)
		digits := strings.TrimLeft(where, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
		v, err := strconv.Atoi(digits)
		if err != nil || digits == "" || v < 0 {
			return nil, fmt.Errorf("%q: %q is not a processor or node number", item, where)
		}
		place[n] = v
	}
	return place, nil
}

// placeOf is thread th's processor or node under place (nil: th).
func placeOf(place []int, th int) int {
	if place == nil {
		return th
	}
	return place[th]
}

// CheckPlace checks a placement of t's threads on machine (its unit, e.g.
// "node"): one per thread, no two threads on one unit, each below limit
// (0: no limit; the machine's own constructor then rejects what is too
// big). It returns the number of units the machine needs (nil place: one
// per thread).
func CheckPlace(t Test, place []int, machine, unit string, limit int) (int, error) {
	if place == nil {
		return len(t.Threads), nil
	}
	if len(place) != len(t.Threads) {
		return 0, fmt.Errorf("litmus %s on %s: %d placements for %d threads", t.Name, machine, len(place), len(t.Threads))
	}
	n := 0
	for th, v := range place {
		if v < 0 || limit > 0 && v >= limit {
			return 0, fmt.Errorf("litmus %s on %s: P%d on %s %d: %s has %ss 0..%d", t.Name, machine, th, unit, v, machine, unit, limit-1)
		}
		if o := slices.Index(place, v); o != th {
			return 0, fmt.Errorf("litmus %s on %s: P%d and P%d both on %s %d: one thread per %s", t.Name, machine, o, th, unit, v, unit)
		}
		n = max(n, v+1)
	}
	return n, nil
}

// checkHomes checks that each location's home is one of units 0..units-1.
func checkHomes(t Test, machine, unit string, homes []int, units int) error {
	if len(homes) != len(t.Locs) {
		return fmt.Errorf("litmus %s on %s: %d homes for %d locations", t.Name, machine, len(homes), len(t.Locs))
	}
	for l, h := range homes {
		if h < 0 || h >= units {
			return fmt.Errorf("litmus %s on %s: location %s on %s %d, but the machine the test runs on has %ss 0..%d", t.Name, machine, t.Locs[l], unit, h, unit, units-1)
		}
	}
	return nil
}

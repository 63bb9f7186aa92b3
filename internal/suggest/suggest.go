// Package suggest finds the name a user probably meant: the "did you
// mean" of an unknown scenario, machine, stack or workload name.
package suggest

import "strings"

// Closest is the name of names nearest to name: one that starts with it
// or that it starts with, else the nearest within two edits (case
// ignored); "" when none is that near.
func Closest(name string, names []string) string {
	if name == "" {
		return ""
	}
	low := strings.ToLower(name)
	best, bestD := "", 3
	for _, n := range names {
		ln := strings.ToLower(n)
		if strings.HasPrefix(ln, low) || strings.HasPrefix(low, ln) {
			return n
		}
		if d := distance(low, ln); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the edit distance between a and b: insertions, deletions,
// substitutions and transpositions of two neighbours (optimal string
// alignment), each one edit.
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Hint is " (did you mean %q?)" for the closest name, or "".
func Hint(name string, names []string) string {
	if c := Closest(name, names); c != "" && c != name {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}

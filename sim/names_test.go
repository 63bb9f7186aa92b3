package sim

import (
	"strconv"
	"testing"
)

// TestNumberedNames: the names are prefix and the index, whatever the
// number of digits.
func TestNumberedNames(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 99, 100, 1001} {
		got := NumberedNames("pe", n)
		if len(got) != n {
			t.Fatalf("%d names: got %d", n, len(got))
		}
		for i, name := range got {
			if want := "pe" + strconv.Itoa(i); name != want {
				t.Fatalf("%d names: name %d is %q, want %q", n, i, name, want)
			}
		}
	}
}

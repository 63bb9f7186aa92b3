package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"sx4", "t3d", "sp", "sci", "challenge", "tcpcluster"}
	for _, c := range []struct{ in, want string }{
		{"sic", "sci"},
		{"t3e", "t3d"},
		{"chall", "challenge"},
		{"T3D", "t3d"},
		{"origin2000", ""},
		{"", ""},
	} {
		if got := Closest(c.in, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if h := Hint("t3d-tabel1", []string{"t3d-table1", "t3d-table2"}); h != ` (did you mean "t3d-table1"?)` {
		t.Errorf("Hint = %q", h)
	}
}

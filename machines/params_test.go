package machines

import (
	"math"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
)

func TestCheckRanges(t *testing.T) {
	cases := []struct {
		name   string
		floats []FloatRange
		ints   []IntRange
		want   string
	}{
		{"ok", []FloatRange{Float("a_us", 1, 0, 2, "us")}, []IntRange{Int("n", 3, 1, 4, "x")}, ""},
		{"nan", []FloatRange{Float("a_us", math.NaN(), 0, 2, "us")}, nil, "m: a_us: must be a finite number"},
		{"inf", []FloatRange{Float("a_us", math.Inf(1), 0, 2, "us")}, nil, "must be a finite number, got +Inf"},
		{"high", []FloatRange{Float("a_us", 3, 0, 2, "us")}, nil, "m: a_us: 3 us is outside the plausible range [0, 2] us"},
		{"int", nil, []IntRange{Int("n", 0, 1, 4, "x")}, "m: n: 0 x is outside the plausible range [1, 4] x"},
	}
	for _, c := range cases {
		err := CheckRanges("m", c.floats, c.ints)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestLocate(t *testing.T) {
	node, err := strictyaml.Parse("s.yaml", []byte("a: 1\nsemop_us: -3\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := Locate("s.yaml", "machine.params", node, ParamErrorf("sx4", "semop_us", "must not be negative")).Error()
	if want := "s.yaml:2:11: field machine.params.semop_us: must not be negative (sx4)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := Locate("s.yaml", "machine.params", node, errPlain).Error(); !strings.HasPrefix(got, "s.yaml: machine.params: ") {
		t.Fatalf("got %q", got)
	}
}

var errPlain = &MissingCapability{Machine: "sx4", User: "x", Capability: "y"}

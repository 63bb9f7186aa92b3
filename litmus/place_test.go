package litmus

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/t3d"
)

func TestParsePlace(t *testing.T) {
	mp, _ := Lookup("MP")
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "P0=3,P1=0", want: "[3 0]"},
		{in: "P1=node7", want: "[0 7]"},
		{in: " P0 = pe12 ", want: "[12 1]"},
		{in: "P2=1", err: `"P2" is not a thread of MP (P0..P1)`},
		{in: "Q0=1", err: `"Q0" is not a thread`},
		{in: "P0", err: "want THREAD=PROCESSOR"},
		{in: "P0=node", err: `"node" is not a processor or node number`},
		{in: "P0=-1", err: "not a processor"},
		{in: "P0=1,P0=2", err: "P0 placed twice"},
	} {
		got, err := ParsePlace(mp, c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || fmt.Sprint(got) != c.want):
			t.Errorf("%q: %v %v, want %s", c.in, got, err, c.want)
		}
	}
}

// TestPlacement: a placement moves each thread and, by default, the
// locations it loads; on the T3D a far PE is more torus hops away, so the
// same runs take longer; two threads on one processor or node is an error
// naming both.
func TestPlacement(t *testing.T) {
	mp, _ := Lookup("MP+spin")
	if h := DefaultHomes(mp, []int{5, 2}); fmt.Sprint(h) != "[2 2]" {
		t.Errorf("homes %v, want the reader's node 2 for both", h)
	}
	plain, _ := Lookup("MP")
	params := t3d.DefaultParams()
	j, err := t3dJitter(params)
	if err != nil {
		t.Fatal(err)
	}
	simTime := func(place []int) float64 {
		o, err := runT3D(plain, params, DefaultHomes(plain, place), Options{Runs: 50, Seed: 1, Warm: true, StartJitterCycles: j, OpJitterCycles: j, Place: place})
		if err != nil || o.Failed > 0 {
			t.Fatalf("%v: %v %v", place, err, o.FirstFailure)
		}
		return o.SimTime.Micros()
	}
	near, far := simTime([]int{0, 2}), simTime([]int{0, 63})
	t.Logf("T3D MP, 50 runs: reader on PE 2 %.3f us, on PE 63 %.3f us", near, far)
	if !(far > near) {
		t.Errorf("T3D: 50 runs take %.3f us with the reader on PE 2, %.3f us on PE 63; want the far PE slower", near, far)
	}
	spm := spOf(sp.DefaultParams())
	o, err := RunMachine(mp, spm, DefaultHomes(mp, []int{7, 3}), Options{Runs: 20, Seed: 1, Warm: true, StartJitterCycles: 1000, Place: []int{7, 3}})
	if err != nil || o.Failed > 0 || o.Negative != 20 {
		t.Errorf("SP placed on nodes 7 and 3: %v %+v", err, o)
	}
	o, err = RunMachine(mp, sciOf(sci.DefaultParams()), sciHomes(t, mp, sci.DefaultParams(), []int{4, 9}), Options{Runs: 20, Seed: 1, Warm: true, Place: []int{4, 9}})
	if err != nil || o.Failed > 0 {
		t.Errorf("SCI placed on nodes 4 and 9: %v %+v", err, o)
	}
	if _, err := RunMachine(mp, spm, []int{3, 3}, Options{Runs: 1, Place: []int{3, 3}}); err == nil || !strings.Contains(err.Error(), "P0 and P1 both on node 3") {
		t.Errorf("two threads on one node: %v", err)
	}
	if _, err := RunMachine(mp, t3dOf(params), []int{0, 0}, Options{Runs: 1, Place: []int{0}}); err == nil || !strings.Contains(err.Error(), "1 placements for 2 threads") {
		t.Errorf("short placement: %v", err)
	}
}

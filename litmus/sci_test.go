package litmus

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/trace"
)

// TestSCI runs tests on an SCI cluster, one thread per node: remote
// stores are posted writes that the fabric reorders, remote loads round
// trips, smp_mb is MemBarrier. The fabric reorders by up to 3000 ns, as in
// the teaching scenarios sci-no-membarrier and sci-no-crc.
func TestSCI(t *testing.T) {
	params := sci.DefaultParams()
	params.ReorderNs = 3000
	j, err := sciJitter(params)
	if err != nil || j <= 0 {
		t.Fatalf("jitter %g, %v", j, err)
	}
	// Runs: 3000, as many as MP and 2+2W need to show their rare
	// reorderings (about 1 run in 250), and their fenced variants to bite;
	// 300 where the unfenced test shows in one run in seven or more (SB,
	// MP+spin), so a broken fence would show dozens of times.
	for _, c := range []struct {
		test     string
		homes    []int // nil: the default homes
		observed bool
		runs     int // 0: 3000
	}{
		// Both locations on the reader's node: the writer's flag (y)
		// packet overtakes its data (x) packet.
		{test: "MP", observed: true},
		// MemBarrier between them: x is globally performed before y leaves.
		{test: "MP+fences"},
		// Each thread's write to the other's node is posted; its local
		// load does not wait for it.
		{test: "SB", observed: true, runs: 300},
		{test: "SB+fences", runs: 300},
		// Both writers' writes to node 0: P1's two packets reorder.
		{test: "2+2W", observed: true},
		{test: "2+2W+fences"},
		// Loads stall the CPU and every location has one home memory (the
		// machine is multi-copy atomic): no load buffering, no IRIW, WRC.
		{test: "LB"},
		{test: "IRIW"},
		{test: "WRC"},
		// The reader spins on its own node's memory, which the adapter's
		// DMA keeps coherent: the spin ends, but may read stale data.
		{test: "MP+spin", observed: true, runs: 300},
		{test: "MP+spin+fences", runs: 300},
		// Data at the writer, flag at the reader: the reader's remote read
		// of x comes after y landed, and x's write is local, long done.
		{test: "MP", homes: []int{0, 1}},
	} {
		t.Run(fmt.Sprintf("%s/%v", c.test, c.homes), func(t *testing.T) {
			tt, err := Lookup(c.test)
			if err != nil {
				t.Fatal(err)
			}
			homes := c.homes
			if homes == nil {
				homes = sciHomes(t, tt, params, nil)
			}
			runs := c.runs
			if runs == 0 {
				runs = 3000
			}
			o, err := runSCI(tt, params, homes, Options{Runs: runs, Seed: 1, Warm: true, StartJitterCycles: j, OpJitterCycles: sciOpJitter(t, params)})
			if err != nil {
				t.Fatal(err)
			}
			checkObserved(t, o, c.observed)
		})
	}
}

func TestSCIHomesAndErrors(t *testing.T) {
	mp, _ := Lookup("MP")
	params := sci.DefaultParams()
	if h := sciHomes(t, mp, params, nil); fmt.Sprint(h) != "[1 1]" {
		t.Errorf("MP homes %v, want the reader's node for both", h)
	}
	params.ProcsPerNode = 2
	if h := sciHomes(t, mp, params, nil); fmt.Sprint(h) != "[0 0]" {
		t.Errorf("MP homes with 2 processes a node %v, want node 0", h)
	}
	params.ProcsPerNode = 1
	opts := Options{Runs: 1, Seed: 1}
	if _, err := runSCI(mp, params, []int{0, 2}, opts); err == nil || !strings.Contains(err.Error(), "location y on node 2") {
		t.Errorf("bad home: %v", err)
	}
	xchg := parseFile(t, filepath.Join("testdata", "SB+xchgs.litmus"))
	if _, err := runSCI(xchg, params, sciHomes(t, xchg, params, nil), opts); err == nil || !strings.Contains(err.Error(), "fetch-and-increment") {
		t.Errorf("atomic: %v", err)
	}
	params.ReorderNs = -1
	if _, err := runSCI(mp, params, []int{1, 1}, opts); err == nil || !strings.Contains(err.Error(), "reorder_ns") {
		t.Errorf("bad params: %v", err)
	}
}

// TestSCITraceFlows: a traced run on the SCI cluster draws the reads-from
// edge of MP+spin's spin (which always ends reading P0's y=1) as a flow.
func TestSCITraceFlows(t *testing.T) {
	tt, err := Lookup("MP+spin")
	if err != nil {
		t.Fatal(err)
	}
	params := sci.DefaultParams()
	var traced *sim.Engine
	opts := Options{Runs: 1, Seed: 1, Warm: true, NewEngine: func(seed uint64) *sim.Engine {
		traced = sim.NewEngine(seed)
		traced.SetLimits(DefaultLimits())
		trace.Enable(traced)
		return traced
	}}
	if _, err := runSCI(tt, params, sciHomes(t, tt, params, nil), opts); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := trace.Of(traced).WriteChrome(&b, traced.Now()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if trace.Of(traced).Flows() < 1 || strings.Count(s, `"ph":"s"`) != strings.Count(s, `"ph":"f"`) || !strings.Contains(s, `"rf: P0's y=1 -> P1's `) {
		t.Errorf("want a flow from P0's y=1 to P1's spin:\n%s", s)
	}
}

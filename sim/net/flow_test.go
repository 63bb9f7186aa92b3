package net

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// flowNet is a flow-model network over fixed routes.
func flowNet(t *testing.T, eng *sim.Engine, r routes) *Network {
	t.Helper()
	return mustNet(t, eng, r, Config{Header: 0, Flow: true})
}

// vcLines is n physical channels of latency lat at mbps with vcs virtual
// channels each: vc[k][i] is channel k's virtual channel i. Flows on
// distinct virtual channels of one channel share its bandwidth and never
// wait for each other's virtual channel.
func vcLines(n, vcs int, lat sim.Time, mbps float64) [][]*Link {
	ls := make([][]*Link, n)
	for k := range ls {
		c := NewChannel(fmt.Sprintf("c%d", k))
		kind := NewLinkKind(fixedName(c.Name()), lat, mbps)
		for i := 0; i < vcs; i++ {
			l := kind.Link(uint32(i))
			l.Phys = c
			ls[k] = append(ls[k], l)
		}
	}
	return ls
}

// TestFlowSharing: flows share a link's bandwidth max-min fairly, only
// where they meet, and a flow that ends gives its share back at its end.
func TestFlowSharing(t *testing.T) {
	const mbps = 100 // 100 bytes per microsecond
	us := sim.Microsecond
	for _, tc := range []struct {
		name string
		// routes by message: link indices into a set of links
		routes [][]int
		bytes  []int
		at     []sim.Time
		want   []sim.Time // delivery times
	}{
		{
			name:   "alone: the whole link",
			routes: [][]int{{0, 1}},
			bytes:  []int{1000},
			at:     []sim.Time{0},
			want:   []sim.Time{10*us + 2*us}, // 10 us of bytes, 2 links of 1 us
		},
		{
			name:   "two flows sharing a link each get half",
			routes: [][]int{{0, 1}, {2, 1}},
			bytes:  []int{1000, 1000},
			at:     []sim.Time{0, 0},
			want:   []sim.Time{20*us + 2*us, 20*us + 2*us},
		},
		{
			name:   "a third flow on another link does not slow them",
			routes: [][]int{{0, 1}, {2, 1}, {3, 4}},
			bytes:  []int{1000, 1000, 1000},
			at:     []sim.Time{0, 0, 0},
			want:   []sim.Time{22 * us, 22 * us, 12 * us},
		},
		{
			name: "a departing flow gives its share back at its departure",
			// The short one ends at 10 us (500 bytes at half): the long
			// one has sent 500 of 1500 and sends the rest at the full
			// rate, ending at 20 us.
			routes: [][]int{{0, 1}, {2, 1}},
			bytes:  []int{1500, 500},
			at:     []sim.Time{0, 0},
			want:   []sim.Time{20*us + 2*us, 10*us + 2*us},
		},
		{
			name: "max-min: a flow limited elsewhere leaves the rest to the other",
			// Flows 0 and 1 share link 1; flows 1 and 2 share link 3
			// with flow 3 too: flow 1 gets a third there (33.3 MB/s),
			// so flow 0 gets 66.7 on link 1.
			routes: [][]int{{0, 1}, {1, 3}, {2, 3}, {4, 3}},
			bytes:  []int{2000, 1000, 1000, 1000},
			at:     []sim.Time{0, 0, 0, 0},
			// Flows 1-3 end at 30 us; flow 0 has sent 2000 at 66.7 by
			// then: exactly done at 30 us.
			want: []sim.Time{32 * us, 32 * us, 32 * us, 32 * us},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			// Each flow on its own virtual channel of each link.
			links := vcLines(5, len(tc.routes), us, mbps)
			rt := routes{}
			for i, r := range tc.routes {
				for _, k := range r {
					rt[[2]int{i, 100 + i}] = append(rt[[2]int{i, 100 + i}], links[k][i])
				}
			}
			n := flowNet(t, eng, rt)
			var recs []*record
			for i := range tc.routes {
				recs = append(recs, sendAt(t, eng, n, tc.at[i], i, 100+i, tc.bytes[i], 0))
			}
			run(t, eng)
			for i, r := range recs {
				if !r.done || r.err != nil {
					t.Fatalf("message %d: done %v, err %v", i, r.done, r.err)
				}
				if d := r.delivered - tc.want[i]; d < -2 || d > 2 {
					t.Errorf("message %d delivered at %v, want %v", i, r.delivered, tc.want[i])
				}
				if r.sent != r.delivered-2*us {
					t.Errorf("message %d: sent at %v, delivered at %v: want the route's latency apart", i, r.sent, r.delivered)
				}
			}
		})
	}
}

// TestFlowLateArrival: a flow arriving halfway through another's halves its
// rate from then on.
func TestFlowLateArrival(t *testing.T) {
	us := sim.Microsecond
	eng := sim.NewEngine(1)
	links := vcLines(3, 2, 0, 100)
	n := flowNet(t, eng, routes{{0, 1}: {links[0][0], links[1][0]}, {2, 1}: {links[2][0], links[1][1]}})
	a := sendAt(t, eng, n, 0, 0, 1, 1000, 0)   // alone 0-5 us (500 bytes), then half
	b := sendAt(t, eng, n, 5*us, 2, 1, 500, 0) // half from 5 us: 500 bytes by 15 us
	run(t, eng)
	if a.delivered != 15*us || b.delivered != 15*us {
		t.Errorf("delivered at %v and %v, want 15us both", a.delivered, b.delivered)
	}
}

// TestFlowSourceRate: a flow's own limit (the source's rate) holds, and
// flows share a link's time as units do: a flow slower than the link
// occupies it for the time its bytes take at its own rate.
func TestFlowSourceRate(t *testing.T) {
	us := sim.Microsecond
	eng := sim.NewEngine(1)
	links := vcLines(3, 2, 0, 100)
	n := flowNet(t, eng, routes{{0, 1}: {links[0][0], links[1][0]}, {2, 1}: {links[2][0], links[1][1]}})
	// Half the link's time each: a at 12.5 MB/s, b at 50. b ends at 15
	// us; a has 62.5 bytes left, at 25 MB/s: 2.5 us more.
	a := sendAt(t, eng, n, 0, 0, 1, 250, 25e6)
	b := sendAt(t, eng, n, 0, 2, 1, 750, 0)
	run(t, eng)
	if a.delivered != 17500*sim.Nanosecond || b.delivered != 15*us {
		t.Errorf("delivered at %v and %v, want 17.5us and 15us", a.delivered, b.delivered)
	}
}

// TestFlowMatchesUnitsAlone: on an idle route a message takes as long on
// the flow model as on the unit model (headers per packet, source rate).
func TestFlowMatchesUnitsAlone(t *testing.T) {
	for _, bytes := range []int{0, 8, 32, 100, 4096, 65536} {
		for _, rate := range []float64{0, 125e6} {
			var got [2]sim.Time
			for i, flow := range []bool{false, true} {
				eng := sim.NewEngine(1)
				links := line("l", 4, sim.Nano(20), 300)
				n := mustNet(t, eng, routes{{0, 1}: links}, Config{MTU: 32, Header: 16, Unit: 4096, Flow: flow})
				r := sendAt(t, eng, n, 0, 0, 1, bytes, rate)
				run(t, eng)
				got[i] = r.delivered
			}
			if got[0] != got[1] {
				t.Errorf("%d bytes at %g: units deliver at %v, flow at %v", bytes, rate, got[0], got[1])
			}
		}
	}
}

// TestFlowDeterministic: the same traffic gives the same times, rerun.
func TestFlowDeterministic(t *testing.T) {
	trace := func() string {
		eng := sim.NewEngine(7)
		tor, err := NewTorus("t", [3]int{4, 4, 2}, sim.Nano(20), 300)
		if err != nil {
			t.Fatal(err)
		}
		n := mustNet(t, eng, torusRouter{tor}, Config{MTU: 32, Header: 16, Flow: true})
		var b strings.Builder
		var recs []*record
		for src := 0; src < 32; src++ {
			for k := 1; k < 4; k++ {
				dst := (src*7 + k*5) % 32
				recs = append(recs, sendAt(t, eng, n, sim.Time(k*src)*sim.Nanosecond, src, dst, 1000*k, 0))
			}
		}
		run(t, eng)
		for _, r := range recs {
			fmt.Fprintf(&b, "%d %d\n", r.sent, r.delivered)
		}
		return b.String()
	}
	if a, b := trace(), trace(); a != b {
		t.Errorf("reruns differ")
	}
}

// TestFlowConfig: the flow model does not reorder.
func TestFlowConfig(t *testing.T) {
	if err := (Config{Flow: true, Jitter: 5}).Validate(); err == nil || !strings.Contains(err.Error(), "flow model") {
		t.Errorf("flow with jitter: %v", err)
	}
}

// TestFlowShareMin: a message no larger than FlowShareMin crosses in its
// own time and takes no share from the flow it meets.
func TestFlowShareMin(t *testing.T) {
	us := sim.Microsecond
	eng := sim.NewEngine(1)
	// On another virtual channel of the long one's physical channel.
	links := vcLines(3, 2, 0, 100)
	n := mustNet(t, eng, routes{{0, 1}: {links[0][0], links[1][0]}, {2, 1}: {links[2][0], links[1][1]}}, Config{Flow: true, FlowShareMin: 32})
	a := sendAt(t, eng, n, 0, 0, 1, 1000, 0)
	b := sendAt(t, eng, n, 0, 2, 1, 32, 0)
	run(t, eng)
	if a.delivered != 10*us || b.delivered != 320*sim.Nanosecond {
		t.Errorf("delivered at %v and %v, want 10us and 320ns", a.delivered, b.delivered)
	}
}

// TestFlowHolding: a flow holds its route's links as a worm does. Flow 0
// holds link B from 0 to 10 us. Flow 1 (A then B) takes A at 1 us and
// waits for B, keeping A, so flow 2 (A then C), which needs A and enters it
// from another input port, waits for it
// although C is free, until flow 1 has sent its bytes at 20 us. On another
// virtual channel of A's physical channel, or where B is buffered (flow 1
// then waits in B's input buffer, holding nothing behind it), or when flow 2
// enters A from flow 1's port, flow 2 runs at once: a waiting flow sends nothing, so A's
// bandwidth is all flow 2's until flow 1 starts at 10 us and takes half.
func TestFlowHolding(t *testing.T) {
	us := sim.Microsecond
	for _, tc := range []struct {
		name      string
		otherVC   bool // flow 2 uses A's other virtual channel
		bufferedB bool
		samePort  bool // flow 2 enters A from flow 1's source link
		want      [3]sim.Time
	}{
		{name: "a waiting flow keeps its upstream link", want: [3]sim.Time{10 * us, 20 * us, 30 * us}},
		{name: "another virtual channel of the wire is free", otherVC: true, want: [3]sim.Time{10 * us, 22 * us, 14 * us}},
		{name: "a flow waiting for a buffered link holds none behind it", bufferedB: true, want: [3]sim.Time{10 * us, 22 * us, 14 * us}},
		// Units from one input port take a link in turn: flows from one
		// port hold it together.
		{name: "flows from one input port share it", samePort: true, want: [3]sim.Time{10 * us, 22 * us, 14 * us}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			ls := vcLines(5, 2, 0, 100)
			a, b, c := ls[0], ls[1][0], ls[2][0]
			s1, s2 := ls[3][0], ls[4][0] // flows 1 and 2 enter A from their own sources' links
			b.Buffered = tc.bufferedB
			a2 := a[0]
			if tc.otherVC {
				a2 = a[1]
			}
			if tc.samePort {
				s2 = s1
			}
			n := flowNet(t, eng, routes{{0, 10}: {b}, {1, 11}: {s1, a[0], b}, {2, 12}: {s2, a2, c}})
			recs := [3]*record{
				sendAt(t, eng, n, 0, 0, 10, 1000, 0),
				sendAt(t, eng, n, us, 1, 11, 1000, 0),
				sendAt(t, eng, n, 2*us, 2, 12, 1000, 0),
			}
			run(t, eng)
			for i, r := range recs {
				if !r.done || r.err != nil || r.delivered != tc.want[i] {
					t.Errorf("flow %d: done %v, err %v, delivered at %v, want %v", i, r.done, r.err, r.delivered, tc.want[i])
				}
			}
		})
	}
}

// TestFlowHoldsPerUnit: flows from two input ports that need one link take
// it in turns, a unit (Config.Unit) at a time, as the unit model's units
// do, and end when the unit model's messages do; whole messages (Unit 0)
// take it one after the other on both models.
func TestFlowHoldsPerUnit(t *testing.T) {
	us := sim.Microsecond
	for _, tc := range []struct {
		unit int
		want [2]sim.Time
	}{
		{unit: 100, want: [2]sim.Time{19 * us, 20 * us}},
		{unit: 0, want: [2]sim.Time{10 * us, 20 * us}},
	} {
		for _, flow := range []bool{false, true} {
			eng := sim.NewEngine(1)
			ls := line("l", 3, 0, 100)
			n := mustNet(t, eng, routes{{0, 10}: {ls[0], ls[2]}, {1, 10}: {ls[1], ls[2]}}, Config{Unit: tc.unit, Flow: flow})
			a := sendAt(t, eng, n, 0, 0, 10, 1000, 0)
			b := sendAt(t, eng, n, 0, 1, 10, 1000, 0)
			run(t, eng)
			if got := [2]sim.Time{a.delivered, b.delivered}; got != tc.want {
				t.Errorf("unit %d, flow %v: delivered at %v, want %v", tc.unit, flow, got, tc.want)
			}
		}
	}
}

// TestFlowLinkState: the flow state of a link is made once, stays where it
// is as the network makes more (past a slab chunk), and the virtual
// channels of one Channel share its bandwidth while a link without one has
// its own; an unlimited link has none.
func TestFlowLinkState(t *testing.T) {
	eng := sim.NewEngine(1)
	n := flowNet(t, eng, routes{})
	vcs := vcLines(300, 2, sim.Microsecond, 100)
	own := NewLinkKind(fixedName("own"), sim.Microsecond, 100)
	free := NewLinkKind(fixedName("free"), sim.Microsecond, 0)
	var all []*Link
	for _, c := range vcs {
		all = append(all, c...)
	}
	for i := 0; i < 300; i++ {
		all = append(all, own.Link(uint32(i)), free.Link(uint32(i)))
	}
	first := make([]*flowLink, len(all))
	for i, l := range all {
		first[i] = n.fl.flowLinkOf(l)
	}
	for i, l := range all {
		fl := n.fl.flowLinkOf(l)
		if fl != first[i] || l.fl != fl || fl.link != l || fl.lat != sim.Microsecond {
			t.Fatalf("link %d: flow state moved or not its own", i)
		}
	}
	for k, c := range vcs {
		if c[0].fl.res == nil || c[0].fl.res != c[1].fl.res {
			t.Errorf("channel %d: its virtual channels do not share its bandwidth", k)
		}
		if k > 0 && c[0].fl.res == vcs[k-1][0].fl.res {
			t.Errorf("channels %d and %d share a bandwidth", k-1, k)
		}
	}
	for i := 0; i < 300; i++ {
		o, f := all[600+2*i], all[600+2*i+1]
		if o.fl.res == nil || (i > 0 && o.fl.res == all[600+2*i-2].fl.res) {
			t.Errorf("link own%d: no bandwidth of its own", i)
		}
		if f.fl.res != nil {
			t.Errorf("unlimited link free%d has a bandwidth", i)
		}
	}
}

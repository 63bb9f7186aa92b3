package t3d

import (
	"slices"
	"strconv"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/net"
)

// TestFetchIncServesOneAtATime: requests that reach a fetch-and-increment
// register together are served one after another, fetch_inc_ns each.
func TestFetchIncServesOneAtATime(t *testing.T) {
	finish := func(pes int) []sim.Time {
		eng, m := newMachine(t, 16)
		var done []sim.Time
		for pe := 0; pe < pes; pe++ {
			eng.Spawn("pe", func(p *sim.Proc) {
				m.FetchInc(p, 1+pe%2, 0) // PEs 1 and 2 share a node: their requests arrive together
				done = append(done, p.Now())
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		if got := m.pes[0].fiq.served; got != uint64(pes) {
			t.Fatalf("%d requests served, want %d", got, pes)
		}
		slices.Sort(done)
		return done
	}
	one := finish(1)[0]
	access := sim.Nano(DefaultParams().FetchIncNs)
	for _, n := range []int{2, 8} {
		done := finish(n)
		if done[0] != one {
			t.Errorf("%d requests: first done at %v, alone %v", n, done[0], one)
		}
		if last := done[n-1]; last < one+sim.Time(n-1)*access {
			t.Errorf("%d requests: last done at %v, want at least %v (served one at a time)", n, last, one+sim.Time(n-1)*access)
		}
	}
}

// TestPacketModeMatchesFastPath: on an idle network a put takes the same
// time whole, in units, and packet by packet.
func TestPacketModeMatchesFastPath(t *testing.T) {
	for _, tc := range []struct{ pes, dst, n int }{{2, 1, 8}, {2, 1, 100}, {128, 127, 4096}, {128, 77, 65536 + 24}} {
		var times []sim.Time
		for _, mode := range []struct {
			packets bool
			unit    int
		}{{false, 0}, {false, 4096}, {true, 0}} {
			p := DefaultParams()
			p.PacketMode, p.UnitBytes = mode.packets, mode.unit
			eng := sim.NewEngine(1)
			m, err := New(eng, tc.pes, p)
			if err != nil {
				t.Fatal(err)
			}
			src, dst := alloc(t, m, 0, tc.n), alloc(t, m, tc.dst, tc.n)
			for i := range src.Bytes() {
				src.Bytes()[i] = byte(i*13 + 5)
			}
			var done sim.Time
			eng.Spawn("pe0", func(p *sim.Proc) {
				m.Put(p, 0, tc.dst, dst.Addr, src.Addr, tc.n)
				m.Quiet(p, 0)
				done = p.Now()
			})
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			if string(dst.Bytes()) != string(src.Bytes()) {
				t.Fatalf("%+v: data differs", mode)
			}
			times = append(times, done)
		}
		if times[0] != times[1] || times[0] != times[2] {
			t.Errorf("put of %d bytes to PE %d of %d: whole %v, units %v, packets %v", tc.n, tc.dst, tc.pes, times[0], times[1], times[2])
		}
	}
}

// TestAcksOccupyReversePath: a put's acknowledgement crosses the network
// as a packet on the response class's virtual channels, which share the
// physical channels with requests: the acknowledgements PE 1 sends for PE
// 2's puts take turns on PE 1's port and on the torus channel from node 0
// to node 1 with the data of PE 1's own put to PE 2, so that put ends
// later than alone.
func TestAcksOccupyReversePath(t *testing.T) {
	var end sim.Time // when the last PE finished
	run := func(withAcks bool) (sim.Time, *Machine) {
		eng, m := newMachine(t, 4) // PEs 0, 1 on node 0; 2, 3 on node 1
		const n = 64 << 10
		a, b := alloc(t, m, 1, n), alloc(t, m, 2, n)
		flag := alloc(t, m, 1, 8)
		if withAcks {
			eng.Spawn("pe2", func(p *sim.Proc) {
				for i := range 200 {
					m.PutWord(p, 2, 1, flag.Addr, uint64(i))
				}
				m.Quiet(p, 2)
			})
		}
		var done sim.Time
		eng.Spawn("pe1", func(p *sim.Proc) {
			m.Put(p, 1, 2, b.Addr, a.Addr, n)
			m.Quiet(p, 1)
			done = p.Now()
		})
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		end = eng.Now()
		return done, m
	}
	alone, _ := run(false)
	shared, m := run(true)
	if shared <= alone {
		t.Errorf("put from PE 1 to PE 2 with PE 2's acknowledgements on its path: done at %v, alone %v: acks did not take the wire", shared, alone)
	}
	tor := m.Torus()
	var units [classes]uint64 // crossing the channel from node 0 to node 1, per class
	for class := range classes {
		for vc := range 2 {
			units[class] += tor.LinkClassVC(0, 0, 1, class, vc).Stats().Units
		}
	}
	if units[classRequest] == 0 || units[classResponse] < 200 {
		t.Errorf("channel from node 0 to node 1: %d request units, %d response units; want the put's data and 200 acknowledgements", units[classRequest], units[classResponse])
	}
	port := m.pes[1].inject[0].Phys.Stats()
	if port.Waits == 0 {
		t.Errorf("PE 1's port: no unit waited for the wire (%+v): requests and responses do not share it", port)
	}
	for _, ch := range []struct {
		name string
		st   net.ChannelStats
	}{{"torus channel node 0 +x", tor.Channel(0, 0, 1).Stats()}, {"PE 1's port", port}} {
		if ch.st.Busy > end {
			t.Errorf("%s: busy %v in a run of %v: more than its bandwidth", ch.name, ch.st.Busy, end)
		}
	}
	if m.pes[1].inject[classRequest].Phys != m.pes[1].inject[classResponse].Phys {
		t.Error("PE 1's request and response injection links are not one port")
	}
}

// A PE's port names, derived from their ids, read as they did when each
// was built with its name.
func TestPortNames(t *testing.T) {
	m, err := New(sim.NewEngine(1), 8, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	for _, pe := range []int{0, 7} {
		x := m.pes[pe]
		x.ports()
		id := "pe" + strconv.Itoa(pe)
		for d, dir := range []string{".inject", ".eject"} {
			links := [2][classes]*net.Link{x.inject, x.eject}[d]
			if got := links[0].Phys.Name(); got != id+dir {
				t.Errorf("PE %d channel %d: %q, want %q", pe, d, got, id+dir)
			}
			for c := 0; c < classes; c++ {
				if got, want := links[c].Name(), id+dir+".c"+strconv.Itoa(c); got != want {
					t.Errorf("PE %d port %d class %d: %q, want %q", pe, d, c, got, want)
				}
			}
		}
	}
	if got, want := portName(1048575*portIDs+portIDs-1), "pe1048575.eject.c"+strconv.Itoa(classes-1); got != want {
		t.Errorf("last port of PE 1048575: %q, want %q", got, want)
	}
}

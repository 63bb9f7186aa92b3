package t3d

import (
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
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
		if got := m.pes[0].fiServed; got != uint64(pes) {
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
// as a packet: while a get's data leaves PE 1, the acknowledgements PE 1
// sends for another PE's puts wait for the link, so that PE's quiet ends
// later.
func TestAcksOccupyReversePath(t *testing.T) {
	run := func(withGet bool) sim.Time {
		eng, m := newMachine(t, 4)
		const n = 64 << 10
		a, b := alloc(t, m, 0, n), alloc(t, m, 1, n)
		flag := alloc(t, m, 1, 8)
		if withGet {
			eng.Spawn("pe0", func(p *sim.Proc) { m.Get(p, 0, 1, a.Addr, b.Addr, n) })
		}
		var done sim.Time
		eng.Spawn("pe2", func(p *sim.Proc) {
			for i := range 200 {
				m.PutWord(p, 2, 1, flag.Addr, uint64(i))
			}
			m.Quiet(p, 2)
			done = p.Now()
		})
		if err := eng.Run(); err != nil {
			t.Fatal(err)
		}
		return done
	}
	alone, shared := run(false), run(true)
	if shared <= alone {
		t.Errorf("puts and quiet with a get's data leaving their target: %v, alone %v: acks did not wait", shared, alone)
	}
}

package aclmpl

import (
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// fiCounter is a T3D that counts the fetch-and-increment round trips to
// remote registers (and their simulated time) and the resets of a PE's
// own register.
type fiCounter struct {
	*t3d.Machine
	fetches, resets int
	fetchTime       sim.Time
}

func (m *fiCounter) FetchInc(p *sim.Proc, pe, target int) uint64 {
	start := p.Now()
	v := m.Machine.FetchInc(p, pe, target)
	m.fetches++
	m.fetchTime += p.Now() - start
	return v
}

func (m *fiCounter) SetFetchInc(p *sim.Proc, pe int, v uint64) {
	m.resets++
	m.Machine.SetFetchInc(p, pe, v)
}

// asyncExchange has PE 0 send msgs asynchronous messages of n bytes to PE
// 1 of a 2-PE T3D (memcpy at memcpyMBps) whose pool has slots buffers; PE
// 1 posts its receives after waitUs and waits for each. It returns the
// counting machine, both PEs' CPU statistics and when each PE finished.
func asyncExchange(t *testing.T, n, msgs, slots int, waitUs, memcpyMBps float64) (*fiCounter, [2]mem.Stats, [2]sim.Time) {
	t.Helper()
	params := DefaultParams()
	params.PoolSlots = slots
	return asyncExchangeWith(t, n, msgs, params, waitUs, memcpyMBps)
}

// asyncExchangeWith is asyncExchange with the library's params.
func asyncExchangeWith(t *testing.T, n, msgs int, params Params, waitUs, memcpyMBps float64) (*fiCounter, [2]mem.Stats, [2]sim.Time) {
	t.Helper()
	e := sim.NewEngine(1)
	mp := t3d.DefaultParams()
	mp.MemcpyMBps = memcpyMBps
	tm, err := t3d.New(e, 2, mp)
	if err != nil {
		t.Fatal(err)
	}
	m := &fiCounter{Machine: tm}
	l, err := New(m, params)
	if err != nil {
		t.Fatal(err)
	}
	var stats [2]mem.Stats
	var end [2]sim.Time
	for me := 0; me < 2; me++ {
		x := l.PE(me)
		e.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
			b := buffer(t, x, n)
			fill(b.Bytes(), 7)
			must(t, x.needAsync("test")) // the pool, set up before the clock starts
			before := x.CPU().Stats()
			for i := 0; i < msgs; i++ {
				if me == 0 {
					must(t, x.AsyncSend(p, b, 1, i))
					continue
				}
				if i == 0 {
					p.Sleep(sim.Time(waitUs * float64(sim.Microsecond)))
				}
				q, err := x.AsyncRecv(p, b, 0, i)
				must(t, err)
				st, err := q.Wait(p)
				must(t, err)
				want := make([]byte, n)
				fill(want, 7)
				if st.Len != n || string(b.Bytes()) != string(want) {
					t.Errorf("message %d: %+v, corrupted or short", i, st)
				}
			}
			s := x.CPU().Stats()
			stats[me] = mem.Stats{Copies: s.Copies - before.Copies, CopiedBytes: s.CopiedBytes - before.CopiedBytes}
			end[me] = p.Now()
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return m, stats, end
}

// TestAsyncCostsOfA1KBExchange: asynchronous ACLMPL's costs in a 1 KB
// exchange, each where section 4.2 puts it. The sender reads the
// receiver's fetch-and-increment register (one network round trip) and
// puts the data straight from its buffer: no copy. The receiver copies the
// piece out of the pool into the caller's buffer with memcpy at the T3D's
// 170 MB/s: one copy, whose cost a faster memcpy removes from the
// receiver's time and not from the sender's. When the pool overflows, the
// receiver copies every piece in it out to the sent-but-not-yet-received
// list and resets its register; the sender that found the register out of
// bounds retries the round trip; the pieces are copied again from the list
// into the caller's buffer.
func TestAsyncCostsOfA1KBExchange(t *testing.T) {
	const n = 1024
	m, st, end := asyncExchange(t, n, 1, 64, 5, 170)
	if m.fetches != 1 || m.resets != 0 {
		t.Errorf("1 KB: %d fetch-and-increment round trips and %d resets, want 1 and 0", m.fetches, m.resets)
	}
	// A round trip: the put start-up, both network interfaces each way and
	// the register's access (about 1.5 us).
	if us := m.fetchTime.Micros(); us < 1 || us > 3 {
		t.Errorf("1 KB: the fetch-and-increment round trip took %.3f us, want 1-3", us)
	}
	if st[0].Copies != 0 {
		t.Errorf("1 KB: the sender made %d copies, want none (the data is put from its buffer)", st[0].Copies)
	}
	if st[1].Copies != 1 || st[1].CopiedBytes != n {
		t.Errorf("1 KB: the receiver made %d copies of %d bytes, want 1 of %d", st[1].Copies, st[1].CopiedBytes, n)
	}
	_, _, fast := asyncExchange(t, n, 1, 64, 5, 1e6)
	if fast[0] != end[0] {
		t.Errorf("1 KB: a faster memcpy changed the sender's time (%v -> %v): it makes no copy", end[0], fast[0])
	}
	saved := end[1] - fast[1]
	if want := sim.TransferTime(n, 170e6) - sim.TransferTime(n, 1e12); saved != want {
		t.Errorf("1 KB: a faster memcpy saved the receiver %v, want one 1 KB copy's streaming at 170 MB/s less at 1 TB/s, %v", saved, want)
	}

	// Overflow: a pool of 2 buffers and 3 messages, received late.
	m, st, _ = asyncExchange(t, n, 3, 2, 50, 170)
	if m.resets != 1 {
		t.Errorf("overflow: %d resets, want 1", m.resets)
	}
	if m.fetches < 4 {
		t.Errorf("overflow: %d fetch-and-increment round trips, want at least 4 (3 buffers and a retry out of bounds)", m.fetches)
	}
	// Two pieces copied out to the list and again into the caller's
	// buffer, the third from the pool.
	if st[0].Copies != 0 || st[1].Copies != 5 || st[1].CopiedBytes != 5*n {
		t.Errorf("overflow: sender %d copies, receiver %d of %d bytes; want 0, and 5 of %d", st[0].Copies, st[1].Copies, st[1].CopiedBytes, 5*n)
	}
}

// TestAsyncSlotCycles: slot_cycles is charged once per pool buffer on each
// side: with the receiver posting after every piece has arrived, each
// side's time grows by its own buffers' software, for a 1 KB message (one
// buffer) and a 20 KB one (three 8 KB buffers). (1500 cycles at 150 MHz
// are 10 us, within a nanosecond's rounding per charge.)
func TestAsyncSlotCycles(t *testing.T) {
	for _, tc := range []struct{ n, pieces int }{{1024, 1}, {20 << 10, 3}} {
		p := DefaultParams()
		p.SlotCycles = 0
		_, _, base := asyncExchangeWith(t, tc.n, 1, p, 1000, 170)
		p.SlotCycles = 1500
		_, _, end := asyncExchangeWith(t, tc.n, 1, p, 1000, 170)
		near := func(d, want sim.Time) bool { return d >= want && d <= want+sim.Time(tc.pieces)*sim.Nanosecond }
		if d, want := end[0]-base[0], sim.Time(tc.pieces)*10*sim.Microsecond; !near(d, want) {
			t.Errorf("%d bytes: the sender's time grew %v, want %v (%d buffers x 10 us)", tc.n, d, want, tc.pieces)
		}
		if d, want := end[1]-base[1], sim.Time(tc.pieces)*10*sim.Microsecond; !near(d, want) {
			t.Errorf("%d bytes: the late receiver's time grew %v, want %v (%d buffers x 10 us of its own)", tc.n, d, want, tc.pieces)
		}
	}
}

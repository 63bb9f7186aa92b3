package tcpcluster

import (
	"bytes"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// send writes msg from process 0 to process 1 and reads it there with a
// blocking poll; it returns the bytes read and the time they were all read.
func send(t *testing.T, params Params, msg []byte) ([]byte, sim.Time) {
	t.Helper()
	eng := sim.NewEngine(1)
	m, err := New(eng, 2, params)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := m.Alloc(0, "src", len(msg))
	dst, _ := m.Alloc(1, "dst", len(msg))
	m.CPU(0).Poke(src.Addr, msg)
	eng.Spawn("writer", func(p *sim.Proc) {
		for off := 0; off < len(msg); {
			k := m.SockWrite(p, 0, 1, src.Addr+mem.Addr(off), len(msg)-off)
			if k == 0 {
				m.Poll(p, 0, []int{1}, true)
			}
			off += k
		}
	})
	var done sim.Time
	eng.Spawn("reader", func(p *sim.Proc) {
		for off := 0; off < len(msg); {
			m.Poll(p, 1, nil, true)
			off += m.SockRead(p, 1, 0, dst.Addr+mem.Addr(off), len(msg)-off)
		}
		done = p.Now()
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	m.CPU(1).Peek(dst.Addr, got)
	return got, done
}

// TestStreams: bytes arrive whole and in order through Myrinet and through
// the loopback device, in one segment or many, past the send and receive
// buffers; the loopback path (no adapters, no wire, no interrupt) is the
// faster for a short message.
func TestStreams(t *testing.T) {
	loop := DefaultParams()
	loop.ProcsPerNode = 2
	var short [2]sim.Time
	for i, params := range []Params{DefaultParams(), loop} {
		for _, n := range []int{1, 64, 9000, 200000} {
			msg := make([]byte, n)
			for j := range msg {
				msg[j] = byte(j*7 + n)
			}
			got, at := send(t, params, msg)
			if !bytes.Equal(got, msg) {
				t.Fatalf("procs_per_node %d, %d bytes: received bytes differ", params.ProcsPerNode, n)
			}
			if n == 64 {
				short[i] = at
			}
		}
	}
	t.Logf("64 bytes: Myrinet %v, loopback %v", short[0], short[1])
	if short[1] >= short[0] {
		t.Errorf("64 bytes took %v through loopback, %v over Myrinet: want loopback faster", short[1], short[0])
	}
	if short[0] < 10*sim.Microsecond || short[0] > 40*sim.Microsecond {
		t.Errorf("64 bytes over Myrinet took %v: want the order of TCP's tens of microseconds", short[0])
	}
}

// TestPollOverlap: while one thread of process 1 sleeps in poll() waiting
// for a message, the process's other thread computes; under a lock the
// waiting thread holds across the poll, the other thread's work (which
// needs the lock) waits until the message has come.
func TestPollOverlap(t *testing.T) {
	const work = 10 * sim.Microsecond
	for _, tc := range []struct {
		name        string
		lockAcross  bool
		wantOverlap bool
	}{
		{"lock released across poll", false, true},
		{"lock held across poll", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := sim.NewEngine(1)
			m, err := New(eng, 2, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			buf, _ := m.Alloc(0, "buf", 8)
			in, _ := m.Alloc(1, "in", 8)
			lock := sim.NewMutex("rank1.mpi")
			var arrived, workDone, workStart sim.Time
			eng.Spawn("rank0", func(p *sim.Proc) {
				p.Sleep(20 * sim.Microsecond)
				m.SockWrite(p, 0, 1, buf.Addr, 8)
			})
			eng.Spawn("rank1.t0", func(p *sim.Proc) {
				lock.Lock(p)
				if !tc.lockAcross {
					lock.Unlock(p)
				}
				m.Poll(p, 1, nil, true)
				arrived = p.Now()
				if tc.lockAcross {
					lock.Unlock(p)
				}
				m.SockRead(p, 1, 0, in.Addr, 8)
			})
			eng.Spawn("rank1.t1", func(p *sim.Proc) {
				p.Sleep(sim.Microsecond) // t0 is in poll()
				lock.Lock(p)
				workStart = p.Now()
				m.CPU(1).Compute(p, float64(work)/float64(m.CPU(1).Clock().Cycles(1)))
				lock.Unlock(p)
				workDone = p.Now()
			})
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			overlap := workDone < arrived
			if overlap != tc.wantOverlap {
				t.Errorf("t1 worked %v..%v, the message woke t0 at %v: overlap %v, want %v", workStart, workDone, arrived, overlap, tc.wantOverlap)
			}
		})
	}
}

// TestPollSleepsUntilWoken: a poll with nothing to come is a deadlock
// naming poll().
func TestPollSleepsUntilWoken(t *testing.T) {
	eng := sim.NewEngine(1)
	m, err := New(eng, 2, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	eng.Spawn("rank1", func(p *sim.Proc) { m.Poll(p, 1, nil, true) })
	err = eng.Run()
	if !sim.IsDeadlock(err) || !bytes.Contains([]byte(err.Error()), []byte("poll(): rank1 sleeping in the kernel")) {
		t.Fatalf("got %v, want a deadlock naming poll()", err)
	}
}

// TestBadParams: out-of-range values name their field.
func TestBadParams(t *testing.T) {
	p := DefaultParams()
	p.ProcsPerNode = 3
	if err := p.Validate(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("procs_per_node")) {
		t.Errorf("procs_per_node 3 on 2 CPUs: got %v", err)
	}
	p = DefaultParams()
	p.MTUBytes = 10
	if err := p.Validate(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("mtu_bytes")) {
		t.Errorf("mtu_bytes 10: got %v", err)
	}
}

// TestSharedSegment: the processes of one node load and store a System V
// segment of its memory; processes of another node are on their own.
func TestSharedSegment(t *testing.T) {
	eng := sim.NewEngine(1)
	p := DefaultParams()
	p.ProcsPerNode = 2
	m, err := New(eng, 4, p)
	if err != nil {
		t.Fatal(err)
	}
	if m.NodeOf(1) != 0 || m.NodeOf(2) != 1 {
		t.Fatalf("nodes of processes 1 and 2: %d and %d, want 0 and 1", m.NodeOf(1), m.NodeOf(2))
	}
	seg, err := m.SharedSegment(0, "s", 64)
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	eng.Spawn("rank0", func(p *sim.Proc) { m.CPU(0).Store(p, seg.Addr, 8, 42) })
	eng.Spawn("rank1", func(p *sim.Proc) {
		p.Sleep(sim.Microsecond)
		got = m.CPU(1).Load(p, seg.Addr, 8)
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if got != 42 {
		t.Errorf("process 1 loads %d from the segment process 0 stored 42 in", got)
	}
	if _, err := m.SharedSegment(2, "s", 64); err == nil {
		t.Error("a segment on node 2 of 2 nodes was made")
	}
}

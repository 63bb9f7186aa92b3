package mpich

import (
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines/tcpcluster"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// sockWorld is MPICH over ch3:sock on a tcpcluster of procs processes.
func sockWorld(t *testing.T, e *sim.Engine, procs, perNode int, params Params) *World {
	t.Helper()
	mp := tcpcluster.DefaultParams()
	mp.ProcsPerNode = perNode
	m, err := tcpcluster.New(e, procs, mp)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSockMessages: messages of every protocol (short in one segment and
// in many, rendezvous data on the stream) arrive whole through Myrinet and
// through the loopback device, both ways at once, in order.
func TestSockMessages(t *testing.T) {
	for _, perNode := range []int{1, 2} {
		for _, n := range []int{0, 8, 1000, 20000, sockEagerBytes - 1, sockEagerBytes + 5000, 300000} {
			t.Run(fmt.Sprintf("per-node %d, %d bytes", perNode, n), func(t *testing.T) {
				e := sim.NewEngine(1)
				w := sockWorld(t, e, 2, perNode, DefaultParamsFor(DeviceSock))
				for rank := 0; rank < 2; rank++ {
					r := w.Rank(rank)
					e.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
						out, _ := r.Buffer(n)
						in, _ := r.Buffer(n)
						for i := 0; i < 2; i++ {
							fill(r, out, 7, rank, 1-rank, i)
							q, err := r.Isend(p, out, 1-rank, i)
							if err != nil {
								e.Fail(err)
								return
							}
							if _, err := r.Recv(p, in, 1-rank, i); err != nil {
								e.Fail(err)
								return
							}
							if _, err := q.Wait(p); err != nil {
								e.Fail(err)
								return
							}
							if err := check(r, in, n, 7, 1-rank, rank, i); err != nil {
								e.Fail(err)
								return
							}
						}
					})
				}
				if err := e.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestSockThreadsOverlap: thread t0 of process 1 waits in MPI_Recv for a
// message process 0 sends late; meanwhile t1 of process 1 sends to process
// 0 and returns. With the MPI lock released across the progress engine's
// poll() (progress locking, ch3:sock's), t1's send completes long before
// t0's message comes; with the lock held around each whole call
// (per-call), t1 waits for the lock until t0's receive returns.
func TestSockThreadsOverlap(t *testing.T) {
	const late = 200 * sim.Microsecond
	for _, tc := range []struct {
		locking     string
		wantOverlap bool
	}{
		{LockingProgress, true},
		{LockingPerCall, false},
	} {
		t.Run(tc.locking, func(t *testing.T) {
			e := sim.NewEngine(1)
			params := DefaultParamsFor(DeviceSock)
			params.Threads, params.ThreadLocking = BuildMultiple, tc.locking
			w := sockWorld(t, e, 2, 1, params)
			r0, r1 := w.Rank(0), w.Rank(1)
			var recvDone, sendDone sim.Time
			fail := func(err error) {
				if err != nil {
					e.Fail(err)
				}
			}
			e.Spawn("rank0", func(p *sim.Proc) {
				_, err := r0.InitThread(p, LevelMultiple)
				fail(err)
				b, _ := r0.Buffer(8)
				_, err = r0.Recv(p, b, 1, 2) // t1's message
				fail(err)
				p.Sleep(late)
				fail(r0.Send(p, b, 1, 1)) // t0's message, late
			})
			e.Spawn("rank1.t0", func(p *sim.Proc) {
				_, err := r1.InitThread(p, LevelMultiple)
				fail(err)
				b, _ := r1.Buffer(8)
				r1.SpawnThread(p, "t1", func(p *sim.Proc) {
					p.Sleep(5 * sim.Microsecond) // t0 is in MPI_Recv
					c, _ := r1.Buffer(8)
					fail(r1.Send(p, c, 0, 2))
					sendDone = p.Now()
				})
				_, err = r1.Recv(p, b, 0, 1)
				fail(err)
				recvDone = p.Now()
			})
			if err := e.Run(); err != nil {
				if tc.wantOverlap || !sim.IsDeadlock(err) {
					t.Fatal(err)
				}
				return // per-call: t1 never gets the lock, process 0 never sends: the deadlock of Figure 2
			}
			if overlap := sendDone < recvDone; overlap != tc.wantOverlap {
				t.Errorf("t1's send returned at %v, t0's receive at %v: overlap %v, want %v", sendDone, recvDone, overlap, tc.wantOverlap)
			}
		})
	}
}

// TestSockCommDupSerialized: Figure 3 lets a thread's allreduce find a
// context id only while that thread owns the mask on every process, so the
// successful allreduces of a process's two threads never overlap: two
// threads duplicating dups communicators each take at least as long as
// one thread duplicating 2 dups, however much of the waiting in poll()
// they overlap.
func TestSockCommDupSerialized(t *testing.T) {
	const procs, dups = 4, 4
	run := func(threads int) (sim.Time, int) {
		e := sim.NewEngine(1)
		params := DefaultParamsFor(DeviceSock)
		params.Threads = BuildMultiple
		w := sockWorld(t, e, procs, 1, params)
		var end sim.Time
		for rank := 0; rank < procs; rank++ {
			r := w.Rank(rank)
			e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
				if _, err := r.InitThread(p, LevelMultiple); err != nil {
					e.Fail(err)
					return
				}
				loop := func(c stacks.Communicator, n int) func(p *sim.Proc) {
					return func(p *sim.Proc) {
						for i := 0; i < n; i++ {
							d, err := c.Dup(p)
							if err == nil {
								err = d.Free(p)
							}
							if err != nil {
								e.Fail(err)
								return
							}
						}
						end = max(end, p.Now())
					}
				}
				parent, err := r.World().Dup(p) // both runs make it, before the loops
				if err != nil {
					e.Fail(err)
					return
				}
				if threads == 1 {
					loop(r.World(), 2*dups)(p)
					return
				}
				r.SpawnThread(p, "t1", loop(parent, dups))
				loop(r.World(), dups)(p)
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return end, w.Rank(0).Retries()
	}
	one, _ := run(1)
	two, retried := run(2)
	if two < one || retried == 0 {
		t.Errorf("%d dups by one thread took %v, %d by each of two %v with %d allocations retried: want two threads no faster, and retries", 2*dups, one, dups, two, retried)
	}
}

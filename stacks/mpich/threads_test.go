package mpich

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// threadParams is a small configuration for threaded tests.
func threadParams(dev string) Params {
	p := DefaultParams()
	p.Device = dev
	p.ShortBytes, p.EagerBytes = 256, 4096
	p.SharedMemoryBytes, p.SlotProcs, p.QueuePackets = 96<<10, 4, 4
	return p
}

// fill writes message idx's pattern into b as the rank's program would.
func fill(r *Rank, b mem.Region, seed uint64, src, dst, idx int) {
	raw := make([]byte, b.Len)
	pattern(raw, seed, src, dst, idx)
	r.CPU().Poke(b.Addr, raw)
}

// check compares b with message idx's pattern.
func check(r *Rank, b mem.Region, n int, seed uint64, src, dst, idx int) error {
	want := make([]byte, n)
	pattern(want, seed, src, dst, idx)
	got := make([]byte, n)
	r.CPU().Peek(b.Addr, got)
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("message %d from %d to %d: byte %d is %#x, want %#x", idx, src, dst, i, got[i], want[i])
		}
	}
	return nil
}

// figure2 runs the program of Figure 2 on two processes of two threads:
// thread 0 receives from the other process, thread 1 sends to it.
func figure2(t *testing.T, params Params, seed uint64) error {
	return figure2C(t, params, nil)
}

// figure2C is figure2 with a schedule chooser.
func figure2C(t testing.TB, params Params, c sim.Chooser) error {
	const seed = 1
	e := sim.NewEngine(seed)
	e.SetLimits(sim.Limits{MaxEvents: 1_000_000})
	w := newWorld(t, e, 2, params)
	e.Set(sim.WithChooser(c))
	for rank := 0; rank < 2; rank++ {
		r := w.Rank(rank)
		other := 1 - rank
		rb, _ := r.Buffer(64)
		sb, _ := r.Buffer(64)
		fill(r, sb, seed, rank, other, 0)
		e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			if _, err := r.InitThread(p, LevelMultiple); err != nil {
				e.Fail(err)
				return
			}
			r.SpawnThread(p, "t1", func(p *sim.Proc) {
				if err := r.Send(p, sb, other, 7); err != nil {
					e.Fail(err)
				}
			})
			if _, err := r.Recv(p, rb, other, 7); err != nil {
				e.Fail(err)
				return
			}
			if err := check(r, rb, 64, seed, other, rank, 0); err != nil {
				e.Fail(err)
			}
		})
	}
	return e.Run()
}

// TestFigure2: with the lock released across blocking waits, Figure 2
// completes on every build; with a lock around each whole call it hangs,
// and the report names the threads and the lock.
func TestFigure2(t *testing.T) {
	for _, dev := range []string{DeviceLFShmem, DeviceShmem} {
		for _, wait := range []string{WaitYield, WaitSpin} {
			p := threadParams(dev)
			p.ThreadWait = wait
			if err := figure2(t, p, 1); err != nil {
				t.Errorf("%s/%s: %v", dev, wait, err)
			}
		}
		p := threadParams(dev)
		p.ThreadLocking = LockingPerCall
		err := figure2(t, p, 1)
		if err == nil {
			t.Fatalf("%s: lock per call: Figure 2 completed, want a hang", dev)
		}
		for _, want := range []string{"rank0.t1", "mutex rank0.mpi held by rank0.t0"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: report %q lacks %q", dev, err, want)
			}
		}
	}
}

// TestThreadedRandomTraffic: under multiple, three threads per process
// exchange random messages (all three protocols) with the threads of the
// other processes: nothing lost, duplicated or corrupted, across seeds.
func TestThreadedRandomTraffic(t *testing.T) {
	const procs, threads, perPair = 3, 3, 6
	for _, dev := range []string{DeviceLFShmem, DeviceShmem} {
		for _, wait := range []string{WaitYield, WaitSpin} {
			for seed := uint64(1); seed <= 10; seed++ {
				params := threadParams(dev)
				params.ThreadWait = wait
				e := sim.NewEngine(seed)
				e.SetLimits(sim.Limits{MaxEvents: 5_000_000})
				w := newWorld(t, e, procs, params)
				rng := e.Rand()
				// size[s][d][th][k]: message k from thread th of s to thread th of d.
				size := map[[4]int]int{}
				for s := 0; s < procs; s++ {
					for d := 0; d < procs; d++ {
						for th := 0; th < threads; th++ {
							for k := 0; k < perPair; k++ {
								n := rng.IntN(params.ShortBytes)
								switch rng.IntN(4) {
								case 0:
									n = params.EagerBytes + 1 + rng.IntN(20000)
								case 1:
									n = params.ShortBytes + rng.IntN(params.EagerBytes-params.ShortBytes)
								}
								size[[4]int{s, d, th, k}] = n
							}
						}
					}
				}
				got := 0
				for rank := 0; rank < procs; rank++ {
					r := w.Rank(rank)
					body := func(th int) func(p *sim.Proc) {
						return func(p *sim.Proc) {
							// Every receive is posted first (a bounded pool holding
							// unexpected eager data could otherwise starve a
							// rendezvous the receiver waits for), then the sends.
							type rv struct {
								q          stacks.Request
								b          mem.Region
								n, src, id int
							}
							var rvs []rv
							for k := 0; k < perPair; k++ {
								for s := 0; s < procs; s++ {
									if s == rank {
										continue
									}
									n := size[[4]int{s, rank, th, k}]
									b, _ := r.Buffer(max(1, n))
									q, err := r.Irecv(p, b, s, th*1000+k)
									if err != nil {
										e.Fail(err)
										return
									}
									rvs = append(rvs, rv{q, b, n, s, th*1000 + k})
								}
							}
							var reqs []stacks.Request
							for k := 0; k < perPair; k++ {
								for d := 0; d < procs; d++ {
									if d == rank {
										continue
									}
									b, _ := r.Buffer(max(1, size[[4]int{rank, d, th, k}]))
									b = b.Slice(0, size[[4]int{rank, d, th, k}])
									fill(r, b, seed, rank, d, th*1000+k)
									q, err := r.Isend(p, b, d, th*1000+k)
									if err != nil {
										e.Fail(err)
										return
									}
									reqs = append(reqs, q)
								}
								p.Sleep(sim.Time(rng.IntN(20)) * sim.Microsecond)
							}
							for _, v := range rvs {
								st, err := v.q.Wait(p)
								if err != nil {
									e.Fail(err)
									return
								}
								if st.Len != v.n || st.Source != v.src || st.Tag != v.id {
									e.Fail(fmt.Errorf("rank %d thread %d: status %+v, want len %d from %d tag %d", rank, th, st, v.n, v.src, v.id))
								}
								if err := check(r, v.b, v.n, seed, v.src, rank, v.id); err != nil {
									e.Fail(err)
								}
								got++
							}
							for _, q := range reqs {
								if _, err := q.Wait(p); err != nil {
									e.Fail(err)
								}
							}
						}
					}
					e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
						if _, err := r.InitThread(p, LevelMultiple); err != nil {
							e.Fail(err)
							return
						}
						for th := 1; th < threads; th++ {
							r.SpawnThread(p, fmt.Sprintf("t%d", th), body(th))
						}
						body(0)(p)
					})
				}
				if err := e.Run(); err != nil {
					t.Fatalf("%s/%s/seed %d: %v", dev, wait, seed, err)
				}
				if want := procs * (procs - 1) * threads * perPair; got != want {
					t.Errorf("%s/%s/seed %d: %d messages received, want %d", dev, wait, seed, got, want)
				}
			}
		}
	}
}

// TestWildcardThreads: three threads of one process each post a wildcard
// receive; three senders send one message each: every thread gets exactly
// one, and no message goes to two threads.
func TestWildcardThreads(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		e := sim.NewEngine(seed)
		w := newWorld(t, e, 4, threadParams(DeviceLFShmem))
		r0 := w.Rank(0)
		seen := map[int]string{}
		recv := func(p *sim.Proc) {
			b, _ := r0.Buffer(64)
			st, err := r0.Recv(p, b, stacks.AnySource, stacks.AnyTag)
			if err != nil {
				e.Fail(err)
				return
			}
			if prev, dup := seen[st.Source]; dup {
				e.Fail(fmt.Errorf("message from %d received by %s and %s", st.Source, prev, p.Name()))
			}
			seen[st.Source] = p.Name()
			if err := check(r0, b, st.Len, seed, st.Source, 0, 0); err != nil {
				e.Fail(err)
			}
		}
		e.Spawn("rank0.t0", func(p *sim.Proc) {
			r0.InitThread(p, LevelMultiple)
			r0.SpawnThread(p, "t1", recv)
			r0.SpawnThread(p, "t2", recv)
			recv(p)
		})
		for s := 1; s < 4; s++ {
			r := w.Rank(s)
			e.Spawn(fmt.Sprintf("rank%d", s), func(p *sim.Proc) {
				p.Sleep(sim.Time(e.Rand().IntN(50)) * sim.Microsecond)
				b, _ := r.Buffer(16 * s)
				fill(r, b, seed, s, 0, 0)
				if err := r.Send(p, b, 0, s); err != nil {
					e.Fail(err)
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(seen) != 3 {
			t.Errorf("seed %d: %d messages received, want 3", seed, len(seen))
		}
	}
}

// TestLevelViolations: a second thread calling MPI under funneled, or two
// threads inside MPI at once under serialized, is an error naming both
// threads; under multiple it is allowed.
func TestLevelViolations(t *testing.T) {
	for _, tc := range []struct {
		level Level
		want  string
	}{
		{LevelFunneled, "rank0.t1 calls MPI_Send but only rank0.t0, which initialized MPI, may call it (level funneled)"},
		{LevelSerialized, "rank0.t1 calls MPI_Send while rank0.t0 is inside MPI (level serialized)"},
		{LevelMultiple, ""},
	} {
		e := sim.NewEngine(1)
		w := newWorld(t, e, 2, threadParams(DeviceLFShmem))
		r0, r1 := w.Rank(0), w.Rank(1)
		var got error
		e.Spawn("rank0.t0", func(p *sim.Proc) {
			r0.InitThread(p, tc.level)
			r0.SpawnThread(p, "t1", func(p *sim.Proc) {
				b, _ := r0.Buffer(8)
				if err := r0.Send(p, b, 1, 2); err != nil {
					got = err
				}
			})
			b, _ := r0.Buffer(8)
			r0.Recv(p, b, 1, 1)
		})
		e.Spawn("rank1", func(p *sim.Proc) {
			b, _ := r1.Buffer(8)
			p.Sleep(100 * sim.Microsecond)
			r1.Send(p, b, 0, 1)
			if tc.want == "" {
				r1.Recv(p, b, 0, 2)
			}
		})
		err := e.Run()
		if tc.want == "" {
			if err != nil || got != nil {
				t.Errorf("multiple: %v %v", err, got)
			}
			continue
		}
		var le *ThreadLevelError
		if !errors.As(got, &le) || !strings.Contains(got.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.level, got, tc.want)
		}
	}
}

// TestNesting: MPI_Send is MPI_Isend and MPI_Wait inside: the nesting
// level is thread-private (section 4.2): one thread's nesting never shows
// in another's.
func TestNesting(t *testing.T) {
	e := sim.NewEngine(1)
	w := newWorld(t, e, 2, threadParams(DeviceLFShmem))
	r0 := w.Rank(0)
	var other int
	e.Spawn("rank0.t0", func(p *sim.Proc) {
		r0.InitThread(p, LevelMultiple)
		r0.SpawnThread(p, "t1", func(q *sim.Proc) {
			q.Sleep(10 * sim.Microsecond)
			other = r0.Nesting(p) + 10*r0.Nesting(q)
		})
		b, _ := r0.Buffer(8)
		r0.Recv(p, b, 1, 0)
	})
	e.Spawn("rank1", func(p *sim.Proc) {
		b, _ := w.Rank(1).Buffer(8)
		p.Sleep(50 * sim.Microsecond)
		w.Rank(1).Send(p, b, 0, 0)
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if other != 1 { // t0 inside MPI_Recv (1), t1 outside (0)
		t.Errorf("nesting seen by t1: %d, want t0=1 t1=0", other)
	}
}

// TestT3DThreadsTimeShare: on the T3D two threads of a PE computing at
// once take twice as long as one plus the context switches (one Alpha per
// PE); on the SX-4 they run
// on two CPUs of the node side by side.
func TestT3DThreadsTimeShare(t *testing.T) {
	for _, tc := range []struct {
		dev  string
		want sim.Time
	}{{DeviceLFShmem, 10 * sim.Microsecond}, {DeviceT3D, 20 * sim.Microsecond}} {
		e := sim.NewEngine(1)
		var w *World
		if tc.dev == DeviceT3D {
			m, err := t3d.New(e, 2, t3d.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if w, err = NewWorld(m, DefaultParamsFor(DeviceT3D)); err != nil {
				t.Fatal(err)
			}
		} else {
			w = newWorld(t, e, 2, threadParams(tc.dev))
		}
		r := w.Rank(0)
		var end sim.Time
		e.Spawn("rank0.t0", func(p *sim.Proc) {
			r.InitThread(p, LevelMultiple)
			r.SpawnThread(p, "t1", func(p *sim.Proc) { p.Sleep(10 * sim.Microsecond); end = max(end, p.Now()) })
			p.Sleep(10 * sim.Microsecond)
			end = max(end, p.Now())
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if c := r.th.core; c != nil { // plus the context switches
			tc.want += sim.Time(c.Stats().Switches) * r.CPU().Clock().Cycles(t3d.DefaultParams().ThreadSwitchCycles)
		}
		if end != tc.want {
			t.Errorf("%s: two threads of 10 us end at %v, want %v", tc.dev, end, tc.want)
		}
	}
}

package mpich

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/explore"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// dupSpec is one MPI_Comm_dup experiment: procs processes of threads
// threads; thread j of every process duplicates its own parent
// communicator (thread 0 MPI_COMM_WORLD, thread j a duplicate made before
// the threads start) dups times, with random pauses if jitter, and sends a
// message around the ring on each new communicator.
type dupSpec struct {
	procs, threads, dups int
	variant              string
	jitter               bool
	retries              int  // livelock limit (0: the stack's)
	preempt              bool // the explorer may deschedule threads (sim.WithPreemption)
	memPoints            bool // every memory operation is a scheduling point (sim.WithMemoryPoints)
}

func runDups(t testing.TB, s dupSpec, seed uint64, c sim.Chooser) error {
	e := sim.NewEngine(seed)
	e.SetLimits(sim.Limits{MaxEvents: 2_000_000})
	params := threadParams(DeviceLFShmem)
	m := newWorldTB(t, e, s.procs, params)
	e.Set(sim.WithChooser(c), sim.WithPreemption(s.preempt), sim.WithMemoryPoints(s.memPoints))
	// ids[rank][thread][i]
	ids := make([][][]int, s.procs)
	for rank := 0; rank < s.procs; rank++ {
		r := m.Rank(rank)
		r.ctx.variant = s.variant
		if s.retries > 0 {
			r.ctx.maxRetries = s.retries
		}
		ids[rank] = make([][]int, s.threads)
		e.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			r.InitThread(p, LevelMultiple)
			parents := []*Comm{r.World().(*Comm)}
			for j := 1; j < s.threads; j++ {
				n, err := dup(p, r.World())
				if err != nil {
					e.Fail(err)
					return
				}
				parents = append(parents, n)
			}
			body := func(j int) func(p *sim.Proc) {
				return func(p *sim.Proc) {
					for i := 0; i < s.dups; i++ {
						if s.jitter {
							p.Sleep(sim.Time(e.Rand().IntN(40)) * sim.Microsecond)
						}
						n, err := dup(p, parents[j])
						if err != nil {
							e.Fail(err)
							return
						}
						ids[rank][j] = append(ids[rank][j], n.ContextID())
						if s.procs == 1 {
							continue
						}
						// Real traffic on the new communicator: a ring.
						b, _ := r.Buffer(8)
						var v [8]byte
						binary.LittleEndian.PutUint64(v[:], uint64(1000*rank+i))
						r.CPU().Poke(b.Addr, v[:])
						to, from := (rank+1)%s.procs, (rank+s.procs-1)%s.procs
						q, err := r.isendComm(p, n, b, to, i)
						if err != nil {
							e.Fail(err)
							return
						}
						rb, _ := r.Buffer(8)
						st, err := n.Recv(p, rb, from, i)
						if err != nil {
							e.Fail(err)
							return
						}
						r.CPU().Peek(rb.Addr, v[:])
						if got := binary.LittleEndian.Uint64(v[:]); got != uint64(1000*from+i) || st.Source != from {
							e.Fail(fmt.Errorf("rank %d: message on context %d holds %d from %d, want %d from %d", rank, n.ContextID(), got, st.Source, 1000*from+i, from))
						}
						if _, err := q.Wait(p); err != nil {
							e.Fail(err)
						}
					}
				}
			}
			for j := 1; j < s.threads; j++ {
				r.SpawnThread(p, fmt.Sprintf("t%d", j), body(j))
			}
			body(0)(p)
		})
	}
	if err := e.Run(); err != nil {
		return err
	}
	for rank := range ids {
		seen := map[int]bool{0: true}
		for j := 1; j < s.threads; j++ {
			seen[j] = true // the parents
		}
		for j := range ids[rank] {
			if len(ids[rank][j]) != s.dups {
				return fmt.Errorf("rank %d thread %d: %d dups, want %d", rank, j, len(ids[rank][j]), s.dups)
			}
			for i, id := range ids[rank][j] {
				if seen[id] {
					return fmt.Errorf("rank %d: context id %d given twice", rank, id)
				}
				seen[id] = true
				if id != ids[0][j][i] {
					return fmt.Errorf("thread %d dup %d: context id %d on rank %d, %d on rank 0", j, i, id, rank, ids[0][j][i])
				}
			}
		}
	}
	return nil
}

// dup is c.Dup as a *Comm.
func dup(p *sim.Proc, c stacks.Communicator) (*Comm, error) {
	n, err := c.Dup(p)
	if err != nil {
		return nil, err
	}
	return n.(*Comm), nil
}

// isendComm is MPI_Isend on communicator n.
func (r *Rank) isendComm(p *sim.Proc, n *Comm, buf memRegion, dest, tag int) (*request, error) {
	return r.isend(p, buf, dest, tag, n.ctx)
}

// TestCommDupUnique: Figure 3's algorithm gives every communicator a
// context id unique on its process and equal on all processes, and the
// new communicators carry traffic, over 150 random interleavings (random
// pauses before each dup, 2 and 3 processes of 2 and 3 threads). Each of
// these shapes shows the planted bugs (bugNoLowest, bugEarlyRelease) and
// the naive lock's deadlock in at least half of its seeds; the explorer
// (TestExploreFigure3) covers the interleavings at the same time.
func TestCommDupUnique(t *testing.T) {
	runs := 0
	for _, s := range []dupSpec{{2, 2, 3, ContextMulti, true, 0, false, false}, {3, 2, 3, ContextMulti, true, 0, false, false}, {3, 3, 2, ContextMulti, true, 0, false, false}} {
		for seed := uint64(1); seed <= 50; seed++ {
			if err := runDups(t, s, seed, nil); err != nil {
				t.Fatalf("%dx%d seed %d: %v", s.procs, s.threads, seed, err)
			}
			runs++
		}
	}
	t.Logf("%d runs", runs)
}

// TestCommDupSingleThreaded: with one thread per process the algorithm of
// 5.1 and Figure 3's agree.
func TestCommDupSingleThreaded(t *testing.T) {
	for _, v := range []string{ContextSingle, ContextMulti, ContextNaiveLock, ContextNaiveTwo} {
		if err := runDups(t, dupSpec{3, 1, 5, v, false, 0, false, false}, 1, nil); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// exploreDups explores every schedule of a dup experiment.
func exploreDups(t testing.TB, s dupSpec, bound int) explore.Result {
	return explore.Run(explore.Options{Bound: bound, MaxSchedules: 20000, Reduce: true}, func(p *explore.Path) error { return runDups(t, s, 1, p) })
}

// TestExploreFigure3: the explorer finds no failure in Figure 3 on 2x2,
// with and without preemption, with deterministic counts; it finds the
// planted bug (no lowestContextId rule: a livelock), the deadly embrace of the
// lock-then-allreduce algorithm and the livelock of the two-allreduce one.
// The 3x2 search (ten times the choice points of 2x2) is the built-in
// threads-fig3's, whose golden pins its counts and its 0 failing.
func TestExploreFigure3(t *testing.T) {
	for i, s := range []dupSpec{{2, 2, 1, ContextMulti, false, 0, false, false}, {2, 2, 1, ContextMulti, false, 0, true, false}} {
		x := exploreDups(t, s, 2)
		if x.Failures != 0 || x.Schedules < 10 {
			t.Errorf("%dx%d: %v", s.procs, s.threads, x)
		}
		if i == 0 { // determinism: the same search again, the same counts
			if y := exploreDups(t, s, 2); y.Schedules != x.Schedules || y.Points != x.Points {
				t.Errorf("%dx%d: counts differ between runs: %v / %v", s.procs, s.threads, x, y)
			}
		}
		t.Logf("figure 3 %dx%d (preemption %v): %v", s.procs, s.threads, s.preempt, x)
	}
	for _, tc := range []struct {
		variant string
		is      func(error) bool
		want    string
	}{
		// Found as a repeated state before the 10 retries.
		{bugNoLowest, sim.IsLivelock, "back at a state it met before"},
		{ContextNaiveLock, sim.IsDeadlock, "waits for mutex rank"},
		// Two allreduces without priority: a round in which each thread
		// invalidates the other's choice leaves the mask as it was: the
		// cycle of the endless loop of 5.2.
		{ContextNaiveTwo, sim.IsLivelock, "loops for ever"},
	} {
		s := dupSpec{2, 2, 1, tc.variant, false, 10, tc.variant == ContextNaiveTwo, false}
		x := exploreDups(t, s, 2)
		if x.Failures == 0 || !tc.is(x.Err) || !strings.Contains(x.Err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.variant, x)
			continue
		}
		// The shortest failing schedule replays.
		if err := runDups(t, s, 1, explore.NewSchedule(x.Shortest)); err == nil || err.Error() != x.Err.Error() {
			t.Errorf("%s: replaying %q gave %v, want %v", tc.variant, x.Shortest, err, x.Err)
		}
		t.Logf("%s: %v", tc.variant, x)
	}
}

// TestExploreEarlyRelease: Figure 3 with the lock released before
// mask_in_use is set is found at one preemption when every memory
// operation is a scheduling point (one thread descheduled between its
// unlock and its store of mask_in_use: both threads take the mask and the
// same id), and replays; it is not found with the stack's declared points
// only; the correct code passes at the same bound and one more.
func TestExploreEarlyRelease(t *testing.T) {
	bug := dupSpec{1, 2, 1, bugEarlyRelease, false, 0, true, true}
	x := exploreDups(t, bug, 1)
	if x.Failures == 0 || !isDuplicate(x.Err) || !strings.Contains(strings.Join(x.Steps, "\n"), "rank0.t0: is descheduled before it stores 8 bytes at sx4 [rank0:context ids]+128") {
		t.Fatalf("early release, memory points, bound 1: %v\n%s", x, strings.Join(x.Steps, "\n"))
	}
	if err := runDups(t, bug, 1, explore.NewSchedule(x.Shortest)); err == nil || err.Error() != x.Err.Error() {
		t.Errorf("replaying %q gave %v, want %v", x.Shortest, err, x.Err)
	}
	t.Logf("early release: %v", x)
	declared := bug
	declared.memPoints = false
	if y := exploreDups(t, declared, 2); y.Failures != 0 {
		t.Errorf("early release, declared points only, bound 2: %v", y)
	}
	for _, bound := range []int{1, 2} {
		good := dupSpec{1, 2, 1, ContextMulti, false, 0, true, true}
		if y := exploreDups(t, good, bound); y.Failures != 0 || y.Schedules < 10 {
			t.Errorf("Figure 3, memory points, bound %d: %v", bound, y)
		}
	}
}

// TestExploreLivelockRepeat: without the lowestContextId rule the
// explorer finds the livelock as a repeated state (the context-id
// variables and every thread's position) within a few rounds, with the
// stack's retry limit left at 1000.
func TestExploreLivelockRepeat(t *testing.T) {
	x := exploreDups(t, dupSpec{2, 2, 1, bugNoLowest, false, 0, false, false}, 1)
	if x.Failures == 0 || !sim.IsLivelock(x.Err) || !strings.Contains(x.Err.Error(), "after 2 rounds") {
		t.Fatalf("%v", x)
	}
	t.Logf("no lowestContextId: %v", x)
}

func isDuplicate(err error) bool { var d *DuplicateContextError; return errors.As(err, &d) }

// TestExploreFigure2: no schedule of Figure 2 deadlocks with locking above
// the device; with a lock around each call the explorer finds the hang.
func TestExploreFigure2(t *testing.T) {
	p := threadParams(DeviceLFShmem)
	x := explore.Run(explore.Options{Bound: 3, Reduce: true}, func(c *explore.Path) error { return figure2C(t, p, c) })
	if x.Failures != 0 || x.Schedules < 4 {
		t.Errorf("progress locking: %v", x)
	}
	t.Logf("figure 2: %v", x)
	p.ThreadLocking = LockingPerCall
	y := explore.Run(explore.Options{Bound: 3, Reduce: true}, func(c *explore.Path) error { return figure2C(t, p, c) })
	if y.Failures == 0 || y.Shortest != "" {
		t.Errorf("per-call locking: %v (the engine's own order already hangs)", y)
	}
	t.Logf("figure 2, lock per call: %v", y)
}

func newWorldTB(t testing.TB, e *sim.Engine, procs int, params Params) *World {
	return newWorld(t, e, procs, params)
}

type memRegion = mem.Region

// TestRefCountAtomic: a communicator's reference count is changed with an
// atomic fetch-and-add under thread locks (section 4.1) and with a plain
// load and store without them; MPI_Comm_free returns its context id.
func TestRefCountAtomic(t *testing.T) {
	for _, level := range []Level{LevelSingle, LevelMultiple} {
		e := sim.NewEngine(1)
		w := newWorld(t, e, 2, threadParams(DeviceLFShmem))
		var atomics [2]uint64
		var ids [2]int
		for rank := 0; rank < 2; rank++ {
			r := w.Rank(rank)
			e.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
				r.InitThread(p, level)
				c, err := dup(p, r.World())
				if err != nil {
					e.Fail(err)
					return
				}
				before := r.CPU().Stats().Atomics
				c.addRef(p, 1)
				atomics[rank] = r.CPU().Stats().Atomics - before
				c.addRef(p, -1)
				if err := c.Free(p); err != nil {
					e.Fail(err)
				}
				d, _ := r.World().Dup(p)
				ids[rank] = d.ContextID()
				if d.ContextID() != c.ContextID() {
					e.Fail(fmt.Errorf("freed context id %d not reused (got %d)", c.ContextID(), d.ContextID()))
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatalf("%v: %v", level, err)
		}
		want := uint64(0)
		if level == LevelMultiple {
			want = 1
		}
		if atomics[0] != want {
			t.Errorf("%v: %d atomics for one reference, want %d", level, atomics[0], want)
		}
	}
}

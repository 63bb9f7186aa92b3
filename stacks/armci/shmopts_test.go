package armci

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/mpich"
)

// openMPICH is the registry's message-passing stack for the
// message-passing barriers: MPICH in its default configuration.
func openMPICH(m machines.Machine) (*stacks.World, error) {
	return mpich.Open(m, mpich.DefaultParams())
}

func sx4Build(e *sim.Engine, n int) (machines.Machine, error) {
	return sx4.New(e, n, sx4.DefaultParams())
}

// TestSharedMemoryLocksAndBarriers: on the SX-4 port, with test-and-set
// locks or System V semaphores, and shared-memory or message-passing
// barriers, four or five ranks accumulating into one array give the exact sum and
// fetch-and-increment hands out distinct values; a barrier lets no rank
// leave before the last one arrives.
func TestSharedMemoryLocksAndBarriers(t *testing.T) {
	const elems, rounds = 50, 3
	for _, n := range []int{4, 5} {
		for _, lock := range []string{LockTAS, LockSysV} {
			for _, barrier := range []string{BarrierShared, BarrierMessage, BarrierRecDbl} {
				t.Run(fmt.Sprintf("%d/%s/%s", n, lock, barrier), func(t *testing.T) {
					par := DefaultParams()
					par.Lock, par.Barrier = lock, barrier
					seen := map[int64]bool{}
					var x []byte
					var lastIn, firstOut sim.Time
					runPortWith(t, sx4Build, n, par, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
						arr, _ := r.Malloc(p, 8*elems)
						ctr, _ := r.Malloc(p, 8)
						y, _ := r.Buffer(8 * elems)
						for i := 0; i < elems; i++ {
							binary.LittleEndian.PutUint64(y.Bytes()[8*i:], mathBits64(float64(r.Rank()+i)))
						}
						for k := 0; k < rounds; k++ {
							if err := r.AccS(p, stacks.AccDbl, 1, stacks.Contiguous(y.Addr, arr[0], 8*elems), 0); err != nil {
								t.Error(err)
							}
							v, err := r.Rmw(p, stacks.FetchAndAdd, 0, ctr[0], 1)
							if err != nil {
								t.Error(err)
							}
							if seen[v] {
								t.Errorf("value %d handed out twice", v)
							}
							seen[v] = true
						}
						p.Sleep(sim.Micro(float64(100 * r.Rank()))) // arrive at different times
						lastIn = max(lastIn, p.Now())
						r.Barrier(p)
						if firstOut == 0 || p.Now() < firstOut {
							firstOut = p.Now()
						}
						if r.Rank() == 0 {
							x = append([]byte(nil), r.CPU().Memory().Bytes(arr[0], 8*elems)...)
						}
					})
					if len(seen) != n*rounds {
						t.Errorf("%d distinct counter values, want %d", len(seen), n*rounds)
					}
					for i := 0; i < elems; i++ {
						want := 0.0
						for id := 0; id < n; id++ {
							want += rounds * float64(id+i)
						}
						if got := float64frombits(binary.LittleEndian.Uint64(x[8*i:])); got != want {
							t.Fatalf("element %d = %v, want %v (a lost update)", i, got, want)
						}
					}
					if firstOut < lastIn {
						t.Errorf("a rank left the barrier at %v, before the last arrived at %v", firstOut, lastIn)
					}
				})
			}
		}
	}
}

// TestSysVLockCost: an uncontended accumulate under a System V semaphore
// costs two semop system calls (P and V) more than under the test-and-set
// lock, give or take the lock word's few memory operations.
func TestSysVLockCost(t *testing.T) {
	cost := func(lock string) sim.Time {
		par := DefaultParams()
		par.Lock = lock
		var d sim.Time
		runPortWith(t, sx4Build, 2, par, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
			arr, _ := r.Malloc(p, 64)
			y, _ := r.Buffer(64)
			if r.Rank() == 0 {
				t0 := p.Now()
				if err := r.AccS(p, stacks.AccDbl, 1, stacks.Contiguous(y.Addr, arr[1], 64), 1); err != nil {
					t.Error(err)
				}
				d = p.Now() - t0
			}
			r.Barrier(p)
		})
		return d
	}
	tas, sysv := cost(LockTAS), cost(LockSysV)
	semop := sim.Micro(sx4.DefaultParams().SemopUs)
	if extra := sysv - tas; extra < 2*semop-sim.Micro(5) || extra > 2*semop+sim.Micro(5) {
		t.Errorf("accumulate: %v with System V semaphores, %v with test-and-set: %v more, want about two semops (%v)", sysv, tas, extra, 2*semop)
	}
}

// TestSharedMemoryParamsElsewhere: the lock and barrier params belong to
// the shared-memory port; on the SP they are an error naming the port;
// unknown values are rejected by Validate.
func TestSharedMemoryParamsElsewhere(t *testing.T) {
	m, err := sp.New(sim.NewEngine(1), 2, sp.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	par := DefaultParams()
	par.Lock = LockSysV
	if _, err := Open(m, par, openMPICH); err == nil || !strings.Contains(err.Error(), "shared-memory port") {
		t.Errorf("lock sysv on the SP: got %v", err)
	}
	for _, bad := range []Params{{Lock: "spin"}, {Barrier: "tree"}} {
		p := DefaultParams()
		if bad.Lock != "" {
			p.Lock = bad.Lock
		}
		if bad.Barrier != "" {
			p.Barrier = bad.Barrier
		}
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// TestMessageBarrierNeedsMessagePassing: the shared-memory port's
// message-passing barriers need the message-passing stack the registry
// gives (MessagePassing); without one, or with a stack whose ranks do not
// pass messages, Open says so.
func TestMessageBarrierNeedsMessagePassing(t *testing.T) {
	m, err := sx4Build(sim.NewEngine(1), 2)
	if err != nil {
		t.Fatal(err)
	}
	par := DefaultParams()
	par.Barrier = BarrierMessage
	if _, err := Open(m, par, nil); err == nil || !strings.Contains(err.Error(), "no message-passing stack") {
		t.Errorf("no message-passing stack: got %v", err)
	}
	armciOnly := func(m machines.Machine) (*stacks.World, error) { return Open(m, DefaultParams(), nil) }
	if _, err := Open(m, par, armciOnly); err == nil || !strings.Contains(err.Error(), "message passing (stacks.Comm)") {
		t.Errorf("a stack without stacks.Comm: got %v", err)
	}
}

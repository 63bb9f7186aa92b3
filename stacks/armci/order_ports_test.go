package armci

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

func t3dBuild(e *sim.Engine, n int) (machines.Machine, error) {
	return t3d.New(e, n, t3d.DefaultParams())
}

// arrival is when a watched remote byte first held its new value, and
// whether it did when the issuing call returned and after a Fence.
type arrival struct {
	at, returnedAt       sim.Time
	atReturn, afterFence bool
}

// putTwoTargets has rank 0 put a large strided section (256 blocks of 200
// bytes) to far, then 8 bytes to near (or accumulate them when acc), and
// a monitor watch the last byte of each at its target. With fence, rank 0
// fences far before the put to near. It returns the two arrivals.
func putTwoTargets(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), n, far, near int, acc, fence bool) (big, small arrival) {
	t.Helper()
	const blocks, blockBytes = 256, 200
	runPort(t, build, n, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
		dst, err := r.Malloc(p, 2*blocks*blockBytes)
		if err != nil {
			t.Error(err)
			return
		}
		if r.Rank() != 0 {
			r.Barrier(p)
			return
		}
		src, _ := r.Buffer(blocks * blockBytes)
		one, _ := r.Buffer(8)
		for i := range src.Bytes() {
			src.Bytes()[i] = 0xAA
		}
		copy(one.Bytes(), []byte{1, 0, 0, 0, 0, 0, 0, 0}) // 1 as an int for accumulate, 0x01 bytes for put
		bigLast := dst[far] + mem.Addr(2*blockBytes*(blocks-1)+blockBytes-1)
		watch := func(a *arrival, rank int, addr mem.Addr, want byte) {
			m := all[rank].CPU().Memory()
			p.Engine().Spawn(fmt.Sprintf("monitor%d", rank), func(q *sim.Proc) {
				for m.Bytes(addr, 1)[0] != want {
					q.Sleep(sim.Micro(0.05))
				}
				a.at = q.Now()
			})
		}
		watch(&big, far, bigLast, 0xAA)
		watch(&small, near, dst[near], 1)
		s := stacks.Strided{Src: src.Addr, SrcStride: []int{blockBytes}, Dst: dst[far], DstStride: []int{2 * blockBytes}, Count: []int{blockBytes, blocks}}
		var err2 error
		if acc {
			err2 = r.AccS(p, stacks.AccInt, 1, s, far)
		} else {
			err2 = r.PutS(p, s, far)
		}
		if err2 != nil {
			t.Error(err2)
		}
		big.returnedAt = p.Now()
		big.atReturn = all[far].CPU().Memory().Bytes(bigLast, 1)[0] != 0
		if fence {
			r.Fence(p, far)
			big.afterFence = all[far].CPU().Memory().Bytes(bigLast, 1)[0] != 0
		}
		if acc {
			err2 = r.AccS(p, stacks.AccInt, 1, stacks.Contiguous(one.Addr, dst[near], 4), near)
		} else {
			err2 = r.PutS(p, stacks.Contiguous(one.Addr, dst[near], 8), near)
		}
		if err2 != nil {
			t.Error(err2)
		}
		small.returnedAt = p.Now()
		r.AllFence(p)
		r.Barrier(p)
		if !bytes.Equal(all[far].CPU().Memory().Bytes(bigLast, 1), []byte{0xAA}) {
			t.Errorf("the big transfer's last byte is wrong after AllFence")
		}
	})
	return big, small
}

// TestPortsPutFenceDifferentTargets: strided puts and accumulates to two
// targets on the T3D and SX-4 ports. On the T3D a put returns at local
// completion, its last packet still in the network: the put to the second
// target is issued before the first has completed (nothing orders them),
// and only Fence makes the first complete before the second is issued.
// (Observed, the two still land in issue order: shmem_put blocks until
// its data has left the PE, and the last packet's transit, under 1 us,
// is shorter than the next put's startup; the ordering rule allows either
// order.) Accumulate on the T3D is complete when it returns: the lock's
// release waits for its puts (shmem_quiet). On the SX-4 every put and
// accumulate is a vector move complete in memory when it returns, so
// Fence has nothing to wait for.
func TestPortsPutFenceDifferentTargets(t *testing.T) {
	for _, c := range []struct {
		name             string
		build            func(*sim.Engine, int) (machines.Machine, error)
		n, far, near     int
		putCompleteAtRet bool
	}{{"t3d", t3dBuild, 8, 7, 1, false}, {"sx4", sx4Build, 4, 3, 1, true}} {
		for _, acc := range []bool{false, true} {
			op := "PutS"
			if acc {
				op = "AccS"
			}
			t.Run(c.name+"/"+op, func(t *testing.T) {
				big, small := putTwoTargets(t, c.build, c.n, c.far, c.near, acc, false)
				wantAtReturn := c.putCompleteAtRet || acc
				if big.atReturn != wantAtReturn {
					t.Errorf("%s to rank %d complete when it returned: %v, want %v", op, c.far, big.atReturn, wantAtReturn)
				}
				if !wantAtReturn && !(big.at > big.returnedAt) {
					t.Errorf("%s to rank %d landed at %v, before it returned at %v: want the next operation issued while it is in flight", op, c.far, big.at, big.returnedAt)
				}
				if small.at == 0 || big.at == 0 {
					t.Fatalf("a transfer never landed: %+v %+v", big, small)
				}
				fenced, fsmall := putTwoTargets(t, c.build, c.n, c.far, c.near, acc, true)
				if !fenced.afterFence {
					t.Errorf("%s to rank %d not complete after Fence", op, c.far)
				}
				if !(fsmall.at > fenced.at) {
					t.Errorf("with Fence, the operation to rank %d landed at %v, not after the one to rank %d at %v", c.near, fsmall.at, c.far, fenced.at)
				}
			})
		}
	}
}

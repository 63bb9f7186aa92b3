package armci

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// spJitter builds an SP whose switch delays each packet by up to
// jitterUs, drawn from the engine's generator.
func spJitter(jitterUs float64) func(*sim.Engine, int) (machines.Machine, error) {
	return func(e *sim.Engine, n int) (machines.Machine, error) {
		mpar := sp.DefaultParams()
		mpar.SwitchJitterUs = jitterUs
		return sp.New(e, n, mpar)
	}
}

// runOrder runs c on a port's machine of n ranks (engine seed seed): rank
// 0 issues c's two operations to rank tgt, fences, and checks what tgt
// holds at the place and what c's get read; "" if they honour issue order.
func runOrder(t *testing.T, c orderCase, build func(*sim.Engine, int) (machines.Machine, error), n, tgt int, seed uint64) string {
	t.Helper()
	var held, got []byte
	runPortSeeded(t, build, n, DefaultParams(), seed, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
		dst, err := r.Malloc(p, 8192)
		if err != nil {
			t.Error(err)
			return
		}
		if r.Rank() == 0 {
			a, _ := r.Buffer(8192)
			b, _ := r.Buffer(256)
			fill(a, 0xAA)
			fill(b, 0xBB)
			got = c.ops(p, r, tgt, a, b, dst[tgt])
			r.Fence(p, tgt)
			held = append([]byte(nil), all[tgt].CPU().Memory().Bytes(dst[tgt], 8)...)
		}
		r.Barrier(p)
	})
	return c.check(held, got)
}

// orderCase is two operations rank 0 issues, one after the other, to the
// same bytes of rank tgt (at dst); check says whether what tgt holds
// after a Fence (mem), and what a get read (got), honour issue order.
type orderCase struct {
	name  string
	ops   func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte
	check func(mem, got []byte) string
}

// fill sets every byte of reg to v.
func fill(reg mem.Region, v byte) {
	for i := range reg.Bytes() {
		reg.Bytes()[i] = v
	}
}

// putBytes is a contiguous put of n bytes of src to dst at rank tgt.
func putBytes(t *testing.T, p *sim.Proc, r stacks.RemoteCopy, tgt int, src mem.Region, dst mem.Addr, n int) {
	if err := r.PutS(p, stacks.Contiguous(src.Addr, dst, n), tgt); err != nil {
		t.Error(err)
	}
}

// blocks8 is a strided section of 8 blocks of 8 bytes, 16 apart at both
// ends: ARMCI moves it by one active message (a short put: data in the
// user header).
func blocks8(src mem.Region, dst mem.Addr) stacks.Strided {
	return stacks.Strided{Src: src.Addr, SrcStride: []int{16}, Dst: dst, DstStride: []int{16}, Count: []int{8, 8}}
}

func orderCases(t *testing.T) []orderCase {
	want := func(name string, exp []byte) func(m, got []byte) string {
		return func(m, _ []byte) string {
			if !bytes.Equal(m[:len(exp)], exp) {
				return fmt.Sprintf("%s: rank 1 holds %x, want %x (the later operation's)", name, m[:len(exp)], exp)
			}
			return ""
		}
	}
	bb := bytes.Repeat([]byte{0xBB}, 8)
	return []orderCase{
		{"put/put LAPI", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			putBytes(t, p, r, tgt, a, dst, 8)
			putBytes(t, p, r, tgt, b, dst, 8)
			return nil
		}, want("put/put", bb)},
		{"put/put large LAPI", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			putBytes(t, p, r, tgt, a, dst, 4096) // four packets
			putBytes(t, p, r, tgt, b, dst, 8)
			return nil
		}, want("large put/put", bb)},
		{"put/put short AM", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			if err := r.PutS(p, blocks8(a, dst), tgt); err != nil {
				t.Error(err)
			}
			if err := r.PutS(p, blocks8(b, dst), tgt); err != nil {
				t.Error(err)
			}
			return nil
		}, want("short AM put/put", bb)},
		{"put LAPI/put short AM", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			putBytes(t, p, r, tgt, a, dst, 8)
			if err := r.PutS(p, blocks8(b, dst), tgt); err != nil {
				t.Error(err)
			}
			return nil
		}, want("LAPI put/short AM put", bb)},
		{"put/acc", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			binary.LittleEndian.PutUint32(a.Bytes(), 5)
			binary.LittleEndian.PutUint32(b.Bytes(), 1)
			putBytes(t, p, r, tgt, a, dst, 4)
			if err := r.AccS(p, stacks.AccInt, 1, stacks.Contiguous(b.Addr, dst, 4), tgt); err != nil {
				t.Error(err)
			}
			return nil
		}, want("put/accumulate", []byte{6, 0, 0, 0})},
		{"put/get", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			putBytes(t, p, r, tgt, b, dst, 8)
			back, _ := r.Buffer(8)
			if err := r.GetS(p, stacks.Contiguous(dst, back.Addr, 8), tgt); err != nil {
				t.Error(err)
			}
			return append([]byte(nil), back.Bytes()...)
		}, func(_, got []byte) string {
			if !bytes.Equal(got, bb) {
				return fmt.Sprintf("put/get: the get read %x, want the put's %x", got, bb)
			}
			return ""
		}},
		{"put/rmw", func(p *sim.Proc, r stacks.RemoteCopy, tgt int, a, b mem.Region, dst mem.Addr) []byte {
			binary.LittleEndian.PutUint64(b.Bytes(), 10)
			putBytes(t, p, r, tgt, b, dst, 8)
			old, err := r.Rmw(p, stacks.FetchAndAdd, tgt, dst, 1)
			if err != nil {
				t.Error(err)
			}
			return binary.LittleEndian.AppendUint64(nil, uint64(old))
		}, func(m, got []byte) string {
			if binary.LittleEndian.Uint64(got) != 10 || binary.LittleEndian.Uint64(m) != 11 {
				return fmt.Sprintf("put/rmw: fetch-and-add read %d and left %d, want 10 and 11", binary.LittleEndian.Uint64(got), binary.LittleEndian.Uint64(m))
			}
			return ""
		}},
	}
}

// TestOrderingUnderSwitchJitter: armci-sp.txt 2.3, "The ARMCI operations
// are ordered (complete in order they were issued) when referencing the
// same remote process(or)". With switch_jitter_us LAPI's messages overtake
// one another (LAPI orders nothing); two operations rank 0 issues to the
// same bytes of rank 1 must still take effect in issue order, for every
// seed and jitter (40, 41, 57, 90 us reproduced the put/put violation
// before the port ordered its operations itself).
func TestOrderingUnderSwitchJitter(t *testing.T) {
	for _, c := range orderCases(t) {
		for _, jitter := range []float64{0, 40, 41, 57, 90} {
			for seed := uint64(1); seed <= 4; seed++ {
				if msg := runOrder(t, c, spJitter(jitter), 2, 1, seed); msg != "" {
					t.Errorf("%s, switch_jitter_us %g, seed %d: %s", c.name, jitter, seed, msg)
				}
			}
		}
	}
}

// TestPortsOrdering: the same promise on the other ports. SHMEM port
// (T3D, SCI): an operation to a rank with a put still outstanding there
// first waits for it (Quiet); accumulate and read-modify-write end with
// Quiet (the lock's release). Shared-memory port (SX-4): a put or
// accumulate is a vector move complete in memory when it returns. The T3D
// runs on 8 PEs (the target several hops away) and on 2, the SX-4 and SCI
// on 4.
func TestPortsOrdering(t *testing.T) {
	for _, port := range []struct {
		name   string
		build  func(*sim.Engine, int) (machines.Machine, error)
		n, tgt int
	}{{"t3d", t3dBuild, 8, 7}, {"t3d-near", t3dBuild, 2, 1}, {"sx4", sx4Build, 4, 3}, {"sci", sciBuild, 4, 3}} {
		for _, c := range orderCases(t) {
			if msg := runOrder(t, c, port.build, port.n, port.tgt, 1); msg != "" {
				t.Errorf("%s, %s: %s", port.name, c.name, msg)
			}
		}
	}
}

// sciReorder builds an SCI cluster whose fabric delays each packet by up
// to reorderNs, procs per node.
func sciReorder(reorderNs float64, procs int) func(*sim.Engine, int) (machines.Machine, error) {
	return func(e *sim.Engine, n int) (machines.Machine, error) {
		mpar := sci.DefaultParams()
		mpar.ReorderNs, mpar.ProcsPerNode = reorderNs, procs
		return sci.New(e, n, mpar)
	}
}

// TestOrderingUnderSCIReordering: on the SCI cluster's SHMEM port, whose
// fabric reorders packets (reorder_ns), two operations rank 0 issues to
// the same bytes of another rank still take effect in issue order, for
// every seed: the port waits for an outstanding put (Quiet) before the
// next operation to its rank. With two processes per node the target may
// share rank 0's node (writes through its own adapter).
func TestOrderingUnderSCIReordering(t *testing.T) {
	for _, c := range orderCases(t) {
		for _, reorder := range []float64{0, 200, 1000, 5000} {
			for _, ppn := range []int{1, 2} {
				for seed := uint64(1); seed <= 4; seed++ {
					if msg := runOrder(t, c, sciReorder(reorder, ppn), 4, 1, seed); msg != "" {
						t.Errorf("%s, reorder_ns %g, procs_per_node %d, seed %d: %s", c.name, reorder, ppn, seed, msg)
					}
				}
			}
		}
	}
}

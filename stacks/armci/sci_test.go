package armci

import (
	"bytes"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// putGetTimes runs rank 0's contiguous put of n bytes to rank 1 followed
// by a Fence (remote completion), then a get of them back, on a 2-rank
// machine, checks the bytes both ways and returns the times: the put's
// (its return: local completion), the put's and Fence's, and the get's.
func putGetTimes(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), n int) (local, put, get sim.Time) {
	t.Helper()
	runPort(t, build, 2, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
		dst, err := r.Malloc(p, n)
		if err != nil {
			t.Error(err)
			return
		}
		if r.Rank() == 0 {
			src, _ := r.Buffer(n)
			back, _ := r.Buffer(n)
			for i := range src.Bytes() {
				src.Bytes()[i] = byte(i*7 + 3)
			}
			t0 := p.Now()
			if err := r.PutS(p, stacks.Contiguous(src.Addr, dst[1], n), 1); err != nil {
				t.Error(err)
			}
			local = p.Now() - t0
			r.Fence(p, 1)
			put = p.Now() - t0
			if !bytes.Equal(all[1].CPU().Memory().Bytes(dst[1], n), src.Bytes()) {
				t.Errorf("%d bytes put: the target holds other bytes", n)
			}
			t0 = p.Now()
			if err := r.GetS(p, stacks.Contiguous(dst[1], back.Addr, n), 1); err != nil {
				t.Error(err)
			}
			get = p.Now() - t0
			if !bytes.Equal(back.Bytes(), src.Bytes()) {
				t.Errorf("%d bytes got back: other bytes", n)
			}
		}
		r.Barrier(p)
	})
	return local, put, get
}

// TestPutGetSCI: a contiguous put (with its Fence) and get of 8 B and
// 1 MB on the SCI cluster's SHMEM port (two nodes), its shared-memory port
// (one node) and the T3D's SHMEM port, with the data checked. On SCI a
// remote read is a round trip per 64-byte block through both adapters,
// while posted writes stream: the 1 MB get is much slower than the put
// there, and both stay below the PCI bus's rate. (go test -v prints the
// times.)
func TestPutGetSCI(t *testing.T) {
	type point struct{ put, get sim.Time }
	res := map[string]map[int]point{}
	for _, c := range []struct {
		name  string
		build func(*sim.Engine, int) (machines.Machine, error)
	}{{"sci", sciBuild}, {"sci-one-node", sciReorder(200, 2)}, {"t3d", t3dBuild}} {
		res[c.name] = map[int]point{}
		for _, n := range []int{8, 1 << 20} {
			local, put, get := putGetTimes(t, c.build, n)
			res[c.name][n] = point{put, get}
			mbps := func(d sim.Time) float64 { return float64(n) / d.Micros() }
			t.Logf("%-13s %8d B: put %10.2f us, put+fence %10.2f us (%6.1f MB/s), get %10.2f us (%6.1f MB/s)",
				c.name, n, local.Micros(), put.Micros(), mbps(put), get.Micros(), mbps(get))
		}
	}
	big := res["sci"][1<<20]
	if big.get < 2*big.put {
		t.Errorf("sci 1 MB: get %v, put %v: want remote reads much slower than posted writes", big.get, big.put)
	}
	if bw := float64(1<<20) / big.put.Micros(); bw > 132 {
		t.Errorf("sci 1 MB put at %.1f MB/s, above the PCI bus's 132 MB/s peak", bw)
	}
	for _, name := range []string{"sci", "sci-one-node", "t3d"} {
		for _, n := range []int{8, 1 << 20} {
			if pt := res[name][n]; pt.put <= 0 || pt.get <= 0 {
				t.Errorf("%s %d B: put %v, get %v", name, n, pt.put, pt.get)
			}
		}
	}
}

// TestMallocMapsOnSCI: ARMCI_Malloc's memory, which other ranks write
// remotely, is an SCI segment on the SCI cluster: each rank pays the
// driver's mapping (map_us) for its part.
func TestMallocMapsOnSCI(t *testing.T) {
	var took sim.Time
	runPort(t, sciBuild, 2, func(p *sim.Proc, r stacks.RemoteCopy, all []stacks.RemoteCopy) {
		t0 := p.Now()
		if _, err := r.Malloc(p, 4096); err != nil {
			t.Error(err)
		}
		if r.Rank() == 0 {
			took = p.Now() - t0
		}
	})
	if mapUs := sim.Micro(sci.DefaultParams().MapUs); took < mapUs {
		t.Errorf("ARMCI_Malloc took %v, less than the segment's mapping (%v)", took, mapUs)
	}
}

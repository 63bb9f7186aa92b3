package collective

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
)

// Calibration targets of papers/aclmpl-t3d.txt, as regression tests on
// simulated time.

func TestTargetSyncLatency(t *testing.T) {
	us := value(t, RunLatency, "aclmpl", "{pes: [128], mode: sync}")
	if us < 4.5*0.85 || us > 4.5*1.15 {
		t.Errorf("synchronous one-word latency %.3f us, want 4.5 us within 15%% (4.1)", us)
	}
}

func TestTargetSyncOneToAllAllToOne(t *testing.T) {
	o2a := value(t, RunOneToAll, "aclmpl", "{pes: [16], bytes: [1048576]}")
	a2o := value(t, RunAllToOne, "aclmpl", "{pes: [16], bytes: [1048576]}")
	if o2a <= 100 || a2o <= 100 {
		t.Errorf("synchronous one-to-all %.1f MB/s, all-to-one %.1f MB/s: want both above 100 MB/s (4.1)", o2a, a2o)
	}
}

func TestTargetMemcpy(t *testing.T) {
	eng := sim.NewEngine(1)
	m, err := t3d.New(eng, 2, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Alloc(0, "a", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Alloc(0, "b", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var took sim.Time
	eng.Spawn("pe0", func(p *sim.Proc) {
		m.CPU(0).Memcpy(p, b.Addr, a.Addr, 1<<20)
		took = p.Now()
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if mbps := float64(1<<20) / took.Seconds() / 1e6; mbps < 165 || mbps > 171 {
		t.Errorf("memcpy %.1f MB/s, want about 170 (4.2)", mbps)
	}
}

// Shapes that must emerge without tuning.

func TestShapeSyncBeatsShmemAllToAllLarge(t *testing.T) {
	for _, pes := range []int{4, 8} {
		w := fmt.Sprintf("{pes: [%d], bytes: [2097152]}", pes)
		sync, shmem := value(t, RunAllToAll, "aclmpl", w), value(t, RunAllToAll, "shmem", w)
		t.Logf("%d PEs, 2 MB all-to-all: sync ACLMPL %.1f MB/s, SHMEM %.1f MB/s", pes, sync, shmem)
		if sync <= shmem {
			t.Errorf("%d PEs, 2 MB: synchronous ACLMPL (%.1f MB/s) does not beat raw SHMEM (%.1f MB/s)", pes, sync, shmem)
		}
	}
	// On 2 PEs there is no flooding: they are about equal.
	w := "{pes: [2], bytes: [2097152]}"
	if sync, shmem := value(t, RunAllToAll, "aclmpl", w), value(t, RunAllToAll, "shmem", w); sync > shmem*1.05 {
		t.Errorf("2 PEs: sync %.1f vs SHMEM %.1f MB/s, want about equal", sync, shmem)
	}
}

func TestShapeAllToAllFallsWithPartition(t *testing.T) {
	prev := 0.0
	for i, pes := range []int{2, 8, 32} {
		v := value(t, RunAllToAll, "aclmpl", fmt.Sprintf("{pes: [%d], bytes: [65536]}", pes))
		t.Logf("%d PEs: %.1f MB/s per PE", pes, v)
		if i > 0 && v >= prev {
			t.Errorf("per-PE all-to-all throughput on %d PEs (%.1f) not below the smaller partition's (%.1f)", pes, v, prev)
		}
		prev = v
	}
}

func TestShapeBinarySwapBeatsTreeFrom1024Elements(t *testing.T) {
	for _, c := range []struct {
		bytes    int
		swapWins bool
	}{{64, false}, {8192, true}, {65536, true}} {
		w := fmt.Sprintf("{pes: [32], bytes: [%d]", c.bytes)
		treeSpec := specOn(t, "t3d", "aclmpl", "{binary_swap_from_elems: 0}", w+"}")
		res, err := RunReduce(treeSpec)
		if err != nil || len(res.Failures) > 0 || len(res.Rows) != 1 {
			t.Fatalf("tree reduce of %d bytes: %v %v", c.bytes, err, res.Failures)
		}
		tree := res.Rows[0].Value
		swap := value(t, RunReduce, "aclmpl", w+", reduce: binary-swap}")
		t.Logf("%d elements: tree %.3g s, binary swap %.3g s", c.bytes/8, tree, swap)
		if (swap < tree) != c.swapWins {
			t.Errorf("%d elements: tree %.3g s, binary swap %.3g s; binary swap should win: %v", c.bytes/8, tree, swap, c.swapWins)
		}
	}
}

func TestShapeSyncAtLeastAsFastAsAsync(t *testing.T) {
	for _, w := range []string{"{pes: [8], bytes: [64]}", "{pes: [8], bytes: [65536]}"} {
		sync := value(t, RunAllToAll, "aclmpl", w)
		async := value(t, RunAllToAll, "aclmpl", strings.Replace(w, "}", ", mode: async}", 1))
		if sync < async {
			t.Errorf("%s: synchronous %.2f MB/s below asynchronous %.2f", w, sync, async)
		}
	}
}

func TestBadParams(t *testing.T) {
	for _, c := range []struct{ stack, w, want string }{
		{"aclmpl", "{pes: [2], bytes: [8], mode: fast}", "mode"},
		{"aclmpl", "{pes: [2, 4], bytes: [8, 16]}", "sweep either"},
		{"aclmpl", "{pes: [1]}", "pes"},
		{"aclmpl", "{pes: [2], bogus: 1}", "bogus"},
		{"shmem", "{pes: [2], bytes: [8], reduce: binary-swap}", "binary-swap"},
		{"cmmd", "{pes: [2]}", "stack"},
	} {
		s, err := resolve(t, "t3d", c.stack, "", c.w)
		if err == nil {
			_, err = RunAllToAll(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: err %v, want it to mention %q", c.stack, c.w, err, c.want)
		}
	}
	if _, err := RunBcast(spec(t, "shmem", "{pes: [2]}")); err == nil {
		t.Error("broadcast over raw SHMEM: no error")
	}
}

func TestDeterministic(t *testing.T) {
	a, err := RunTable(spec(t, "aclmpl", "{pes: [8], bytes: [512], mode: async}"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunTable(spec(t, "aclmpl", "{pes: [8], bytes: [512], mode: async}"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || a.Events != b.Events {
		t.Error("two runs of the same spec differ")
	}
}

// Memory that cannot hold a case is a validation error naming the field,
// not a dropped point.
func TestMemoryCheckedBeforeRunning(t *testing.T) {
	s := spec(t, "aclmpl", "{pes: [2], bytes: [1024, 67108864, 2048]}")
	if err := Check("alltoall")(s); err == nil || !strings.Contains(err.Error(), "bytes") || !strings.Contains(err.Error(), "each PE's memory") {
		t.Fatalf("Check: %v, want a memory error naming bytes and the memory", err)
	}
	if res, err := RunAllToAll(s); err == nil {
		t.Fatalf("run: no error, %d rows", len(res.Rows))
	}
	if _, err := resolve(t, "t3d", "aclmpl", "{pool_slot: 3}", "{pes: [2]}"); err == nil || !strings.Contains(err.Error(), "pool_slot") {
		t.Errorf("a stack param typo passes Check: %v", err)
	}
	if err := Check("latency")(spec(t, "aclmpl", "{pes: [2], bytes: [64]}")); err == nil {
		t.Error("latency with bytes: no error")
	}
}

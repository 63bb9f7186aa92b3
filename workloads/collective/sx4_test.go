package collective

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/workloads"
)

// TestSX4MPICH: the collectives run over MPICH's shared-memory devices on
// the SX-4 (no barrier network: the harness's ideal barrier), blocking
// and nonblocking, short, eager and rendezvous sizes, every delivery
// verified; an injected corruption is reported there too.
func TestSX4MPICH(t *testing.T) {
	for _, stack := range []string{"{device: ch_lfshmem}", "{device: ch_shmem, lock: sysv}"} {
		for _, c := range []struct {
			run  workloads.Runner
			name string
		}{
			{RunOneToAll, "onetoall"}, {RunAllToOne, "alltoone"}, {RunAllToAll, "alltoall"},
			{RunBcast, "bcast"}, {RunReduce, "reduce"},
		} {
			for _, mode := range []string{ModeSync, ModeAsync} {
				w := fmt.Sprintf("{pes: [4], bytes: [8, 4096, 200000], mode: %s}", mode)
				res, err := c.run(specOn(t, "sx4", "mpich", stack, w))
				if err != nil {
					t.Fatalf("%s %s %s: %v", stack, c.name, mode, err)
				}
				if len(res.Failures) > 0 || len(res.Rows) != 3 {
					t.Fatalf("%s %s %s: %v, %d rows", stack, c.name, mode, res.Failures, len(res.Rows))
				}
				for _, r := range res.Rows {
					if !(r.Value > 0) {
						t.Errorf("%s %s %s: %s at %g = %g", stack, c.name, mode, r.Metric, r.X, r.Value)
					}
				}
			}
		}
	}
	// One-word latency over ch_lfshmem: about the SX-4 paper's 40 us short
	// message (Figure 4; TestPaperTargets in workloads/pingpong guards it).
	res, err := RunLatency(specOn(t, "sx4", "mpich", "{device: ch_lfshmem, lock: sysv}", "{pes: [4]}"))
	if err != nil || len(res.Failures) > 0 || len(res.Rows) != 1 {
		t.Fatalf("latency: %v %v", err, res.Failures)
	}
	if us := res.Rows[0].Value; us < 30 || us > 50 {
		t.Errorf("SX-4 one-word latency over ch_lfshmem %.1f us, want about 40", us)
	}
	// A corrupted delivery is found on the SX-4 as on the T3D.
	s := specOn(t, "sx4", "mpich", "{device: ch_lfshmem}", "{pes: [4], bytes: [4096]}")
	cfg, err := configure(s, "alltoall")
	if err != nil {
		t.Fatal(err)
	}
	cfg.flip = &byteFlip{pe: 2, offset: 1000}
	res, err = sweepConfig(s, cfg)
	if err != nil || len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Detail, "PE 2:") || !strings.Contains(res.Failures[0].Detail, "offset 1000 at ") {
		t.Fatalf("injected corruption on the SX-4: %v %v", err, res.Failures)
	}
	// The SX-4 node has 32 CPUs at most; raw SHMEM runs there on its
	// symmetric heap.
	if _, err := RunAllToAll(specOn(t, "sx4", "mpich", "", "{pes: [64]}")); err == nil || !strings.Contains(err.Error(), "1 to 32 CPUs") {
		t.Errorf("64 processes on the SX-4: %v", err)
	}
	if _, err := resolve(t, "sx4", "shmem", "", "{pes: [4]}"); err != nil {
		t.Errorf("raw SHMEM on the SX-4: %v", err)
	}
}

package collective

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/workloads"
)

func TestPostDepth(t *testing.T) {
	for _, c := range []struct{ n, count, want int }{
		{0, 127, 127}, {1024, 31, 31}, {1 << 20, 127, 4}, {10 << 20, 127, 1}, {2 << 20, 3, 2},
	} {
		if got := postDepth(c.n, c.count); got != c.want {
			t.Errorf("postDepth(%d, %d) = %d, want %d", c.n, c.count, got, c.want)
		}
	}
}

// The nonblocking programs deliver every message intact, also when the
// receive buffers are reused (2 MB messages: two buffers for three peers),
// and nonblocking MPI all-to-one overlaps its receives: it is not the
// blocking program under another name.
func TestAsyncPrograms(t *testing.T) {
	for _, c := range []struct {
		run   workloads.Runner
		stack string
		w     string
	}{
		{RunAllToOne, "mpich", "{pes: [4], bytes: [2097152], mode: async}"},
		{RunAllToAll, "mpich", "{pes: [4], bytes: [2097152], mode: async}"},
		{RunAllToOne, "aclmpl", "{pes: [4], bytes: [2097152], mode: async}"},
		{RunAllToAll, "aclmpl", "{pes: [4], bytes: [2097152], mode: async}"},
		{RunAllToAll, "aclmpl", "{pes: [8], bytes: [64], mode: async}"},
	} {
		res, err := c.run(spec(t, c.stack, c.w))
		if err != nil {
			t.Fatalf("%s %s: %v", c.stack, c.w, err)
		}
		for _, f := range res.Failures {
			t.Errorf("%s %s: %v", c.stack, c.w, f)
		}
	}
	mpi := func(mode string) float64 {
		res, err := RunAllToOne(spec(t, "mpich", "{pes: [16], bytes: [16384], mode: "+mode+"}"))
		if err != nil || len(res.Rows) != 1 || len(res.Failures) > 0 {
			t.Fatalf("%s: %v %v", mode, err, res.Failures)
		}
		return res.Rows[0].Value
	}
	if sync, async := mpi(ModeSync), mpi(ModeAsync); async <= sync {
		t.Errorf("16 PEs, 16 KB all-to-one: nonblocking MPI %.1f MB/s, not above blocking %.1f", async, sync)
	}
}

// Without invalidate_receive, ACLMPL's asynchronous receiver copies pool
// buffers that a reset has handed out again through stale cache lines (its
// memcpy reads through the T3D's non-coherent cache): the workload reports
// a corruption naming the PE, the offset and the simulated time.
func TestAsyncStalePoolLines(t *testing.T) {
	for _, invalidate := range []string{"true", "false"} {
		s := specOn(t, "t3d", "aclmpl", "{pool_slots: 4, slot_bytes: 512, invalidate_receive: "+invalidate+"}", "{pes: [8], bytes: [1024], mode: async}")
		res, err := RunAllToOne(s)
		if err != nil {
			t.Fatalf("invalidate_receive %s: %v", invalidate, err)
		}
		if invalidate == "true" {
			for _, f := range res.Failures {
				t.Errorf("invalidate_receive true: %v", f)
			}
			continue
		}
		if len(res.Failures) == 0 {
			t.Fatal("invalidate_receive false: no stale pool line reported")
		}
		f := res.Failures[0]
		if f.Kind != workloads.Corruption || !strings.Contains(f.Detail, "PE 0") || !regexp.MustCompile(`offset \d+ at [0-9.]+(ps|ns|us|ms|s)$`).MatchString(f.Detail) {
			t.Errorf("invalidate_receive false: %v, want a corruption at PE 0 with offset and time", f)
		}
		t.Logf("reported: %v", f)
	}
}

// TestSyncAsyncMPIDiffer: blocking and nonblocking MPI are different
// programs, and differ wherever the nonblocking one can overlap: all-to-all
// (every receive posted first) and one-to-all at a rendezvous size (64 KB:
// PE 0's Isends wait for their ok-to-send together). At an eager size
// (1 KB) one-to-all coincides, as t3d-table2 says: MPI_Isend of an eager
// message does all its work in its progress call, so PE 0's Isend loop is
// its Send loop. Broadcast and reduce coincide too: MPI-1 has no
// nonblocking collectives, both programs call MPI_Bcast and MPI_Reduce
// (ch_t3d's, over SHMEM: stacks.SoleCollectives).
func TestSyncAsyncMPIDiffer(t *testing.T) {
	for _, c := range []struct {
		name   string
		run    workloads.Runner
		w      string
		differ bool
	}{
		{"all-to-all 1 KB", RunAllToAll, "{pes: [8], bytes: [1024], mode: %s}", true},
		{"one-to-all 64 KB", RunOneToAll, "{pes: [8], bytes: [65536], mode: %s}", true},
		{"one-to-all 1 KB", RunOneToAll, "{pes: [8], bytes: [1024], mode: %s}", false},
		{"broadcast 1 KB", RunBcast, "{pes: [8], bytes: [1024], mode: %s}", false},
		{"reduce 1 KB", RunReduce, "{pes: [8], bytes: [1024], mode: %s}", false},
	} {
		sync := value(t, c.run, "mpich", fmt.Sprintf(c.w, ModeSync))
		async := value(t, c.run, "mpich", fmt.Sprintf(c.w, ModeAsync))
		if (sync != async) != c.differ {
			t.Errorf("%s: blocking %.4g MB/s, nonblocking %.4g MB/s, want them to differ: %v", c.name, sync, async, c.differ)
		}
	}
}

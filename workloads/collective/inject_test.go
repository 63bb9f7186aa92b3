package collective

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/workloads"
)

var simTime = regexp.MustCompile(` at [0-9.]+(ps|ns|us|ms|s)$`)

// TestInjectedCorruption flips one delivered byte on one PE (a test-only
// hook) and checks that exactly one corruption is reported, naming the PE,
// the offset and a simulated time, with the run itself completing: a
// Result with a failure, which simrun turns into exit status 1.
func TestInjectedCorruption(t *testing.T) {
	for _, tc := range []struct {
		kind, stack, workload string
		pe, offset            int
	}{
		{"alltoall", "aclmpl", "{pes: [8], bytes: [1024]}", 3, 100},
		{"alltoall", "aclmpl", "{pes: [8], bytes: [1024], mode: async}", 5, 1023},
		// Deliveries that share the senders' stream (payload.Stream):
		// only the written page is compared, and the flip is in it.
		{"alltoall", "aclmpl", "{pes: [4], bytes: [1048576], mode: sync}", 1, 700001},
		{"alltoone", "aclmpl", "{pes: [4], bytes: [1048576], mode: async}", 0, 123457},
		{"alltoone", "mpich", "{pes: [4], bytes: [4096]}", 0, 4000},
		{"onetoall", "shmem", "{pes: [4], bytes: [256]}", 2, 0},
		{"alltoall", "shmem", "{pes: [4], bytes: [256]}", 1, 200},
		// Above shmemSlotBytes: the senders share one region, whose
		// final contents (the last put to arrive) are checked.
		{"alltoall", "shmem", "{pes: [4], bytes: [1048576]}", 2, 777777},
		{"alltoone", "shmem", "{pes: [3], bytes: [1572864]}", 0, 1572863},
		{"bcast", "aclmpl", "{pes: [16], bytes: [64]}", 9, 63},
		{"reduce", "aclmpl", "{pes: [8], bytes: [64], reduce: binary-swap}", 0, 8},
		// Reduces of several blocks of Fold and of the expected sum.
		{"reduce", "aclmpl", "{pes: [8], bytes: [200000]}", 0, 123457},
		{"reduce", "aclmpl", "{pes: [8], bytes: [200000], mode: async}", 0, 199999},
		{"reduce", "mpich", "{pes: [4], bytes: [100000]}", 0, 40961},
		{"latency", "mpich", "{pes: [4]}", 1, 5},
	} {
		name := fmt.Sprintf("%s/%s/%s", tc.kind, tc.stack, tc.workload)
		s := spec(t, tc.stack, tc.workload)
		var first string
		for run := 0; run < 2; run++ {
			cfg, err := configure(s, tc.kind)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			cfg.flip = &byteFlip{pe: tc.pe, offset: tc.offset}
			res, err := sweepConfig(s, cfg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !cfg.flip.done {
				t.Fatalf("%s: PE %d never checked a buffer of more than %d bytes", name, tc.pe, tc.offset)
			}
			if len(res.Failures) != 1 || res.Failures[0].Kind != workloads.Corruption {
				t.Fatalf("%s: failures %v, want one corruption", name, res.Failures)
			}
			d := res.Failures[0].Detail
			for _, w := range []string{fmt.Sprintf("PE %d:", tc.pe), fmt.Sprintf("offset %d at ", tc.offset)} {
				if !strings.Contains(d, w) {
					t.Errorf("%s: %q does not name %q", name, d, w)
				}
			}
			if !simTime.MatchString(d) {
				t.Errorf("%s: %q does not end with a simulated time", name, d)
			}
			if run == 0 {
				t.Logf("%s: %s", name, d)
				first = d
			} else if d != first {
				t.Errorf("%s: not deterministic:\n%s\n%s", name, first, d)
			}
		}
	}
}

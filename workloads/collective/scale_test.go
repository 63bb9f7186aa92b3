package collective

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/workloads"
)

// scaleSpec is a one-word synchronous ACLMPL broadcast on a what-if
// T3D-like torus of pes PEs (max_pes raised).
func scaleSpec(t testing.TB, pes int) workloads.Spec {
	t.Helper()
	open, err := registry.Default().Resolve("test.yaml",
		registry.Ref{Name: "t3d", Params: node(t, fmt.Sprintf("{max_pes: %d}", pes))}, registry.Ref{Name: "aclmpl"})
	if err != nil {
		t.Fatal(err)
	}
	return workloads.Spec{
		Scenario: "test", Series: "scale", File: "test.yaml", Seed: 1,
		Machine: "t3d", Stack: "aclmpl", Open: open,
		Workload: workloads.Component{Name: "bcast", Params: node(t, fmt.Sprintf("{pes: [%d], bytes: [8], mode: sync}", pes))},
	}
}

// bcastAllocPerPE runs the broadcast on pes PEs and returns the bytes the
// run allocated per PE (runtime.MemStats.TotalAlloc: every allocation,
// garbage included) and its result.
func bcastAllocPerPE(t *testing.T, pes int) (float64, workloads.Result) {
	s := scaleSpec(t, pes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := RunBcast(s)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%d PEs: %v", pes, err)
	}
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(pes), res
}

// TestWhatIfBcastMemoryPerPE: a one-word ACLMPL broadcast on a what-if
// torus of 8,192 PEs (32,768 when the environment sets
// MSGSIM_FULL_SIZE=1, as .ci/run's second step does) delivers the right
// bytes everywhere (the workload checks every PE's buffer against the
// root's pattern and reports any difference as a failure), and what the
// run allocates per PE stays bounded: no per-pair structure, link or cache
// line is allocated before it is touched, so 8 times the PEs cost per PE
// what 1,024 (4,096) do.
func TestWhatIfBcastMemoryPerPE(t *testing.T) {
	if testing.Short() {
		t.Skip("8,192 PEs")
	}
	sizes := []int{1024, 8192} // about 5.5 and 5.2 KB per PE measured
	if os.Getenv("MSGSIM_FULL_SIZE") == "1" {
		sizes = []int{4096, 32768}
	}
	// Bytes allocated per PE, garbage included: 5.2 and 5.1 KB at 4,096
	// and 32,768 PEs measured (5.6 and 5.5 KB before the processes, the
	// T3D's PEs and ports and ACLMPL's PEs were made smaller; 6.5 and
	// 7.0 KB before later cuts of the engine; 7.9 and 8.4 KB before sim/net's links,
	// channels, units and messages and the T3D's ops were made smaller;
	// 9.6 and 10.0 KB while the run opened a second world to check the
	// workload before opening its own; 9.9 and 10.4 KB before the PEs
	// were allocated in arrays; 13.2 KB before checks stopped allocating
	// a 4 KiB scratch each).
	const maxPerPE = 6144
	var per [2]float64
	for i, pes := range sizes {
		b, res := bcastAllocPerPE(t, pes)
		per[i] = b
		for _, f := range res.Failures {
			t.Errorf("%d PEs: %v", pes, f)
		}
		if len(res.Rows) != 1 || !(res.Rows[0].Value > 0) {
			t.Fatalf("%d PEs: rows %v", pes, res.Rows)
		}
		t.Logf("%d PEs: %.0f bytes allocated per PE, broadcast %.3g s", pes, b, res.Rows[0].Value)
		if b > maxPerPE {
			t.Errorf("%d PEs: %.0f bytes allocated per PE, want at most %d", pes, b, maxPerPE)
		}
	}
	if per[1] > 1.25*per[0] {
		t.Errorf("bytes allocated per PE grow with the partition: %.0f at %d PEs, %.0f at %d", per[0], sizes[0], per[1], sizes[1])
	}
}

// TestBroadcastPayloadIsOneCopy: a 4 MB broadcast on 8 PEs, with each
// stack, leaves every PE holding the root's bytes (the workload verifies
// each buffer) while the PEs' memories hold far less than 8 copies of
// them: the payload is the root's pattern window, shared from memory to
// memory by puts and copies (mem.Memory.WriteShared), not copied per PE.
// What they hold is the protocols' own buffers (asynchronous ACLMPL's
// pool of 64 slots of 8 KB per PE, written by puts).
func TestBroadcastPayloadIsOneCopy(t *testing.T) {
	const pes, n = 8, 4 << 20
	for _, tc := range []struct{ stack, mode string }{
		{"aclmpl", ModeSync}, {"aclmpl", ModeAsync}, {"mpich", ModeSync},
	} {
		s := spec(t, tc.stack, fmt.Sprintf("{pes: [%d], bytes: [%d], mode: %s}", pes, n, tc.mode))
		cfg, err := configure(s, "bcast")
		if err != nil {
			t.Fatal(err)
		}
		_, pt, err := runCase(s, cfg, "bcast", pes, n, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.stack, tc.mode, err)
		}
		if f := pt.failures(); len(f) > 0 {
			t.Fatalf("%s %s: %v", tc.stack, tc.mode, f)
		}
		resident := 0
		for pe := range pes {
			resident += pt.sys.cpu(pe).Memory().Resident()
		}
		if resident > pes*n/4 {
			t.Errorf("%s %s: the PEs' memories hold %d bytes for a %d-byte broadcast to %d PEs, want at most %d",
				tc.stack, tc.mode, resident, n, pes, pes*n/4)
		}
		t.Logf("%s %s: %d bytes resident", tc.stack, tc.mode, resident)
	}
}

// BenchmarkWhatIfBcastStacks runs the one-word ACLMPL broadcast on a
// what-if torus of 32,768 PEs and reports what a 2^20-PE run's memory
// turns on (docs/scale.md, "Why the stacks are 4 KB"): the goroutine
// stack bytes per simulated process at the run's peak (stack-B/proc: 2,048 if every
// process's chain stayed within the runtime's first stack, 4,096 when
// they all grew once), and the bytes allocated per PE (alloc-B/PE, as
// TestWhatIfBcastMemoryPerPE). The peak is sampled by a goroutine that
// reads the runtime's memory statistics every 5 ms of wall time while the
// run goes on, so stack-B/proc is a measurement, not a simulated value:
// it may vary a little from run to run.
//
//	go test ./workloads/collective -run '^$' -bench WhatIfBcastStacks -benchtime 1x
func BenchmarkWhatIfBcastStacks(b *testing.B) {
	const pes = 32768
	s := scaleSpec(b, pes)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		peak := make(chan float64)
		go func() {
			var m runtime.MemStats
			most := 0.0
			for {
				select {
				case <-done:
					peak <- most
					return
				case <-time.After(5 * time.Millisecond):
				}
				runtime.ReadMemStats(&m)
				if n := runtime.NumGoroutine(); n > pes {
					most = max(most, float64(m.StackInuse)/float64(n))
				}
			}
		}()
		res, err := RunBcast(s)
		close(done)
		perProc := <-peak
		runtime.ReadMemStats(&after)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Failures) > 0 {
			b.Fatal(res.Failures)
		}
		b.ReportMetric(perProc, "stack-B/proc")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/pes, "alloc-B/PE")
	}
}

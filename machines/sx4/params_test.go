package sx4

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/sim"
)

// TestBadParamsFromYAML: values that once gave plausible wrong results or
// a crash (review finding P1) are errors naming the field, file and line.
func TestBadParamsFromYAML(t *testing.T) {
	for _, tc := range []struct {
		params string // the machine.params mapping, at line 3
		field  string
	}{
		{"{memcpy_mbps: 1e-300}", "memcpy_mbps"},
		{"{cache_flush_us: 1e30}", "cache_flush_us"},
		{"{shm_max_segment_mb: 1e30}", "shm_max_segment_mb"},
		{"{clock_mhz: .inf}", "clock_mhz"},
		{"{clock_mhz: .nan}", "clock_mhz"},
		{"{semop_us: -.inf}", "semop_us"},
		{"{semop_us: 1e300}", "semop_us"},
		{"{sync_ns: .nan}", "sync_ns"},
		{"{vector_startup_ns: -1}", "vector_startup_ns"},
		{"{shm_max_segment_mb: 0}", "shm_max_segment_mb"},
		{"{shm_max_segment_mb: 64, node_memory_mb: 32}", "shm_max_segment_mb"},
		{"{node_memory_mb: 0}", "node_memory_mb"},
		{"{node_memory_mb: 1000000000000}", "node_memory_mb"},
		{"{cache_kb: 0}", "cache_kb"},
		{"{cache_kb: 1000000}", "cache_kb"},
		{"{cache_line_bytes: 100}", "cache_line_bytes"},
		{"{cache_ways: 3}", "cache_kb"},
		{"{store_buffer_depth: -1}", "store_buffer_depth"},
		{"{store_buffer_depth: 1000000000}", "store_buffer_depth"},
	} {
		t.Run(tc.params, func(t *testing.T) {
			src := "machine:\n  name: sx4\n  params: " + tc.params + "\n"
			root, err := strictyaml.Parse("bad.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = FromYAML(sim.NewEngine(1), "bad.yaml", strictyaml.Find(root, "machine.params"), 2)
			var se *strictyaml.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *strictyaml.Error", err)
			}
			if se.File != "bad.yaml" || se.Line != 3 || se.Field != "machine.params."+tc.field {
				t.Errorf("error at %s:%d field %q, want bad.yaml:3 field machine.params.%s (%v)", se.File, se.Line, se.Field, tc.field, err)
			}
		})
	}
}

// TestNodeMemoryLimit (review finding P7): allocations beyond the node's
// memory fail with an error naming node_memory_mb, before anything is
// allocated, and never panic.
func TestNodeMemoryLimit(t *testing.T) {
	p := DefaultParams()
	p.NodeMemoryMB = 16
	m, err := New(sim.NewEngine(1), 2, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3000000000, 16<<20 + 1, 1 << 62, int(^uint(0) >> 1)} {
		_, err := m.Private(0, "buf", n)
		if !errors.Is(err, ErrMemoryFull) || !strings.Contains(err.Error(), "node_memory_mb") {
			t.Errorf("private buffer of %d bytes: got %v, want ErrMemoryFull naming node_memory_mb", n, err)
		}
	}
	if m.Memory().Used() != 0 {
		t.Errorf("failed allocations used %d bytes", m.Memory().Used())
	}
	if _, err := m.Private(0, "neg", -1); err == nil {
		t.Error("negative private buffer accepted")
	}
	if _, err := m.ShmGet("neg", -1); err == nil {
		t.Error("negative segment accepted")
	}
	// Shared segments and private buffers share the node's memory.
	if _, err := m.ShmGet("seg", 8<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Private(1, "rest", 8<<20); err != nil {
		t.Errorf("the rest of the memory: %v", err)
	}
	if _, err := m.Private(1, "more", 1); !errors.Is(err, ErrMemoryFull) {
		t.Errorf("one byte more: got %v, want ErrMemoryFull", err)
	}
	// The default node holds a 3 GB message nowhere: a clear error.
	_, m = newNode(t, 2)
	if _, err := m.Private(0, "buf", 3000000000); !errors.Is(err, ErrMemoryFull) {
		t.Errorf("3 GB on the default node: got %v, want ErrMemoryFull", err)
	}
}

package sx4

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

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

package t3d

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestNewRejectsBadPECounts: PE counts and shapes from a workload's params
// are errors, not panics.
func TestNewRejectsBadPECounts(t *testing.T) {
	for _, tc := range []struct {
		pes  int
		want string
	}{{0, "0 PEs"}, {-1, "-1 PEs"}, {MaxPEs + 1, "2049 PEs"}, {1 << 40, "PEs"}} {
		_, err := New(sim.NewEngine(1), tc.pes, DefaultParams())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d PEs: got %v, want an error mentioning %q", tc.pes, err, tc.want)
		}
	}
	// Beyond the real machine the error says how to lift the limit, and a
	// raised max_pes builds the larger what-if torus.
	if _, err := New(sim.NewEngine(1), MaxPEs+1, DefaultParams()); err == nil || !strings.Contains(err.Error(), "machine.params.max_pes") {
		t.Errorf("2049 PEs: got %v, want an error naming machine.params.max_pes", err)
	}
	big := DefaultParams()
	big.MaxPEs = 1 << 16
	if m, err := New(sim.NewEngine(1), 1<<16, big); err != nil || m.Torus().Nodes() != 1<<15 {
		t.Errorf("65,536 PEs with max_pes 65536: %v", err)
	}
	big.MaxPEs = MaxWhatIfPEs + 1
	if err := big.Validate(); err == nil || !strings.Contains(err.Error(), "max_pes") {
		t.Errorf("max_pes beyond %d: got %v", MaxWhatIfPEs, err)
	}
	// One PE works: a put to itself goes out and back through its router.
	eng := sim.NewEngine(1)
	m, err := New(eng, 1, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	a, b := alloc(t, m, 0, 64), alloc(t, m, 0, 64)
	a.Bytes()[3] = 9
	eng.Spawn("pe0", func(p *sim.Proc) {
		m.Put(p, 0, 0, b.Addr, a.Addr, 64)
		m.Quiet(p, 0)
		m.Barrier(p, 0)
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	if b.Bytes()[3] != 9 {
		t.Error("put to self did not deliver")
	}
}

// TestAllocBeyondMemory: an allocation beyond memory_mb, or of a size that
// would overflow, is an error wrapping ErrMemoryFull.
func TestAllocBeyondMemory(t *testing.T) {
	_, m := newMachine(t, 2)
	for _, n := range []int{64<<20 + 1, 1 << 62, int(^uint(0) >> 1)} {
		if _, err := m.Alloc(0, "huge", n); !errors.Is(err, ErrMemoryFull) || !strings.Contains(err.Error(), "memory_mb") {
			t.Errorf("alloc of %d bytes: got %v, want ErrMemoryFull naming memory_mb", n, err)
		}
	}
	if _, err := m.Alloc(0, "negative", -1); err == nil {
		t.Error("negative allocation accepted")
	}
	if _, err := m.Alloc(1, "all", 64<<20); err != nil {
		t.Errorf("allocating exactly memory_mb: %v", err)
	}
}

// TestMemConfigFromParams: the fence, copy start-up and cache flush costs
// are parameters (P9), and their defaults keep the former costs.
func TestMemConfigFromParams(t *testing.T) {
	p := DefaultParams()
	c := p.memConfig().Costs
	if c.FenceCycles != 1 || c.CopyStartupCycles != 10 || c.FlushCycles != 256 {
		t.Errorf("default costs: fence %g, copy start-up %g, flush %g; want 1, 10, 256", c.FenceCycles, c.CopyStartupCycles, c.FlushCycles)
	}
	p.FenceCycles, p.CopyStartupCycles, p.CacheFlushCyclesPerLine = 5, 20, 2
	c = p.memConfig().Costs
	if c.FenceCycles != 5 || c.CopyStartupCycles != 20 || c.FlushCycles != 512 {
		t.Errorf("overridden costs: fence %g, copy start-up %g, flush %g; want 5, 20, 512", c.FenceCycles, c.CopyStartupCycles, c.FlushCycles)
	}
}

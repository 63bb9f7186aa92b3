package sx4

import (
	"fmt"

	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the SX-4 model a scenario may override (machine.params). Field
// names are the YAML names; units are in the names. Params is never mutated
// during a run.
type Params struct {
	// ClockMHz is the processor clock: "Clock cycle 8 ns" (hardware.yaml
	// sx4.cycle_time_ns, netlib sx-4.html), i.e. 125 MHz.
	ClockMHz float64 `yaml:"clock_mhz"`
	// ShmMaxSegmentMB is the largest System V shared-memory segment the
	// system grants: "between 8 and 16 megabytes on the system we used"
	// (mpich-sx4.txt section 5); we take the lower bound.
	ShmMaxSegmentMB float64 `yaml:"shm_max_segment_mb"`
	// MemcpyMBps is the bandwidth of memcpy, which on the SX-4 is a vector
	// move that bypasses the scalar cache: "memcpy delivers about 2.5
	// GB/second for large moves" (section 8; calibration.yaml
	// sx4_mpich.memcpy_GBps).
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// VectorStartupNs is the start-up time of a vector move. Assumed: a few
	// tens of cycles, as for vector pipelines of the period; no published
	// SX-4 figure (hardware.yaml has none). Affects latency by < 1 us.
	VectorStartupNs float64 `yaml:"vector_startup_ns"`
	// CacheKB is the scalar data cache size. No SX-4 figure found;
	// hardware.yaml sx4.scalar_cache_size_KB suggests the SX-6's 64 KB as a
	// placeholder.
	CacheKB int `yaml:"cache_kb"`
	// CacheLineBytes is the scalar cache line. Unknown (hardware.yaml:
	// "line size also unknown"); 128 bytes assumed.
	CacheLineBytes int `yaml:"cache_line_bytes"`
	// CacheWays is the cache associativity; unknown, 4 assumed.
	CacheWays int `yaml:"cache_ways"`
	// LoadNs is a scalar load that hits the cache: one cycle (8 ns) assumed.
	LoadNs float64 `yaml:"load_ns"`
	// MemoryLatencyNs is a scalar load that misses or bypasses the cache.
	// Assumed ~40 cycles; no published figure (hardware.yaml lists none).
	MemoryLatencyNs float64 `yaml:"memory_latency_ns"`
	// StoreNs is the issue cost of a scalar store: one cycle assumed.
	StoreNs float64 `yaml:"store_ns"`
	// StoreBufferDepth is the number of scalar stores in flight. The paper
	// only says the order of writes to separate locations "might be
	// altered" (section 5, hardware.yaml sx4.memory_ordering); 8 assumed.
	StoreBufferDepth int `yaml:"store_buffer_depth"`
	// StoreDrainNs is the time for one buffered store to reach memory:
	// assumed about the memory latency.
	StoreDrainNs float64 `yaml:"store_drain_ns"`
	// SyncNs is the cost of the synchronization instruction the NEC
	// routines use (on top of draining the store buffer). Assumed ~100
	// cycles: "the cycle time of the machine is not a good guide to the
	// time needed to execute this code" (section 8).
	SyncNs float64 `yaml:"sync_ns"`
	// TestAndSetNs is the test-and-set instruction, which "automatically
	// synchronizes the processor with its memory" (section 6): assumed
	// ~100 cycles, like a sync; no cycle cost found (hardware.yaml).
	TestAndSetNs float64 `yaml:"test_and_set_ns"`
	// CacheFlushUs is the cost of flushing the whole scalar cache, the only
	// flush the SX-4 has ("no instruction to flush a single cache line,
	// only to flush the entire cache", section 5). A general lock must
	// flush ("because of the cost of flushing the cache, a general lock
	// operation will always be relatively expensive"), so this is
	// calibrated to Figure 5: ~40 us per test-and-set lock (80 us short,
	// 120 us with the second lock).
	CacheFlushUs float64 `yaml:"cache_flush_us"`
	// SemopUs is one System V semop system call ("such expensive system
	// calls", section 10). No published SUPER-UX figure (hardware.yaml
	// sx4.sysv_semaphore_op_us): calibrated to Figure 1 (750 us short
	// latency: one lock per message, whose P is on the critical path; the
	// V follows the packet and overlaps the reply).
	SemopUs float64 `yaml:"semop_us"`
}

// DefaultParams returns the model of the DLR machine of May 1996.
func DefaultParams() Params {
	return Params{
		ClockMHz:         125,
		ShmMaxSegmentMB:  8,
		MemcpyMBps:       2500,
		VectorStartupNs:  200,
		CacheKB:          64,
		CacheLineBytes:   128,
		CacheWays:        4,
		LoadNs:           8,
		MemoryLatencyNs:  320,
		StoreNs:          8,
		StoreBufferDepth: 8,
		StoreDrainNs:     320,
		SyncNs:           800,
		TestAndSetNs:     800,
		CacheFlushUs:     40,
		SemopUs:          680,
	}
}

// Validate names the first parameter that makes no sense.
func (p Params) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"clock_mhz", p.ClockMHz}, {"shm_max_segment_mb", p.ShmMaxSegmentMB},
		{"memcpy_mbps", p.MemcpyMBps},
	} {
		if f.v <= 0 {
			return fmt.Errorf("sx4: %s must be positive, got %g", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"vector_startup_ns", p.VectorStartupNs}, {"load_ns", p.LoadNs},
		{"memory_latency_ns", p.MemoryLatencyNs}, {"store_ns", p.StoreNs},
		{"store_drain_ns", p.StoreDrainNs}, {"sync_ns", p.SyncNs},
		{"test_and_set_ns", p.TestAndSetNs}, {"cache_flush_us", p.CacheFlushUs},
		{"semop_us", p.SemopUs},
	} {
		if f.v < 0 {
			return fmt.Errorf("sx4: %s must not be negative, got %g", f.name, f.v)
		}
	}
	if p.StoreBufferDepth < 0 {
		return fmt.Errorf("sx4: store_buffer_depth must not be negative, got %d", p.StoreBufferDepth)
	}
	if err := p.memConfig().Validate(); err != nil {
		return fmt.Errorf("sx4: %w", err)
	}
	return nil
}

// memConfig is the CPU model of one SX-4 processor: a non-coherent
// write-through scalar cache, a store buffer that may reorder stores to
// different lines, and vector moves at the memcpy bandwidth.
func (p Params) memConfig() mem.Config {
	cyc := 1000 / p.ClockMHz // ns per cycle
	return mem.Config{
		ClockMHz: p.ClockMHz,
		Cache: mem.CacheConfig{
			Enabled: true, LineBytes: p.CacheLineBytes, SizeBytes: p.CacheKB * 1024,
			Ways: p.CacheWays, Coherent: false,
		},
		StoreBuffer: mem.StoreBufferConfig{
			Depth: p.StoreBufferDepth, DrainCycles: p.StoreDrainNs / cyc,
			Order: mem.OrderReordered, Forwarding: true,
		},
		Costs: mem.Costs{
			LoadCycles:         p.LoadNs / cyc,
			MissCycles:         p.MemoryLatencyNs / cyc,
			UncachedLoadCycles: p.MemoryLatencyNs / cyc,
			StoreCycles:        p.StoreNs / cyc,
			FenceCycles:        p.SyncNs / cyc,
			AtomicCycles:       p.TestAndSetNs / cyc,
			FlushCycles:        p.CacheFlushUs * 1000 / cyc,
			CopyStartupCycles:  p.VectorStartupNs / cyc,
			MemcpyMBps:         p.MemcpyMBps,
			VectorMBps:         p.MemcpyMBps,
		},
	}
}

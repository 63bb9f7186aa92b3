package sx4

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
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
	// NodeMemoryMB is the node's main memory, which holds every shared
	// segment and every process's private buffers; an allocation beyond it
	// fails with an error naming this parameter. The paper does not give
	// the DLR machine's memory and hardware.yaml has no SX-4 memory size;
	// an SX-4 node held up to 16 GB of main memory (NEC's product
	// figures, unconfirmed here), the upper bound Validate accepts.
	// Assumed: 2048 MB, because every simulated byte is a real byte of the
	// host running the simulation; raise it for runs with larger buffers.
	NodeMemoryMB int `yaml:"node_memory_mb"`
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
	// calibrated: calibration/sx4-cache-flush.yaml fits it to Figure 5's
	// "about 80 microseconds" short and "about 120 microseconds" with the
	// second lock (39.5 us; 40 kept, within its tolerance).
	CacheFlushUs float64 `yaml:"cache_flush_us"`
	// SemopUs is one System V semop system call ("such expensive system
	// calls", section 10). No published SUPER-UX figure (hardware.yaml
	// sx4.sysv_semaphore_op_us): calibrated: calibration/sx4-semop.yaml
	// fits it to Figure 1's 750 us short latency (one lock per message,
	// whose P is on the critical path; the V follows the packet and
	// overlaps the reply): 673 us; 680 kept, within its tolerance.
	SemopUs float64 `yaml:"semop_us"`
}

// DefaultParams returns the model of the DLR machine of May 1996.
func DefaultParams() Params {
	return Params{
		ClockMHz:         125,
		ShmMaxSegmentMB:  8,
		NodeMemoryMB:     2048,
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

// Limits of the plausible ranges Validate accepts. They are wide (what-if
// studies stay possible) but keep every conversion to simulated time, to
// cycles and to bytes far from overflow.
const (
	maxClockMHz   = 10000 // 100 ps cycle
	maxRateMBps   = 1e7   // 10 TB/s; the node's memory sustains 512 GB/s (hardware.yaml sx4.node_mem_bw_GBps)
	minRateMBps   = 1     // slower turns a large copy into hours of simulated time
	maxOpNs       = 1e9   // one second for a single load, store, sync or vector start-up
	maxOpUs       = 1e6   // one second for a cache flush or a system call
	maxNodeMemMB  = 16384 // an SX-4 node's largest main memory (see NodeMemoryMB)
	minSegmentMB  = 0.001 // 1 KB: room for a few packets
	maxCacheKB    = 16384 // 16 MB: the cache model holds one tag per line
	maxLineBytes  = 4096
	maxCacheWays  = 1024
	maxStoreDepth = 1024
)

// ParamError is an invalid parameter (machines.ParamError, Machine "sx4").
type ParamError = machines.ParamError

func paramErrorf(field, format string, args ...any) error {
	return machines.ParamErrorf(Name, field, format, args...)
}

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, maxClockMHz, "MHz"),
			machines.Float("shm_max_segment_mb", p.ShmMaxSegmentMB, minSegmentMB, maxNodeMemMB, "MB"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("vector_startup_ns", p.VectorStartupNs, 0, maxOpNs, "ns"),
			machines.Float("load_ns", p.LoadNs, 0, maxOpNs, "ns"),
			machines.Float("memory_latency_ns", p.MemoryLatencyNs, 0, maxOpNs, "ns"),
			machines.Float("store_ns", p.StoreNs, 0, maxOpNs, "ns"),
			machines.Float("store_drain_ns", p.StoreDrainNs, 0, maxOpNs, "ns"),
			machines.Float("sync_ns", p.SyncNs, 0, maxOpNs, "ns"),
			machines.Float("test_and_set_ns", p.TestAndSetNs, 0, maxOpNs, "ns"),
			machines.Float("cache_flush_us", p.CacheFlushUs, 0, maxOpUs, "us"),
			machines.Float("semop_us", p.SemopUs, 0, maxOpUs, "us"),
		}, []machines.IntRange{
			machines.Int("node_memory_mb", p.NodeMemoryMB, 1, maxNodeMemMB, "MB"),
			machines.Int("cache_kb", p.CacheKB, 1, maxCacheKB, "KB"),
			machines.Int("cache_line_bytes", p.CacheLineBytes, 8, maxLineBytes, "bytes"),
			machines.Int("cache_ways", p.CacheWays, 1, maxCacheWays, "ways"),
			machines.Int("store_buffer_depth", p.StoreBufferDepth, 0, maxStoreDepth, "stores"),
		}
}

// Validate names (by its YAML name, as a *ParamError) the first parameter
// that is not a finite number in its plausible range.
func (p Params) Validate() error {
	floats, ints := p.Ranges()
	if err := machines.CheckRanges(Name, floats, ints); err != nil {
		return err
	}
	switch {
	case p.CacheLineBytes&(p.CacheLineBytes-1) != 0:
		return paramErrorf("cache_line_bytes", "must be a power of two, got %d", p.CacheLineBytes)
	case (p.CacheKB<<10)%(p.CacheLineBytes*p.CacheWays) != 0:
		return paramErrorf("cache_kb", "%d KB is not a whole number of sets of cache_ways (%d) lines of cache_line_bytes (%d)", p.CacheKB, p.CacheWays, p.CacheLineBytes)
	case p.ShmMaxSegmentMB > float64(p.NodeMemoryMB):
		return paramErrorf("shm_max_segment_mb", "%g MB exceeds the node's memory (node_memory_mb %d)", p.ShmMaxSegmentMB, p.NodeMemoryMB)
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

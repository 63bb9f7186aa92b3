package mem

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Config is a CPU's memory model: what it caches, how its stores become
// visible, and what each operation costs. Machines fill it from their
// Params; litmus tests load it from YAML.
type Config struct {
	ClockMHz    float64           `yaml:"clock_mhz"`
	Cache       CacheConfig       `yaml:"cache"`
	ICache      ICacheConfig      `yaml:"icache"`
	StoreBuffer StoreBufferConfig `yaml:"store_buffer"`
	Costs       Costs             `yaml:"costs"`
}

// CacheConfig describes a write-through, no-write-allocate data cache.
type CacheConfig struct {
	Enabled   bool `yaml:"enabled"`
	LineBytes int  `yaml:"line_bytes"`
	SizeBytes int  `yaml:"size_bytes"`
	Ways      int  `yaml:"ways"` // associativity; 1 is direct-mapped
	// Coherent caches never return stale data. A non-coherent cache keeps
	// its copy of a line when another processor (or a remote put) writes
	// memory: only this CPU's own stores, a flush or an eviction refresh it.
	Coherent bool `yaml:"coherent"`
}

// ICacheConfig describes a direct-mapped instruction cache. The simulator
// holds no code: the cache keeps only tags, for the code paths a program
// runs (CPU.Execute), and a line that misses is filled from memory at
// Costs.MissCycles. Disabled, Execute is plain Compute.
type ICacheConfig struct {
	Enabled   bool `yaml:"enabled"`
	LineBytes int  `yaml:"line_bytes"`
	SizeBytes int  `yaml:"size_bytes"`
}

// Store orders.
const (
	OrderFIFO      = "fifo"      // stores become visible in program order (TSO)
	OrderReordered = "reordered" // stores to different lines may overtake each other (PSO)
)

// StoreBufferConfig describes the buffer between a CPU and memory.
type StoreBufferConfig struct {
	Depth       int     `yaml:"depth"`        // entries; 0: no buffer, stores are visible at once
	DrainCycles float64 `yaml:"drain_cycles"` // from one entry becoming visible to the next
	// DrainJitterCycles adds to each drain a random delay in [0, this)
	// cycles (from the engine's generator), so that stores drain with
	// varying timing as on real buses; 0 (the default): every drain takes
	// exactly DrainCycles and no random number is drawn. Litmus sampling
	// uses it to reach outcomes that need a slow drain (R on tso).
	DrainJitterCycles float64 `yaml:"drain_jitter_cycles"`
	Order             string  `yaml:"order"`      // fifo or reordered
	Forwarding        bool    `yaml:"forwarding"` // loads see this CPU's own buffered stores
}

// Costs of memory operations, in cycles of the CPU clock unless named
// otherwise.
type Costs struct {
	LoadCycles         float64 `yaml:"load_cycles"`          // a load that hits the cache (or any load without one)
	MissCycles         float64 `yaml:"miss_cycles"`          // a load that misses and fills a line
	UncachedLoadCycles float64 `yaml:"uncached_load_cycles"` // a load that bypasses the cache
	StoreCycles        float64 `yaml:"store_cycles"`
	FenceCycles        float64 `yaml:"fence_cycles"`  // on top of waiting for the buffer to drain
	AtomicCycles       float64 `yaml:"atomic_cycles"` // test-and-set, fetch-and-add, swap
	FlushCycles        float64 `yaml:"flush_cycles"`  // invalidating the whole cache
	CopyStartupCycles  float64 `yaml:"copy_startup_cycles"`
	MemcpyMBps         float64 `yaml:"memcpy_mbps"` // scalar copy through cache and store buffer (10^6 B/s)
	VectorMBps         float64 `yaml:"vector_mbps"` // copy that bypasses cache and buffer (10^6 B/s)
}

// Validate checks the configuration and names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.ClockMHz <= 0:
		return fmt.Errorf("clock_mhz must be positive, got %g", c.ClockMHz)
	case c.Cache.Enabled && (c.Cache.LineBytes <= 0 || c.Cache.LineBytes&(c.Cache.LineBytes-1) != 0):
		return fmt.Errorf("cache.line_bytes must be a positive power of two, got %d", c.Cache.LineBytes)
	case c.Cache.Enabled && c.Cache.Ways <= 0:
		return fmt.Errorf("cache.ways must be positive, got %d", c.Cache.Ways)
	case c.Cache.Enabled && (c.Cache.SizeBytes < c.Cache.LineBytes*c.Cache.Ways || c.Cache.SizeBytes%(c.Cache.LineBytes*c.Cache.Ways) != 0):
		return fmt.Errorf("cache.size_bytes (%d) must be a multiple of line_bytes*ways (%d)", c.Cache.SizeBytes, c.Cache.LineBytes*c.Cache.Ways)
	case c.ICache.Enabled && (c.ICache.LineBytes <= 0 || c.ICache.LineBytes&(c.ICache.LineBytes-1) != 0):
		return fmt.Errorf("icache.line_bytes must be a positive power of two, got %d", c.ICache.LineBytes)
	case c.ICache.Enabled && (c.ICache.SizeBytes < c.ICache.LineBytes || c.ICache.SizeBytes%c.ICache.LineBytes != 0):
		return fmt.Errorf("icache.size_bytes (%d) must be a positive multiple of line_bytes (%d)", c.ICache.SizeBytes, c.ICache.LineBytes)
	case c.StoreBuffer.Depth < 0:
		return fmt.Errorf("store_buffer.depth must not be negative, got %d", c.StoreBuffer.Depth)
	case c.StoreBuffer.Depth > 0 && c.StoreBuffer.Order != OrderFIFO && c.StoreBuffer.Order != OrderReordered:
		return fmt.Errorf("store_buffer.order must be %q or %q, got %q", OrderFIFO, OrderReordered, c.StoreBuffer.Order)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"store_buffer.drain_cycles", c.StoreBuffer.DrainCycles}, {"store_buffer.drain_jitter_cycles", c.StoreBuffer.DrainJitterCycles},
		{"costs.load_cycles", c.Costs.LoadCycles}, {"costs.miss_cycles", c.Costs.MissCycles},
		{"costs.uncached_load_cycles", c.Costs.UncachedLoadCycles}, {"costs.store_cycles", c.Costs.StoreCycles},
		{"costs.fence_cycles", c.Costs.FenceCycles}, {"costs.atomic_cycles", c.Costs.AtomicCycles},
		{"costs.flush_cycles", c.Costs.FlushCycles}, {"costs.copy_startup_cycles", c.Costs.CopyStartupCycles},
		{"costs.memcpy_mbps", c.Costs.MemcpyMBps}, {"costs.vector_mbps", c.Costs.VectorMBps},
	} {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative, got %g", f.name, f.v)
		}
	}
	return nil
}

// Clock is the CPU clock.
func (c Config) Clock() sim.Clock { return sim.ClockMHz(c.ClockMHz) }

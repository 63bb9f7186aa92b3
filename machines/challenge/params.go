package challenge

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim/mem"
)

// Params is the Power Challenge model a scenario may override
// (machine.params). Field names are the YAML names; units are in the names.
// Params is never mutated during a run.
//
// The ARMCI paper says only "four processors of the SGI Power Challenge"
// (papers/armci-sp.txt 3.2); it names no processor, clock or cache. The
// defaults are the POWER CHALLENGE of the paper's years with the MIPS
// R10000 (SGI's "POWER CHALLENGE 10000": 195 MHz R10000, 1 MB or 2 MB
// secondary cache per processor, on the POWERpath-2 bus), taken from SGI's
// and MIPS's published figures as cited at each field; hardware.yaml has
// no entry for the machine.
type Params struct {
	// ClockMHz is the processor clock: the 195 MHz MIPS R10000 of the
	// POWER CHALLENGE 10000 (SGI POWER CHALLENGE product literature,
	// 1996; the R8000 boards ran at 75 and 90 MHz).
	ClockMHz float64 `yaml:"clock_mhz"`
	// CacheKB is each processor's secondary cache, the level the bus keeps
	// coherent: 1 MB, the POWER CHALLENGE 10000's standard size (2 MB was
	// an option; SGI POWER CHALLENGE technical report, 1996). The 32 KB
	// primary data cache is not modelled apart (its lines are a subset).
	CacheKB int `yaml:"cache_kb"`
	// CacheLineBytes is the secondary cache line, the bus's coherence
	// unit: 128 bytes, as the POWER CHALLENGE's R10000 secondary caches
	// were configured (the R10000 allows 64 or 128; MIPS R10000
	// Microprocessor User's Manual, 2.0, section 1 "secondary cache").
	CacheLineBytes int `yaml:"cache_line_bytes"`
	// CacheWays is the secondary cache's associativity: two-way set
	// associative (MIPS R10000 User's Manual, "the secondary cache is
	// two-way set associative").
	CacheWays int `yaml:"cache_ways"`
	// LoadCycles is a load that hits: the R10000's two-cycle load-use
	// latency of a primary cache hit (R10000 User's Manual); secondary
	// hits (about ten cycles) are not told apart.
	LoadCycles float64 `yaml:"load_cycles"`
	// StoreCycles is the issue cost of a store: one cycle (one load/store
	// per cycle, R10000 User's Manual).
	StoreCycles float64 `yaml:"store_cycles"`
	// AtomicCycles is a load-linked/store-conditional pair on a line
	// already held exclusive (LL, SC and the branch on its result):
	// assumed 4 cycles; the bus transaction that takes the line exclusive
	// is charged on top.
	AtomicCycles float64 `yaml:"atomic_cycles"`
	// SyncCycles is the MIPS SYNC instruction. The Challenge's R10000
	// makes its loads and stores visible in program order (sequential
	// consistency, see the package comment), so SYNC has nothing to wait
	// for: assumed 4 cycles.
	SyncCycles float64 `yaml:"sync_cycles"`
	// MemcpyMBps is the processor's copy loop on cached lines: one
	// load/store unit (one memory instruction a cycle, R10000 User's
	// Manual), so an 8-byte load and an 8-byte store per two cycles: 4
	// bytes a cycle, 780 MB/s at 195 MHz. Misses are the bus's, on top
	// where they do not overlap.
	MemcpyMBps float64 `yaml:"memcpy_mbps"`
	// CopyStartupCycles is a memcpy call's start-up (call, alignment
	// checks): assumed 20 cycles.
	CopyStartupCycles float64 `yaml:"copy_startup_cycles"`
	// BusMBps is the POWERpath-2 bus's sustained data bandwidth: "1.2
	// GB/s" (SGI POWER CHALLENGE technical report: a 256-bit data bus at
	// 47.6 MHz, 1.5 GB/s peak, 1.2 GB/s sustained). A 128-byte line holds
	// it 107 ns.
	BusMBps float64 `yaml:"bus_mbps"`
	// BusAddressNs is a transaction's address cycle on the separate
	// 40-bit address bus: one bus cycle at 47.6 MHz, 21 ns (same report).
	// An upgrade (invalidate, no data) is only that.
	BusAddressNs float64 `yaml:"bus_address_ns"`
	// MemoryLatencyNs is a read's wait for memory between its address and
	// its data on the split-transaction bus. Assumed 900 ns, so that a
	// miss on an idle bus takes about 1 us: the order quoted for the POWER
	// CHALLENGE, against about 0.5 us on its successor the Origin 2000
	// (Laudon and Lenoski, ISCA 1997, compare the two); no exact figure
	// at hand.
	MemoryLatencyNs float64 `yaml:"memory_latency_ns"`
	// SemopUs is one IRIX System V semop system call: assumed 10 us (a
	// system call of a few microseconds on a 195 MHz R10000, plus the
	// semaphore's work); no published figure at hand. Used only by stacks
	// whose locks are System V semaphores (lock: sysv).
	SemopUs float64 `yaml:"semop_us"`
	// NodeMemoryMB is the machine's main memory, which holds every
	// shared segment and private buffer. A POWER CHALLENGE held up to 16
	// GB (SGI product literature); assumed 2048 MB, because every
	// simulated byte is a real byte of the host.
	NodeMemoryMB int `yaml:"node_memory_mb"`
}

// DefaultParams returns the model of a four-processor POWER CHALLENGE 10000.
func DefaultParams() Params {
	return Params{
		ClockMHz:          195,
		CacheKB:           1024,
		CacheLineBytes:    128,
		CacheWays:         2,
		LoadCycles:        2,
		StoreCycles:       1,
		AtomicCycles:      4,
		SyncCycles:        4,
		MemcpyMBps:        780,
		CopyStartupCycles: 20,
		BusMBps:           1200,
		BusAddressNs:      21,
		MemoryLatencyNs:   900,
		SemopUs:           10,
		NodeMemoryMB:      2048,
	}
}

// Limits of the plausible ranges Validate accepts: wide (what-if studies
// stay possible), far from overflow in every conversion.
const (
	maxClockMHz  = 10000
	maxRateMBps  = 1e7
	minRateMBps  = 1
	maxOpNs      = 1e9
	maxOpCycles  = 1e6
	maxOpUs      = 1e6
	maxNodeMemMB = 16384 // a POWER CHALLENGE's largest memory (NodeMemoryMB)
	maxCacheKB   = 16384
	maxLineBytes = 4096
	maxCacheWays = 1024
)

func paramErrorf(field, format string, args ...any) error {
	return machines.ParamErrorf(Name, field, format, args...)
}

// Ranges are the plausible range of every numeric parameter (Validate
// checks them; simrun params lists them).
func (p Params) Ranges() ([]machines.FloatRange, []machines.IntRange) {
	return []machines.FloatRange{
			machines.Float("clock_mhz", p.ClockMHz, 1, maxClockMHz, "MHz"),
			machines.Float("load_cycles", p.LoadCycles, 0, maxOpCycles, "cycles"),
			machines.Float("store_cycles", p.StoreCycles, 0, maxOpCycles, "cycles"),
			machines.Float("atomic_cycles", p.AtomicCycles, 0, maxOpCycles, "cycles"),
			machines.Float("sync_cycles", p.SyncCycles, 0, maxOpCycles, "cycles"),
			machines.Float("memcpy_mbps", p.MemcpyMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("copy_startup_cycles", p.CopyStartupCycles, 0, maxOpCycles, "cycles"),
			machines.Float("bus_mbps", p.BusMBps, minRateMBps, maxRateMBps, "MB/s"),
			machines.Float("bus_address_ns", p.BusAddressNs, 0, maxOpNs, "ns"),
			machines.Float("memory_latency_ns", p.MemoryLatencyNs, 0, maxOpNs, "ns"),
			machines.Float("semop_us", p.SemopUs, 0, maxOpUs, "us"),
		}, []machines.IntRange{
			machines.Int("cache_kb", p.CacheKB, 1, maxCacheKB, "KB"),
			machines.Int("cache_line_bytes", p.CacheLineBytes, 8, maxLineBytes, "bytes"),
			machines.Int("cache_ways", p.CacheWays, 1, maxCacheWays, "ways"),
			machines.Int("node_memory_mb", p.NodeMemoryMB, 1, maxNodeMemMB, "MB"),
		}
}

// Validate names (by its YAML name, as a *machines.ParamError) the first
// parameter that is not a finite number in its plausible range.
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
	}
	if err := p.memConfig().Validate(); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return p.busConfig().Validate()
}

// memConfig is the CPU model of one R10000: a coherent write-back cache
// (its states and transactions are the bus's, busConfig) and no store
// buffer that others could see past: sequential consistency.
func (p Params) memConfig() mem.Config {
	return mem.Config{
		ClockMHz: p.ClockMHz,
		Cache: mem.CacheConfig{
			Enabled: true, LineBytes: p.CacheLineBytes, SizeBytes: p.CacheKB * 1024,
			Ways: p.CacheWays, Coherent: true,
		},
		Costs: mem.Costs{
			LoadCycles:         p.LoadCycles,
			MissCycles:         p.LoadCycles, // the miss's time is its bus transaction's
			UncachedLoadCycles: p.LoadCycles, // plus its bus transaction
			StoreCycles:        p.StoreCycles,
			FenceCycles:        p.SyncCycles,
			AtomicCycles:       p.AtomicCycles,
			CopyStartupCycles:  p.CopyStartupCycles,
			MemcpyMBps:         p.MemcpyMBps,
		},
	}
}

// busConfig is the POWERpath-2 bus.
func (p Params) busConfig() mem.BusConfig {
	return mem.BusConfig{
		LineBytes: p.CacheLineBytes, MBps: p.BusMBps,
		AddressNs: p.BusAddressNs, MemoryLatencyNs: p.MemoryLatencyNs,
	}
}

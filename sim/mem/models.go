package mem

import (
	"fmt"
	"sort"
)

// Builtin memory models for litmus tests and teaching. Costs are
// illustrative (a 100 MHz CPU with one-cycle hits): litmus outcomes depend
// on orderings, not on these values.
func Builtin(name string) (Config, error) {
	base := Config{
		ClockMHz: 100,
		Costs: Costs{LoadCycles: 1, MissCycles: 10, UncachedLoadCycles: 10, StoreCycles: 1,
			FenceCycles: 2, AtomicCycles: 10, FlushCycles: 50, MemcpyMBps: 400, VectorMBps: 1600},
	}
	cache := CacheConfig{Enabled: true, LineBytes: 64, SizeBytes: 8192, Ways: 2, Coherent: true}
	sb := StoreBufferConfig{Depth: 8, DrainCycles: 4, Order: OrderFIFO, Forwarding: true}
	switch name {
	case "sc": // no store buffer, coherent cache: sequential consistency
		base.Cache = cache
	case "tso": // FIFO store buffer with forwarding (x86-like)
		base.Cache, base.StoreBuffer = cache, sb
	case "pso": // stores to different lines drain out of order (SPARC PSO-like)
		sb.Order = OrderReordered
		base.Cache, base.StoreBuffer = cache, sb
	case "noncoherent": // pso plus caches that other CPUs' writes do not update
		sb.Order = OrderReordered
		cache.Coherent = false
		base.Cache, base.StoreBuffer = cache, sb
	default:
		return Config{}, fmt.Errorf("unknown memory model %q (built-in: %v)", name, BuiltinNames())
	}
	return base, nil
}

// BuiltinNames lists the built-in memory models.
func BuiltinNames() []string {
	n := []string{"sc", "tso", "pso", "noncoherent"}
	sort.Strings(n)
	return n
}

package machines

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Processor is all a stack holds of the processor its protocol code runs
// on: timed loads and stores, cached and uncached, a fence, the atomics, a
// copy, the CPU's own work, and the spin that waits for memory to change.
// Every operation charges the calling process the machine's cost of it in
// simulated time; a stack never reads a cost, sleeps, or asks how the
// engine runs. The engine's fast paths (a spin that sleeps until a watched
// word is written, a poll's loads or a store run's stores run as one
// event) are below this line, and Engine.SetStepByStep turns every one of
// them off with the same simulated times.
//
// Untimed reads (Peek, PeekUncached) are for a SpinUntil predicate only:
// the spin charges its polls (the test in stacks/contract_test.go checks
// that protocol code calls them nowhere else).
//
// *mem.CPU is the Processor of every machine here.
type Processor interface {
	// Load reads a word of size 1, 2, 4 or 8 bytes through the cache and
	// the CPU's store buffer; LoadUncached bypasses the cache.
	Load(p *sim.Proc, a mem.Addr, size int) uint64
	LoadUncached(p *sim.Proc, a mem.Addr, size int) uint64
	// Store writes a word through the store buffer and the cache.
	Store(p *sim.Proc, a mem.Addr, size int, v uint64)
	// Fence waits until the CPU's earlier stores are visible.
	Fence(p *sim.Proc)
	// TestAndSet and FetchAdd are the CPU's atomic read-modify-writes.
	TestAndSet(p *sim.Proc, a mem.Addr) uint64
	FetchAdd(p *sim.Proc, a mem.Addr, delta uint64) uint64
	// Memcpy copies n bytes in the CPU's memory with its copy loop.
	Memcpy(p *sim.Proc, dst, src mem.Addr, n int)
	// InvalidateRange drops the cached lines of [a, a+n) (a non-coherent
	// cache's copies of what another processor wrote); FlushCache drops
	// them all.
	InvalidateRange(p *sim.Proc, a mem.Addr, n int)
	FlushCache(p *sim.Proc)
	// Compute is cycles of the CPU's own work; Execute is the same work
	// run from code, which misses in the instruction cache where the CPU
	// has one.
	Compute(p *sim.Proc, cycles float64)
	Execute(p *sim.Proc, code mem.Code, cycles float64)
	// Delay waits d without touching memory: a back-off the protocol
	// states in time ("a microsecond"), an idle wait.
	Delay(p *sim.Proc, d sim.Time)
	// Update is cycles of work on the n bytes at a: f sees them as the
	// program does and what it leaves there is stored back (the program's
	// own bytes: a mask, an envelope it builds). Reduce is cycles of work
	// combining the n bytes at in into the n bytes at acc, elem bytes at a
	// time (a reduction's combine, an accumulate).
	Update(p *sim.Proc, a mem.Addr, n int, cycles float64, f func(b []byte))
	Reduce(p *sim.Proc, acc, in mem.Addr, n, elem int, cycles float64, f func(acc, in []byte))
	// SpinUntil polls check until it reports true; watch lists the 8-byte
	// words check reads. The machine sleeps the spinner until one of them
	// is written and wakes it at the poll that would have read the write,
	// charging what those polls cost; why names the wait in deadlock and
	// livelock reports.
	SpinUntil(p *sim.Proc, why fmt.Stringer, check func() bool, watch ...mem.Addr)
	// Poll runs check once, as one poll of a loop that reads memory: check
	// may only load uncached and compute (its steps timed as issued one
	// after another), and it may be run again from the start, so it must
	// leave nothing behind but what its result depends on. It returns
	// check's result. The machine runs a poll as one event where nothing
	// can tell, and re-runs check when a write lands on a word it read.
	Poll(p *sim.Proc, check func() bool) bool
	// StoreRun runs fill once, as a run of stores to the program's own
	// bytes one after another (a header it builds): fill may only store
	// and compute (Compute, Execute, Delay), and what it stores must not
	// depend on when it runs.
	// The machine runs it as one event where nothing can tell, each
	// store still visible at its own instant.
	StoreRun(p *sim.Proc, fill func())
	// Peek and PeekUncached read without time what Load and LoadUncached
	// would read now: inside a SpinUntil predicate only.
	Peek(a mem.Addr, b []byte)
	PeekUncached(a mem.Addr, size int) uint64
	// Coherent reports whether the CPU's cache is kept coherent by the
	// hardware (or there is none).
	Coherent() bool
}

var _ Processor = (*mem.CPU)(nil)

// ProcessorOf is process pe's processor, as a stack holds it.
func ProcessorOf(m interface{ CPU(pe int) *mem.CPU }, pe int) Processor { return m.CPU(pe) }

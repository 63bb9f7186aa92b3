// Package litmus runs memory-model litmus tests (MP, SB, LB, IRIW, 2+2W,
// WRC, each also with fences, and MP+spin) as small per-thread programs of
// loads, stores, fences and spin-waits issued through mem.CPU on one shared
// mem.Memory, each thread a simulated process, and counts the final states
// over many seeded runs, in the style of litmus7.
//
// # A run
//
// Every run builds a fresh engine, seeded from (seed, run index) by drawing
// the run seeds in order from a generator seeded with the test seed, so run
// k is replayable alone. Memory starts at zero. Each location sits on its
// own cache line (so stores to different locations may overtake each other
// in a "reordered" store buffer). With Options.Warm (the default), every
// thread first loads each location it will access, as litmus7's repeated
// iterations leave them cached; the threads then start together after a
// random delay in [0, start_jitter_cycles) and wait a random [0,
// op_jitter_cycles/2^k) before each instruction, k drawn once per run in
// 0..3, so that interleavings vary from run to run: some runs race tightly
// (stores still buffered when another thread reads), others leave every
// store time to drain. Both jitters default to DefaultJitterCycles, twice
// the model's time to drain every store of the test, so that every
// outcome sequential consistency allows shows up in DefaultRuns runs
// (TestEverySCOutcome). The final state is the registers (and, for 2+2W, the
// final memory).
//
// # The fenced variants
//
// A "+fences" variant puts a full barrier between consecutive instructions
// of every thread: mem.CPU.Fence (drain the store buffer) and, on a CPU
// whose cache is not coherent, also mem.CPU.FlushCache, because ordering
// alone does not make another processor's writes visible through a stale
// cached copy ("a general lock operation ... [on the SX-4], because of the
// cost of flushing the cache, will always be relatively expensive",
// papers/mpich-sx4.txt, section 5). On a coherent cache there is nothing to
// flush and the barrier is the fence alone.
//
// # What the built-in models can show, and why
//
// The mem.CPU model performs a load at its issue (it reads memory, or a
// cached copy, at once) and sends a store to a store buffer that drains
// later. So the only relaxation a coherent model has is a store overtaken
// by a later load (TSO: SB) or, with a "reordered" buffer, by a later store
// to another line (PSO: MP, 2+2W). Loads are never reordered with anything
// and every store becomes visible to all other processors at the same
// instant (the memory is multi-copy atomic), so LB, IRIW and WRC are never
// observed on sc, tso or pso: that is a property of these models, not a
// bug of the tests.
//
// On "noncoherent", caches keep the copy they loaded: with warm caches a
// reader sees its stale copies (zeros) for ever, so MP is never observed
// but SB is, every time, and a reader spinning on a flag through its cache
// (MP+spin) never sees the flag: the engine reports a livelock naming the
// reader and the stale line — the cache-coherence problem of
// papers/mpich-sx4.txt, section 5. The fenced variants flush the cache and
// show no forbidden outcome there either; MP+spin+fences still livelocks,
// since its barrier comes after the spin, not inside it.
package litmus

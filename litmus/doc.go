// Package litmus runs memory-model litmus tests (MP, SB, LB, IRIW, 2+2W,
// WRC, each also with fences, and MP+spin) as small per-thread programs of
// loads, stores, fences and spin-waits issued through mem.CPU on one shared
// mem.Memory, each thread a simulated process, and counts the final states
// over many seeded runs, in the style of litmus7; or enumerates every final
// state the operational model allows (Explore), in the style of herd7.
//
// # Tests are herd7 files
//
// Parse reads herdtools7's .litmus format: the X86 subset of the classic
// tests (MOV to and from memory and registers, MFENCE, SFENCE, LFENCE,
// XCHG, LOCK ADD/INC/DEC/XADD/CMPXCHG) and herd7's C syntax (WRITE_ONCE,
// READ_ONCE, smp_mb, smp_wmb, smp_rmb, smp_store_release,
// smp_load_acquire, xchg, cmpxchg, atomic_add/inc/dec, atomic_fetch_add,
// and if (r == v) { ... } else { ... }, one level deep), a filter clause
// before the final condition, plus one msgsim extension, r =
// spin_until(*x, v). An instruction under an if is guarded (Instr.If): it
// does nothing when its guard fails, on every runner; in nmca it also
// waits for the instruction that writes its guard's register (a control
// dependency: LB+ctrls is forbidden, as on POWER and ARM, and so is
// MP+wmb+ctrl, which POWER and ARM allow by satisfying loads
// speculatively). Filtered-out final states are not counted. The built-in tests are such
// files (builtin/, embedded) and go through the same parser; testdata/
// holds the classic x86 tests and their MFENCE variants. Fences map to
// the model: smp_mb and MFENCE are Fence (drain the store buffer, and
// flush a non-coherent cache); smp_wmb and SFENCE drain the store buffer;
// smp_rmb and LFENCE flush a non-coherent cache (nothing else to do on
// these models, whose loads perform in order); release is smp_wmb then the
// store, acquire the load then smp_rmb (stronger than needed, never
// weaker); atomics drain the store buffer and act on memory.
//
// # Exhaustive mode
//
// Explore steps an untimed operational model equal to mem.CPU's (a load
// reads the cache or memory then the thread's own buffered stores; a store
// enters the buffer, full buffers stall; drains in FIFO order or, with a
// reordered buffer, any entry with no older one to the same location;
// fences and atomics wait for an empty buffer; a non-coherent cache keeps
// the copy it loaded; with Warm, each thread starts with its locations
// cached). It takes every enabled step from every state, through the
// schedule explorer the engine's threads use (sim/explore): each step
// (which thread runs which instruction, which buffered store drains, which
// store in flight reaches which thread) is a choice among the enabled
// ones, and the model's state is the fingerprint that makes each state
// with a choice explored once (Explored counts them: IRIW on nmca, 4477),
// well under a second per classic test. The sampled runs can
// only reach what it reaches (TestSampledWithinExhaustive), but timing
// can hide some of it: with fixed drain times R on tso and S on pso need
// one store to drain late, which Options.DrainJitterCycles
// (store_buffer.drain_jitter_cycles) allows.
//
// # nmca: not multi-copy atomic
//
// The nmca model (nmca.go) has no mem.Config: each thread has its own view
// of memory, a store reaches each other thread separately, and a thread
// may run an instruction before earlier independent ones. It shows IRIW,
// WRC and LB, which no mem.CPU model can, as IBM POWER (observed on
// POWER6 and POWER7 by Sarkar et al., PLDI 2011) and ARMv7 (and ARMv8
// before its 2017 revision to "other-multi-copy atomic") allow; their
// fenced variants stay forbidden, since its barriers are cumulative. It is
// sampled by random paths of the same operational model.
//
// # Machines
//
// RunMachine (machine.go) runs a test on a simulated machine of remote
// writes, given as a Machine: its Builder and the machine's own choices.
// Each location lives in one node's memory; a thread reaches a location of
// its own node with its processor's loads and stores and any other over
// the generic verbs of package machines: a store is a remote write of one
// word (PutWord), a load a remote read (Get), a full or write barrier
// Quiet, and a full or read barrier also flushes a non-coherent cache. Any
// machine offering those verbs runs tests with nothing more; a one-node
// machine whose processes share its memory (machines.SharedSegments) runs
// them as its processor model instead (Machine.OneNode: the SX-4). A
// machine's own choices live in its package, which cannot import this one:
// its instance implements Tuned (machines.LitmusTraits: names of its
// units, when threads start, the default jitters, why atomics are
// refused), and Fencer or SpinNoter where a barrier or a hanging spin is
// its own. On reads them. The T3D's (machines/t3d/litmus.go) start threads
// after its warm-up loads; its remote stores are one-word puts, remote
// loads gets, local loads read the PE's non-coherent cache, and a full
// barrier is shmem_quiet then a cache flush. The SCI cluster's
// (machines/sci/litmus.go) remote stores are posted writes that the fabric
// reorders (reorder_ns), its instruction jitter that span; MP, SB and 2+2W
// are observable across nodes, their MemBarrier versions are not. The IBM
// SP's (machines/sp/litmus.go) remote stores are LAPI_Puts, which LAPI
// does not order and the switch may deliver out of order
// (switch_jitter_us), remote loads LAPI_Get then LAPI_Waitcntr, a full or
// write barrier LAPI_Fence; MP, SB, 2+2W and MP+spin are observable, their
// fenced versions not, and in polling mode a reader spinning on its own
// memory hangs. Options.Place puts each thread on a chosen PE, node (or
// SCI process) instead of thread i on i (ParsePlace reads "P0=3,P1=0");
// Machine.Homes follows it.
//
// # Traces
//
// A traced run (an engine with trace.Enable, as simrun trace makes) marks
// each instruction on its thread's timeline, a load with the stores it may
// have read from ("rf from P0's x=1"), and draws each reads-from edge as a
// flow arrow (sim.Proc.Flow) from the store's mark to the load's, which
// Perfetto shows as an arrow between the two threads.
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
//
// Layer: beside the workloads (DESIGN's litmus/): imports machines (the
// verbs and LitmusTraits), sim, sim/mem, sim/explore and
// internal packages; no workload, no stack and no concrete machine (a
// machine's Builder comes from the registry). Package workloads/litmus is
// the thin adapter that runs a test as a scenario's workload.
package litmus

package mem

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/sim"
)

// CPU is one processor's view of a Memory. Its operations are called from
// the simulated process running on it and charge that process the
// operation's cost in simulated time.
type CPU struct {
	name      string
	eng       *sim.Engine
	mem       *Memory
	cfg       *Config // shared by the CPUs of InitCPUShared; never changed
	clock     sim.Clock
	cache     *cache
	lineShift uint
	sbuf      *storeBuf // nil without a store buffer (StoreBuffer.Depth 0)
	spin      watcher
	spins     []*watcher  // spins in progress on this CPU (one per thread)
	scr       *cpuScratch // nil until a copy, a fill or a look needs one
	icache    *icache     // instruction cache tags, built on the first Execute
	stats     Stats
	bus       *Bus        // the snooping bus the cache is on (Bus.Attach), or nil
	snoop     *snoopCache // the cache's tags and MESI states on the bus
	poll      *pollState  // its merged poll (Poll), built on first use
	polling   bool        // a merged poll's check (or store run's fill) runs: its loads (stores) are recorded, not slept
	filling   bool        // a merged store run's fill runs (polling is set too): its stores are held (run)
	run       *storeRun   // its store run (StoreRun), built on first use
	pollSpins bool        // step by step, spins poll for real (SetPollingSpins)
}

// cpuScratch is a CPU's reusable buffers, built when first needed: most
// of a million PEs never copy or fill lines.
type cpuScratch struct {
	free [][]byte  // byte buffers to reuse (getBuf)
	hits []int     // peekLines's and cachedLines's scratch
	pend []pending // viewFill's scratch
}

// scratch returns c's scratch buffers, building them on first use.
func (c *CPU) scratch() *cpuScratch {
	if c.scr == nil {
		c.scr = &cpuScratch{}
	}
	return c.scr
}

// release gives buffers back for reuse (getBuf).
func (c *CPU) release(bufs ...[]byte) {
	s := c.scratch()
	s.free = append(s.free, bufs...)
}

// Stats counts a CPU's memory operations.
type Stats struct {
	Loads, Hits, Misses, Uncached, Stores, Fences, Atomics, Flushes, Copies uint64
	CopiedBytes                                                             uint64
	// IFetches and IMisses count the instruction-cache lines Execute ran
	// through, and those of them that missed.
	IFetches, IMisses uint64
}

// NewCPU returns a CPU with model cfg on memory m.
func NewCPU(eng *sim.Engine, name string, m *Memory, cfg Config) (*CPU, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cpu %s: %w", name, err)
	}
	c := new(CPU)
	InitCPUShared(c, eng, name, m, &cfg)
	return c, nil
}

// InitCPUShared makes *c a CPU with a model that many CPUs share (a
// machine's thousands of identical processors), in place: a machine of
// many PEs keeps their CPUs in one array (one allocation, not one per PE).
// cfg must have passed Validate and must not change afterwards; c must not
// be copied afterwards.
func InitCPUShared(c *CPU, eng *sim.Engine, name string, m *Memory, cfg *Config) {
	*c = CPU{name: name, eng: eng, mem: m, cfg: cfg, clock: cfg.Clock(), lineShift: 6}
	if !m.attached {
		m.attached, m.key, m.footprint = true, sim.Key(m.name), eng.Hooks().Footprint
	}
	if cfg.Cache.Enabled {
		c.cache = newCache(cfg.Cache)
		c.lineShift = uint(c.cache.shift)
	}
	if cfg.StoreBuffer.Depth > 0 {
		c.sbuf = &storeBuf{
			drainDelay:  c.clock.Cycles(cfg.StoreBuffer.DrainCycles),
			drainJitter: c.clock.Cycles(cfg.StoreBuffer.DrainJitterCycles),
		}
		c.sbuf.drainFn = c.drain
	}
}

// Name is the CPU's name.
func (c *CPU) Name() string { return c.name }

// Memory is the memory this CPU sees.
func (c *CPU) Memory() *Memory { return c.mem }

// Config is the CPU's model.
func (c *CPU) Config() Config { return *c.cfg }

// Clock is the CPU clock.
func (c *CPU) Clock() sim.Clock { return c.clock }

// Stats returns the operation counts so far.
func (c *CPU) Stats() Stats { return c.stats }

// Buffered is the number of stores waiting in the store buffer.
func (c *CPU) Buffered() int { return len(c.buffered()) }

func (c *CPU) lineOf(a Addr) uint64 { return uint64(a) >> c.lineShift }

// Compute charges p for cycles of the CPU's own work.
func (c *CPU) Compute(p *sim.Proc, cycles float64) {
	if c.polling {
		c.advanceRun(p, c.clock.Cycles(cycles))
		return
	}
	p.Sleep(c.clock.Cycles(cycles))
}

// VerbPoint is the scheduling point of a machine's memory verb (a put, a
// get, a remote atomic) that p issues on the n bytes at a of memory m,
// while an explorer makes memory operations scheduling points
// (sim.Engine.MemoryPoints); otherwise it costs one test. Machines call
// it first thing in their verbs.
func VerbPoint(p *sim.Proc, m *Memory, op string, a Addr, n int) {
	if p.MemoryPoints() {
		m.point(p, op, a, n)
	}
}

func (m *Memory) point(p *sim.Proc, op string, a Addr, n int) {
	p.MemoryPoint(fmt.Sprintf("%s@%#x", m.name, uint64(a)&^63), fmt.Sprintf("%s %d bytes at %s", op, n, m.Describe(a)))
}

// point is the scheduling point of an operation op on the n bytes at a,
// while an explorer makes memory operations scheduling points
// (sim.Engine.MemoryPoints): its object is the 64-byte block of a.
func (c *CPU) point(p *sim.Proc, op string, a Addr, n int) { c.mem.point(p, op, a, n) }

// view reads the bytes at a as this CPU sees them: through its cache (which
// may hold a stale copy if not coherent), then its own buffered stores.
// It reports whether every line hit in the cache.
func (c *CPU) view(a Addr, b []byte, fill bool) bool {
	hit := true
	if c.cache == nil {
		c.mem.Read(a, b)
	} else if fill && len(b) >= 4*c.cache.lineBytes() {
		hit = c.viewFill(a, b)
	} else if !fill && len(b) > c.cache.lineBytes()*len(c.cache.tags) {
		// A look at more lines than the cache holds: read memory at once,
		// then lay the cached lines over it (peekLines), with the same
		// effect on the cache as line by line.
		c.mem.Read(a, b)
		hit = c.peekLines(a, b)
	} else {
		lb := c.cache.lineBytes()
		if !fill {
			// A look: memory's bytes at once, the cached lines laid
			// over them line by line (a read per line costs a segment
			// look-up each; a payload check looks at 4 KiB at a time).
			c.mem.Read(a, b)
		}
		for off := 0; off < len(b); {
			x := a + Addr(off)
			line := c.cache.line(x)
			lo := int(x) & (lb - 1)
			n := min(len(b)-off, lb-lo)
			i := c.cache.lookup(line)
			if i < 0 {
				hit = false
				if fill {
					i = c.cache.fill(c.mem, line)
				}
			}
			if i >= 0 && !c.cfg.Cache.Coherent {
				copy(b[off:off+n], c.cache.slot(i)[lo:])
			} else if fill {
				c.mem.Read(x, b[off:off+n])
			}
			off += n
		}
	}
	c.forward(a, b)
	return hit
}

// viewFill does for b what view's line-by-line loop with fill does, with
// the same effect on the cache (tags, LRU stamps, slot bytes), reading
// memory at once: b is read from memory, a non-coherent cache's hits are
// laid over it, and the lines missed are filled from b (memory does not
// change during the look; fillLines).
func (c *CPU) viewFill(a Addr, b []byte) bool {
	ca := c.cache
	c.mem.Read(a, b)
	coherent := c.cfg.Cache.Coherent
	return c.fillLines(a, b, false, func(i, off int) {
		if coherent {
			return // b has memory's bytes, as the line does
		}
		src, dst := ca.slot(i), b
		if off < 0 {
			src = src[-off:]
		} else {
			dst = b[off:]
		}
		copy(dst, src)
	})
}

// fillLines has the effect on the cache of a filling look at a line by
// line (the look at len(b) bytes, at least a line): every line is looked
// up in address order, a hit renewing its LRU stamp and a miss claiming
// its set's least recently used way and filling it from memory. b holds
// the bytes at a as memory does. It calls hit(slot, off) for every line
// found, while the slot still holds the bytes it held before the look (off:
// where the line starts relative to a, negative for the first line); hit
// may lay the slot's bytes over b's, unless b is shared bytes (never
// written: the lines that hit keep their own bytes). The lines a slot is
// claimed for are filled from b, but for the first and last, which b may
// hold only in part, filled from memory. It reports whether every line hit.
//
// A look longer than the cache skips lines in bulk where their effect is
// known: once the look has gone through sets*ways lines past the first,
// every way holds one of its lines, and each further line misses and takes
// the way of the line sets*ways before it; so a whole number of such
// rounds can be skipped (the LRU clock advanced by their lines) as long as
// a round is left before the last line, which then leaves the slots as the
// full look does. A direct-mapped cache is done in bulk (fillDirect).
func (c *CPU) fillLines(a Addr, b []byte, shared bool, hit func(slot, off int)) bool {
	ca := c.cache
	if ca.ways == 1 {
		return c.fillDirect(a, b, shared, hit)
	}
	all := true
	first, last := ca.line(a), ca.line(a+Addr(len(b))-1)
	round := uint64(ca.sets * ca.ways)
	pend := c.scratch().pend[:0]
	for line := first; line <= last; line++ {
		if line == first+1+round && line+2*round <= last {
			skip := (last - line - round) / round * round
			ca.clock += skip
			line += skip
			all = false
		}
		i := ca.lookup(line)
		off := int(Addr(line<<ca.shift) - a) // of the line relative to a; negative for the first
		if i < 0 {
			all = false
			if line == first || line == last {
				i = ca.fill(c.mem, line)
			} else {
				pend = append(pend, pending{slot: ca.claim(line), line: line, off: off})
				continue
			}
		}
		hit(i, off)
	}
	lb := ca.lineBytes()
	for _, p := range pend {
		if ca.tags[p.slot] == p.line+1 { // not evicted later in the look
			copy(ca.slot(p.slot), b[p.off:p.off+lb])
		}
	}
	c.scr.pend = pend
	return all
}

// fillDirect is fillLines on a direct-mapped cache, in bulk. Line j of the
// look (j from 0) can hit only if it is the first of the look in its set
// (j < sets): a later one finds its set taken by the line sets before it.
// At the end every set the look went through holds its last line there:
// the last min(lines, sets) lines of the look, in consecutive sets, whose
// slots are consecutive in the cache's data. A line among them that hit
// keeps its bytes; the others are filled from b (the first and last from
// memory). The clock ticks once per line, hit or miss, as lookup and claim
// tick it. Lines filled whole from shared bytes are filled lazily
// (cache.fillLazy): most are replaced by the next look before anything
// reads them.
func (c *CPU) fillDirect(a Addr, b []byte, shared bool, hit func(slot, off int)) bool {
	ca := c.cache
	if ca.tags == nil {
		ca.alloc()
	}
	first, last := ca.line(a), ca.line(a+Addr(len(b))-1)
	lines, sets := last-first+1, uint64(ca.sets)
	ca.clock += lines
	keep := c.scratch().hits[:0] // slots of lines that hit and are the last of the look in their set
	hits := uint64(0)
	// The first min(lines, sets) lines, in at most two runs of
	// consecutive tags (the sets wrap around).
	for line, stop := first, first+min(lines, sets)-1; line <= stop; {
		set := int(line % sets)
		end := min(stop, line+sets-uint64(set)-1) // the run's last line
		tags, want := ca.tags[set:set+int(end-line)+1], line+1
		for k := 0; k < len(tags); k, want = k+1, want+1 {
			if tags[k] != want { // most lines miss
				continue
			}
			l := want - 1
			hits++
			hit(set+k, int(Addr(l<<ca.shift)-a))
			if l+sets > last {
				keep = append(keep, set+k)
			}
		}
		line = end + 1
	}
	from := first
	if lines > sets {
		from = last - sets + 1
	}
	lb := ca.lineBytes()
	var saved []byte
	if len(keep) > 0 && (c.cfg.Cache.Coherent || shared) {
		// A coherent cache's hit does not lay its bytes over b, nor does
		// any hit over shared bytes: save the kept slots' bytes from the
		// fill below.
		saved = make([]byte, len(keep)*lb)
		for k, s := range keep {
			copy(saved[k*lb:], ca.slot(s))
		}
	}
	// Tags and bytes of the lines [from, last], in at most two runs of
	// consecutive slots (the sets wrap around). A kept line of a
	// non-coherent cache gets its own bytes back: hit laid them over b.
	if last-from+1 == sets {
		ca.overwrite(0, ca.sets) // every slot
	}
	for line := from; line <= last; {
		set := int(line % sets)
		end := min(last, line+sets-uint64(set)-1) // the run's last line
		tags, want := ca.tags[set:set+int(end-line)+1], line+1
		for k := range tags {
			tags[k] = want
			want++
		}
		lo := int(Addr(line<<ca.shift) - a) // of the run in b
		hi := int(Addr((end+1)<<ca.shift) - a)
		ca.overwrite(set, set+int(end-line)+1)
		if shared {
			// Whole lines lazily; the first and last, which b may hold
			// in part, at once.
			s0, s1 := set, set+int(end-line)+1
			if lo < 0 {
				s0++
			}
			if hi > len(b) {
				s1--
			}
			if s0 < s1 {
				l0 := lo + (s0-set)*lb
				ca.fillLazy(s0, s1, b[l0:l0+(s1-s0)*lb])
			}
			if s0 > set {
				copy(ca.data[set*lb-lo:(set+1)*lb], b)
			}
			if s1 < set+int(end-line)+1 && s1 >= s0 {
				copy(ca.data[s1*lb:(s1+1)*lb], b[lo+(s1-set)*lb:])
			}
			line = end + 1
			continue
		}
		dst := ca.data[set*lb : (set+int(end-line)+1)*lb]
		if lo < 0 {
			dst, lo = dst[-lo:], 0
		}
		copy(dst, b[lo:min(hi, len(b))])
		line = end + 1
	}
	for k, s := range keep {
		if saved != nil {
			copy(ca.whole(s), saved[k*lb:(k+1)*lb])
		}
	}
	for _, line := range []uint64{first, last} { // lines b may hold only in part
		set := int(line % sets)
		if shared && Addr(line<<ca.shift) >= a && Addr((line+1)<<ca.shift) <= a+Addr(len(b)) {
			continue // whole in b: memory's bytes, filled (lazily)
		}
		if line >= from && !slices.Contains(keep, set) && ca.tags[set] == line+1 {
			ca.load(c.mem, set, line)
		}
	}
	c.scr.hits = keep
	return hits == lines
}

// pending is a slot fillLines claimed for a line, whose bytes are b's at off.
type pending struct {
	slot int
	line uint64
	off  int
}

// peekLines does for b, read from memory at a, what view's line-by-line
// lookups without fill do: every cached line of the range, in address
// order, is looked up (its LRU stamp renewed) and, in a non-coherent
// cache, its copy replaces memory's bytes. It visits the cache's slots,
// not the range's lines, and reports whether every line was cached.
func (c *CPU) peekLines(a Addr, b []byte) bool {
	ca := c.cache
	first, last := ca.line(a), ca.line(a+Addr(len(b))-1)
	hits := c.scratch().hits[:0]
	for i, t := range ca.tags {
		if t != 0 && t-1 >= first && t-1 <= last {
			hits = append(hits, i)
		}
	}
	slices.SortFunc(hits, func(x, y int) int { return cmp.Compare(ca.tags[x], ca.tags[y]) })
	for _, i := range hits {
		ca.lookup(ca.tags[i] - 1)
		if c.cfg.Cache.Coherent {
			continue
		}
		src, dst := ca.overlap(i, a, b)
		copy(dst, src)
	}
	c.scr.hits = hits
	return uint64(len(hits)) == last-first+1
}

// Load reads a little-endian word of size 1, 2, 4 or 8 bytes through the
// cache and store buffer.
func (c *CPU) Load(p *sim.Proc, a Addr, size int) uint64 {
	if c.polling {
		c.notInPoll("Load")
	}
	if p.MemoryPoints() {
		c.point(p, "loads", a, size)
	}
	var b [8]byte
	c.stats.Loads++
	cost := c.cfg.Costs.LoadCycles
	hit := c.view(a, b[:size], true)
	c.noteCached(p, a, size)
	if c.bus != nil {
		hit = c.busLoad(p, a, size)
	}
	if hit {
		c.stats.Hits++
	} else {
		c.stats.Misses++
		if c.bus == nil { // on a bus, the miss's time is its transaction's
			cost = c.cfg.Costs.MissCycles
		}
	}
	p.Sleep(c.clock.Cycles(cost))
	return binary.LittleEndian.Uint64(b[:])
}

// LoadUncached reads a word from memory, bypassing the cache (but seeing
// this CPU's own buffered stores).
func (c *CPU) LoadUncached(p *sim.Proc, a Addr, size int) uint64 {
	if c.polling {
		if c.filling {
			c.notInPoll("LoadUncached")
		}
		return c.poll.loadUncached(p, a, size)
	}
	if p.MemoryPoints() {
		c.point(p, "loads uncached", a, size)
	}
	var b [8]byte
	c.stats.Uncached++
	c.mem.Read(a, b[:size])
	c.forward(a, b[:size])
	if c.bus != nil {
		c.busUncached(p)
	}
	p.Sleep(c.clock.Cycles(c.cfg.Costs.UncachedLoadCycles))
	return binary.LittleEndian.Uint64(b[:])
}

// PeekUncached returns what LoadUncached(p, a, size) would return now
// (memory, and this CPU's own buffered stores over it), with no timing and
// not counted as a load: for a spin's predicate, whose polls the spin
// charges.
func (c *CPU) PeekUncached(a Addr, size int) uint64 {
	if c.polling {
		c.notInPoll("PeekUncached")
	}
	return c.peekUncached(a, size)
}

// peekUncached is PeekUncached.
func (c *CPU) peekUncached(a Addr, size int) uint64 {
	var b [8]byte
	c.PeekUncachedBytes(a, b[:size])
	return binary.LittleEndian.Uint64(b[:])
}

// PeekUncachedBytes fills b with what uncached loads of its words would
// return now, as PeekUncached does for one: a run of consecutive words
// (a buffer's header) read as one access to memory.
func (c *CPU) PeekUncachedBytes(a Addr, b []byte) {
	c.mem.Read(a, b)
	c.forward(a, b)
}

// Store writes a little-endian word of size bytes. With a store buffer it
// becomes visible to others when the buffer drains it; the process stalls
// while the buffer is full.
func (c *CPU) Store(p *sim.Proc, a Addr, size int, v uint64) {
	if c.polling {
		if !c.filling {
			c.notInPoll("Store")
		}
		c.run.add(p, a, size, v)
		return
	}
	if p.MemoryPoints() {
		c.point(p, "stores", a, size)
	}
	c.stats.Stores++
	if c.bus != nil {
		c.busStore(p, a, size) // the line owned first, then the store performed
	}
	if c.sbuf == nil {
		var b [8]byte // not kept: on the stack
		binary.LittleEndian.PutUint64(b[:], v)
		c.writeThrough(a, b[:size])
	} else {
		b := make([]byte, 8) // the store buffer may keep it
		binary.LittleEndian.PutUint64(b, v)
		c.write(p, a, b[:size])
	}
	p.Sleep(c.clock.Cycles(c.cfg.Costs.StoreCycles))
}

// write sends b to memory through the store buffer, if there is one.
func (c *CPU) write(p *sim.Proc, a Addr, b []byte) { c.store(p, a, b, false) }

// writeShared is write of shared bytes (Memory.SharedView), which the
// store buffer holds and memory shares instead of copying.
func (c *CPU) writeShared(p *sim.Proc, a Addr, b []byte) { c.store(p, a, b, true) }

// store is write, of shared bytes if shared.
func (c *CPU) store(p *sim.Proc, a Addr, b []byte, shared bool) {
	if c.cfg.StoreBuffer.Depth == 0 {
		c.writeThroughAs(a, b, shared)
		return
	}
	for len(c.sbuf.sb) >= c.cfg.StoreBuffer.Depth {
		c.sbuf.wait.Wait(p, "store buffer full")
	}
	c.enqueue(a, b, shared)
}

// writeThroughAs is writeThrough, of shared bytes (Memory.WriteShared) if
// shared.
func (c *CPU) writeThroughAs(a Addr, b []byte, shared bool) {
	if !shared {
		c.writeThrough(a, b)
		return
	}
	c.mem.WriteShared(a, b)
	if c.cache != nil {
		c.cache.update(a, b)
	}
}

// writeThrough makes b visible in memory and updates this CPU's cached
// copies (write-through, no write-allocate).
func (c *CPU) writeThrough(a Addr, b []byte) {
	c.mem.Write(a, b)
	if c.cache != nil {
		c.cache.update(a, b)
	}
}

// Fence waits until every earlier store of this CPU is visible in memory.
func (c *CPU) Fence(p *sim.Proc) {
	if c.polling {
		c.notInPoll("Fence")
	}
	c.stats.Fences++
	c.drainAll(p, "fence: waiting for the store buffer to drain")
	p.Sleep(c.clock.Cycles(c.cfg.Costs.FenceCycles))
}

func (c *CPU) drainAll(p *sim.Proc, reason string) {
	for len(c.buffered()) > 0 {
		c.sbuf.wait.Wait(p, reason)
	}
}

// FlushCache invalidates the whole cache (the SX-4 has no single-line flush).
func (c *CPU) FlushCache(p *sim.Proc) {
	if c.polling {
		c.notInPoll("FlushCache")
	}
	c.stats.Flushes++
	if c.cache != nil {
		c.cache.flush()
	}
	p.Sleep(c.clock.Cycles(c.cfg.Costs.FlushCycles))
}

// InvalidateLine drops the cached line holding a, if any, at the cost of an
// uncached load.
func (c *CPU) InvalidateLine(p *sim.Proc, a Addr) {
	if c.polling {
		c.notInPoll("InvalidateLine")
	}
	if c.cache != nil {
		c.cache.invalidate(c.cache.line(a))
	}
	p.Sleep(c.clock.Cycles(c.cfg.Costs.UncachedLoadCycles))
}

// rmw is an atomic read-modify-write of the 8-byte word at a, performed on
// memory: it first drains the store buffer (atomics synchronize the
// processor with its memory) and leaves this CPU's cached copy current.
func (c *CPU) rmw(p *sim.Proc, op string, a Addr, f func(old uint64) uint64) uint64 {
	if c.polling {
		c.notInPoll("an atomic")
	}
	if p.MemoryPoints() {
		c.point(p, op, a, 8)
	}
	c.stats.Atomics++
	c.drainAll(p, "atomic: waiting for the store buffer to drain")
	if c.bus != nil {
		// Load-linked then store-conditional: the line taken exclusive,
		// the pair succeeding at once (no other store to the line
		// between them, as the bus orders the two).
		c.busStore(p, a, 8)
	}
	old := c.mem.Load64(a)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], f(old))
	c.writeThrough(a, b[:])
	p.Sleep(c.clock.Cycles(c.cfg.Costs.AtomicCycles))
	return old
}

// TestAndSet atomically sets the word at a to 1 and returns its old value.
func (c *CPU) TestAndSet(p *sim.Proc, a Addr) uint64 {
	return c.rmw(p, "test-and-sets", a, func(uint64) uint64 { return 1 })
}

// FetchAdd atomically adds delta to the word at a and returns its old value.
func (c *CPU) FetchAdd(p *sim.Proc, a Addr, delta uint64) uint64 {
	return c.rmw(p, "fetch-and-adds", a, func(old uint64) uint64 { return old + delta })
}

// Swap atomically replaces the word at a with v and returns its old value.
func (c *CPU) Swap(p *sim.Proc, a Addr, v uint64) uint64 {
	return c.rmw(p, "swaps", a, func(uint64) uint64 { return v })
}

// CompareAndSwap atomically replaces the word at a with v if it holds old,
// and returns the value it held.
func (c *CPU) CompareAndSwap(p *sim.Proc, a Addr, old, v uint64) uint64 {
	return c.rmw(p, "compare-and-swaps", a, func(o uint64) uint64 {
		if o == old {
			return v
		}
		return o
	})
}

// Memcpy copies n bytes at the scalar copy bandwidth: it reads the source as
// the program's loads would, through the cache (cached lines, possibly
// stale, and the lines it misses filled from memory: a real memcpy leaves
// its source cached, so a later remote write to it is not seen until the
// line is invalidated), and writes through the store buffer as one bulk
// store (write-through, no write-allocate). The copy is timed at the copy
// bandwidth as a whole, not per line. A source of shared bytes
// (Memory.SharedView) that no buffered store overlaps is not read: the
// cache is walked (viewShared), and the destination shares the bytes
// unless a stale line was hit; then it gets a copy holding what the
// program saw.
func (c *CPU) Memcpy(p *sim.Proc, dst, src Addr, n int) {
	if c.polling {
		c.notInPoll("Memcpy")
	}
	if n <= 0 {
		return
	}
	if p.MemoryPoints() {
		c.point(p, "copies to "+c.mem.Describe(dst)+" from", src, n)
	}
	c.stats.Copies++
	c.stats.CopiedBytes += uint64(n)
	sh, shared := c.mem.SharedView(src, n)
	var buf []byte
	if shared && !c.forwards(src, n) && (c.cache == nil || n >= 4*c.cache.lineBytes()) {
		buf = c.viewShared(src, sh)
	} else {
		buf = c.getBuf(n)
		c.view(src, buf, true)
		if shared && string(sh) == string(buf) {
			c.release(buf)
			buf = nil
		}
	}
	c.noteCached(p, src, n)
	if c.bus != nil {
		c.busCopy(p, dst, src, n)
	} else {
		p.Sleep(c.clock.Cycles(c.cfg.Costs.CopyStartupCycles) + sim.TransferTime(n, c.cfg.Costs.MemcpyMBps*1e6))
	}
	if buf == nil {
		// The bytes read are memory's shared bytes (no stale line or
		// buffered store changed them): the destination shares them too.
		c.writeShared(p, dst, sh)
		return
	}
	c.write(p, dst, buf)
	c.release(buf)
}

// viewShared is view(a, b, true) of the shared bytes sh at a (SharedView)
// when no buffered store this CPU forwards overlaps them, without reading
// them: it has the look's effect on the cache (fillLines; the lines it
// fills get sh's bytes) and compares the lines a non-coherent cache hits
// with sh. It returns nil when the look sees sh itself, else (a stale
// line) a buffer holding what the look sees.
func (c *CPU) viewShared(a Addr, sh []byte) []byte {
	ca := c.cache
	if ca == nil {
		return nil
	}
	var buf []byte
	coherent := c.cfg.Cache.Coherent
	c.fillLines(a, sh, true, func(i, off int) {
		if coherent {
			return
		}
		src, dst := ca.slot(i), sh
		if off < 0 {
			src = src[-off:]
		} else {
			dst = sh[off:]
		}
		k := min(len(src), len(dst))
		if buf == nil && string(src[:k]) == string(dst[:k]) {
			return // the line holds memory's bytes: the look sees sh there
		}
		if buf == nil { // a stale line: what the look sees is a copy
			buf = c.getBuf(len(sh))
			copy(buf, sh)
		}
		copy(buf[len(sh)-len(dst):], src[:k])
	})
	return buf
}

// VectorCopy copies n bytes memory to memory at the vector bandwidth,
// bypassing the cache and the store buffer: the data is visible to every
// processor when the copy completes (the SX-4's vector moves). Stores still
// in this CPU's buffer are not seen; fence first where that matters.
func (c *CPU) VectorCopy(p *sim.Proc, dst, src Addr, n int) {
	if c.polling {
		c.notInPoll("VectorCopy")
	}
	if n <= 0 {
		return
	}
	if p.MemoryPoints() {
		c.point(p, "vector-copies to "+c.mem.Describe(dst)+" from", src, n)
	}
	c.stats.Copies++
	c.stats.CopiedBytes += uint64(n)
	p.Sleep(c.clock.Cycles(c.cfg.Costs.CopyStartupCycles) + sim.TransferTime(n, c.cfg.Costs.VectorMBps*1e6))
	CopyWithin(c.mem, dst, src, n)
	if c.cache != nil {
		c.cache.refresh(c.mem, dst, n)
	}
}

// CopyWithin copies n bytes inside m with Write's visibility effects and no
// timing (the caller has charged it).
func CopyWithin(m *Memory, dst, src Addr, n int) {
	m.copyWithin(dst, src, n)
	m.notify(dst, n)
}

// SpinUntil busy-waits: it runs check, whose loads through this CPU cost
// what they cost, until check returns true. Between polls that found
// nothing it does not simulate each iteration: it sleeps until one of the
// 8-byte words at watch is written to memory, then polls again. Watch the
// words check reads.
//
// The spinner keeps its poll phase (DESIGN.md: it sleeps until the watched
// line is written, plus the poll phase). One poll costs period = the
// simulated time the last check took, and it started at t0; the spinner
// would have polled again at t0 + k*period, k = 1, 2, ... A write at time w
// is read by the first poll that starts at or after w, so the spinner
// resumes at the first instant t0 + k*period >= w (exactly w when the check
// costs no simulated time). A write that lands while check runs makes it
// poll again at once: that is the next instant of the grid. Waiting costs no
// event per poll. This is exact for a check that reads the watched words
// first thing and costs the same every poll: polling for real would read
// the write at the same poll. A check whose loads of the watched words come
// after other work, or whose cost changes from poll to poll (a cached load
// that misses, then hits), wakes on the grid of its last poll's cost at the
// first poll instant at or after the write, which a polling loop may not.
// With SetPollingSpins, when the engine runs step by step
// (sim.Engine.SetStepByStep) the spinner does poll for real, check after
// check, as long as something else is pending (sim.Proc.SpinPolls); a check
// that costs no time still sleeps until a write (it cannot poll again at
// the same instant).
//
// A poll that read a watched word through a non-coherent cache whose copy
// is stale (memory has moved past it) would read the same copy forever:
// the run fails at once with a livelock report naming the spinner, reason
// and the stale address. Only words the last check read through the cache
// count (Load, Memcpy's source): a predicate reading the word with
// LoadUncached sees the write whatever stale copy the cache holds. A
// spinner nothing can wake also ends in a livelock report when nothing else
// is scheduled.
//
// why names the wait in deadlock and livelock reports, formatted only when
// one needs it (sim.Reason for a fixed text).
func (c *CPU) SpinUntil(p *sim.Proc, why fmt.Stringer, check func() bool, watch ...Addr) {
	c.spinUntil(p, "", why, check, watch)
}

func (c *CPU) spinUntil(p *sim.Proc, reason string, why fmt.Stringer, check func() bool, watch []Addr) {
	if c.polling {
		c.notInPoll("SpinUntil")
	}
	w := &c.spin
	if w.proc != nil { // a nested spin on the same CPU (another thread)
		w = &watcher{}
	}
	w.proc = p
	w.ranges = w.ranges[:0]
	for _, a := range watch {
		w.ranges = append(w.ranges, span{a: a, n: 8})
	}
	c.mem.addWatcher(w)
	c.spins = append(c.spins, w)
	defer func() {
		c.mem.removeWatcher(w)
		c.spins = removeWatcher(c.spins, w)
		w.proc = nil
	}()
	start := p.Now()
	for {
		w.fired = false
		w.cached = w.cached[:0]
		w.polled = p.Now()
		if check() {
			return
		}
		w.period = p.Now() - w.polled
		if w.fired {
			continue
		}
		a, stale := c.staleWatched(w)
		if !stale && w.period > 0 && c.pollSpins && p.SpinPolls() {
			continue // step by step: the next poll, for real
		}
		if stale {
			// The poll just read a cached copy that memory has moved past,
			// and polling again reads the same copy: no write can ever
			// reach this spinner.
			reason, why = c.failStale(p, reason, why, a, start), nil
		}
		w.blocked = true
		if why == nil {
			why = sim.Reason(reason) // once per spin, not per wait
		}
		p.BlockSpinning(why)
		w.blocked = false
	}
}

// SetPollingSpins makes this CPU's spins (SpinUntil) poll for real, check
// after check, when the engine runs step by step (sim.Engine.SetStepByStep),
// instead of sleeping until a watched word is written: for tests comparing
// a sleeping spin with the polling loop it stands for. Off by default: a
// spin whose check does work before reading the words it watches, or whose
// cost changes from poll to poll, times differently polling for real.
func (c *CPU) SetPollingSpins(on bool) { c.pollSpins = on }

// noteCached records, for a spin of p in progress on this CPU, that its
// poll read [a, a+n) through a non-coherent cache.
func (c *CPU) noteCached(p *sim.Proc, a Addr, n int) {
	if len(c.spins) == 0 || c.cache == nil || c.cfg.Cache.Coherent {
		return
	}
	for _, w := range c.spins {
		if w.proc == p {
			w.cached = append(w.cached, span{a: a, n: n})
			return
		}
	}
}

// failStale fails the run with a livelock report naming spinner p, what it
// waits on and the watched word a whose stale cached copy it reads, and
// returns the reason it blocks with. Out of line: spinUntil's frame stays
// small (it is on every parked spinner's stack).
//
//go:noinline
func (c *CPU) failStale(p *sim.Proc, reason string, why fmt.Stringer, a Addr, since sim.Time) string {
	if why != nil {
		reason = why.String()
	}
	reason = fmt.Sprintf("%s (reads %s:%#x through a non-coherent cache whose copy is stale)", reason, c.mem.name, a)
	c.eng.Fail(&sim.LivelockError{At: p.Now(), Waiting: []sim.Waiter{{Proc: p.Name(), Reason: reason, Since: since, Spinning: true}}})
	return reason
}

// staleWatched returns the watched word whose stale cached copy the
// spinner's last poll read, and reports whether there is one: a watched
// byte the poll read through the cache whose cached copy differs from
// memory.
func (c *CPU) staleWatched(w *watcher) (Addr, bool) {
	if c.cache == nil || c.cfg.Cache.Coherent {
		return 0, false
	}
	for _, r := range w.ranges {
		for _, s := range w.cached {
			lo, hi := max(r.a, s.a), min(r.a+Addr(r.n), s.a+Addr(s.n))
			if lo < hi && c.staleCopy(lo, int(hi-lo)) {
				return r.a, true
			}
		}
	}
	return 0, false
}

// staleCopy reports whether the cache holds a copy of some byte of
// [a, a+n) that differs from memory.
func (c *CPU) staleCopy(a Addr, n int) bool {
	lb := c.cache.lineBytes()
	for off := 0; off < n; {
		x := a + Addr(off)
		lo := int(x) & (lb - 1)
		k := min(n-off, lb-lo)
		if i := c.cache.peek(c.cache.line(x)); i >= 0 && !c.mem.equal(x, c.cache.slot(i)[lo:lo+k]) {
			return true
		}
		off += k
	}
	return false
}

func removeWatcher(ws []*watcher, w *watcher) []*watcher {
	for i, x := range ws {
		if x == w {
			copy(ws[i:], ws[i+1:])
			ws[len(ws)-1] = nil
			return ws[:len(ws)-1]
		}
	}
	return ws
}

// Peek reads the bytes at a into b as this CPU's program would see them
// (through its cache, possibly stale, and its own buffered stores) without
// timing or any effect on the cache: for workloads verifying what the
// application received, so that a stale line shows up as corruption.
func (c *CPU) Peek(a Addr, b []byte) {
	if c.polling {
		c.notInPoll("Peek")
	}
	c.view(a, b, false)
}

// Poke writes b at a as this CPU's program would, made visible at once and
// without timing: for workloads filling their buffers before they are sent.
// The CPU's own cached copies are updated, other CPUs' are not.
func (c *CPU) Poke(a Addr, b []byte) {
	if c.polling {
		c.notInPoll("Poke")
	}
	c.writeThrough(a, b)
}

// PokeShared is Poke of bytes the memory may share instead of copying
// (Memory.Share): b must never change afterwards. For workloads filling
// many buffers with windows of one pattern.
func (c *CPU) PokeShared(a Addr, b []byte) {
	c.mem.Share(a, b)
	if c.cache != nil {
		c.cache.update(a, b)
	}
}

// InvalidateRange drops this CPU's cached copies of the lines holding
// [a, a+n), as a library must after another processor wrote there behind a
// non-coherent cache: one InvalidateLine per line, or one whole-cache flush
// when that costs less (Cray's shmem_udcflush_line and shmem_udcflush). It
// does nothing without a cache or with a coherent one. When only p's
// program sees the cache (merges: no store buffer, no snooping bus, the
// engine merging p's steps) the lines are dropped at
// once and their times slept as one run of steps (sim.Proc.SleepSteps: the
// same events in the same order as line by line).
func (c *CPU) InvalidateRange(p *sim.Proc, a Addr, n int) {
	if c.polling {
		c.notInPoll("InvalidateRange")
	}
	if c.cache == nil || c.cfg.Cache.Coherent || n <= 0 {
		return
	}
	lb := Addr(c.cache.lineBytes())
	first, last := a&^(lb-1), (a+Addr(n)-1)&^(lb-1)
	lines := int((last-first)/lb) + 1
	if float64(lines)*c.cfg.Costs.UncachedLoadCycles >= c.cfg.Costs.FlushCycles {
		c.FlushCache(p)
		return
	}
	if !c.merges(p) {
		for l := first; l <= last; l += lb {
			c.InvalidateLine(p, l)
		}
		return
	}
	for l := first; l <= last; l += lb {
		c.cache.invalidate(c.cache.line(l))
	}
	p.SleepSteps(sim.Steps{N: lines, D: c.clock.Cycles(c.cfg.Costs.UncachedLoadCycles)})
}

// foldBlock is the most bytes of each range Fold holds a copy of at once.
const foldBlock = 32 << 10

// Fold does what Peek(acc, x); Peek(in, y); f(x, y); Poke(acc, x) do for
// two ranges of n bytes of whole elem-byte elements that do not overlap,
// f working element by element (x[i] = x[i] op y[i]): the same bytes seen
// (through the cache, possibly stale, and the buffered stores this CPU
// forwards), the same result in memory and in this CPU's cached lines, the
// same effect on the cache (each cached line of acc looked up in address
// order, then each of in) and the same wake-ups. It goes through the
// ranges in blocks of at most foldBlock bytes instead of holding a copy of
// each: a block's bytes do not change when an earlier block of acc is
// written, since the ranges do not overlap. Ranges that overlap, or are
// not whole elements, are folded whole.
func (c *CPU) Fold(acc, in Addr, n, elem int, f func(acc, in []byte)) {
	if n <= 0 {
		return
	}
	if elem <= 0 || n%elem != 0 || (acc < in+Addr(n) && in < acc+Addr(n)) {
		x, y := make([]byte, n), make([]byte, n)
		c.Peek(acc, x)
		c.Peek(in, y)
		f(x, y)
		c.Poke(acc, x)
		return
	}
	inPlace := c.seesMemory(acc, n) && c.seesMemory(in, n) && c.mem.inChunk(acc, n) &&
		int(acc)%elem == 0 && LineBytes%elem == 0
	if c.cache != nil { // the two Peeks' effect on the cache
		c.lookupCached(acc, n)
		c.lookupCached(in, n)
	}
	block := min(n, max(elem, foldBlock/elem*elem))
	if inPlace {
		// What the program sees is memory's bytes: acc's are combined
		// where memory keeps them. Its storage breaks only at lines and
		// pages (inChunk), on whole elements (acc and LineBytes are
		// multiples of elem).
		y := c.getBuf(block)
		c.mem.modify(acc, n, func(p []byte, off int) {
			for len(p) > 0 {
				k := min(len(p), block)
				f(p[:k], c.mem.view(in+Addr(off), y[:k]))
				if c.cache != nil {
					c.cache.update(acc+Addr(off), p[:k])
				}
				p, off = p[k:], off+k
			}
		})
		c.mem.notify(acc, n)
		c.release(y)
		return
	}
	x, y := c.getBuf(block), c.getBuf(block)
	for off := 0; off < n; off += block {
		k := min(block, n-off)
		c.see(acc+Addr(off), x[:k])
		c.see(in+Addr(off), y[:k])
		f(x[:k], y[:k])
		c.mem.put(acc+Addr(off), x[:k])
		if c.cache != nil {
			c.cache.update(acc+Addr(off), x[:k])
		}
	}
	c.mem.notify(acc, n)
	c.release(x, y)
}

// seesMemory reports whether this CPU's program sees memory's bytes at
// [a, a+n): no buffered store it forwards overlaps them, and every line a
// non-coherent cache holds there equals memory.
func (c *CPU) seesMemory(a Addr, n int) bool {
	if c.forwards(a, n) {
		return false
	}
	ca := c.cache
	if ca == nil || c.cfg.Cache.Coherent {
		return true
	}
	end := a + Addr(n)
	for _, i := range c.cachedLines(a, n) {
		la := Addr((ca.tags[i] - 1) << ca.shift)
		lo, hi := max(a, la), min(end, la+Addr(ca.lineBytes()))
		if !c.mem.equal(lo, ca.slot(i)[lo-la:hi-la]) {
			return false
		}
	}
	return true
}

// lookupCached looks up, in address order, every line of [a, a+n) the
// cache holds: Peek's effect on the cache.
func (c *CPU) lookupCached(a Addr, n int) {
	for _, i := range c.cachedLines(a, n) {
		c.cache.lookup(c.cache.tags[i] - 1)
	}
}

// see reads the bytes at a into b as Peek does (memory, a non-coherent
// cache's lines laid over it, then the buffered stores this CPU forwards),
// without any effect on the cache.
func (c *CPU) see(a Addr, b []byte) {
	c.mem.Read(a, b)
	if ca := c.cache; ca != nil && !c.cfg.Cache.Coherent {
		for _, i := range c.cachedLines(a, len(b)) {
			src, dst := ca.overlap(i, a, b)
			copy(dst, src)
		}
	}
	c.forward(a, b)
}

// PeekSame is Peek(a, b) for a check against want (len(want) == len(b)),
// skipping the copy where nothing needs comparing: when what this CPU's
// program would see at a is provably want itself (memory's live bytes
// there are want's own bytes, shared, not a copy: Memory.holds; no
// buffered store it forwards overlaps them; every line a non-coherent
// cache holds there equals want's bytes), it has only Peek's effect on
// the cache, leaves b alone and returns true. Otherwise it is Peek and
// returns false: b holds what the program sees, to be compared.
func (c *CPU) PeekSame(a Addr, b, want []byte) bool {
	if c.polling {
		c.notInPoll("Peek")
	}
	if len(want) != len(b) || !c.mem.holds(a, want) || c.forwards(a, len(b)) {
		c.Peek(a, b)
		return false
	}
	if c.cache == nil {
		return true
	}
	hits := c.cachedLines(a, len(b))
	if !c.cfg.Cache.Coherent {
		ca := c.cache
		for _, i := range hits {
			src, dst := ca.overlap(i, a, want)
			if k := min(len(src), len(dst)); string(src[:k]) != string(dst[:k]) {
				c.Peek(a, b) // a stale line: compared, and reported
				return false
			}
		}
	}
	for _, i := range hits { // Peek's effect: each cached line looked up, in address order
		c.cache.lookup(c.cache.tags[i] - 1)
	}
	return true
}

// cachedLines lists the cache slots holding lines of [a, a+n), in
// address order, without touching the cache (peekLines' scratch).
func (c *CPU) cachedLines(a Addr, n int) []int {
	ca := c.cache
	first, last := ca.line(a), ca.line(a+Addr(n)-1)
	hits := c.scratch().hits[:0]
	if ca.tags != nil && last-first+1 <= uint64(len(ca.tags)) {
		for line := first; line <= last; line++ {
			if i := ca.peek(line); i >= 0 {
				hits = append(hits, i)
			}
		}
	} else {
		for i, t := range ca.tags {
			if t != 0 && t-1 >= first && t-1 <= last {
				hits = append(hits, i)
			}
		}
		slices.SortFunc(hits, func(x, y int) int { return cmp.Compare(ca.tags[x], ca.tags[y]) })
	}
	c.scr.hits = hits
	return hits
}

// merges reports whether a run of this CPU's timed steps whose effects
// only p's program sees (its own cache's invalidations) can be done at
// once and their times slept as one run of steps: the engine merges p's
// steps (sim.Engine.Merging: not run step by step, p has the processor to
// itself and no explorer needs each step's footprint), and the CPU has no
// store buffer and no snooping bus.
func (c *CPU) merges(p *sim.Proc) bool {
	return c.cfg.StoreBuffer.Depth == 0 && c.bus == nil && c.eng.Merging(p)
}

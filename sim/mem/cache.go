package mem

// cache is a set-associative, write-through, no-write-allocate data cache
// holding real copies of lines, so that a non-coherent cache can return
// stale data. Replacement is least-recently-used within a set. Its arrays
// are allocated at the first fill, so a processor that never loads through
// its cache (most PEs of a large what-if machine) holds none.
type cache struct {
	shift uint32 // log2 of the line size (a power of two: Config.Validate)
	sets  int
	ways  int
	tags  []uint64 // line number + 1; 0 is invalid; nil until the first fill
	used  []uint64 // last-use stamp for LRU (nil when direct-mapped: one way has no choice)
	data  []byte   // sets*ways lines
	clock uint64
	// lazy lists runs of slots whose bytes are not in data yet: lines
	// filled from shared bytes (Memory.SharedView's, which never change),
	// copied in when a slot of the run is first used (slot) and dropped
	// when a later fill overwrites the run.
	lazy []lazyRun
}

// lazyRun is slots [lo, hi) holding b's lines, in order.
type lazyRun struct {
	lo, hi int
	b      []byte
}

// fillLazy makes slots [lo, hi) hold the lines of b (len(b) is
// (hi-lo)*lineBytes, shared bytes), copied in when first used. The caller
// has cleared the slots of other runs (overwrite).
func (c *cache) fillLazy(lo, hi int, b []byte) {
	c.lazy = append(c.lazy, lazyRun{lo: lo, hi: hi, b: b})
}

// settle copies in the lazy runs overlapping slots [lo, hi).
func (c *cache) settle(lo, hi int) {
	k := 0
	for _, r := range c.lazy {
		if r.lo < hi && lo < r.hi {
			copy(c.data[r.lo*c.lineBytes():], r.b)
			continue
		}
		c.lazy[k] = r
		k++
	}
	clear(c.lazy[k:])
	c.lazy = c.lazy[:k]
}

// overwrite cuts slots [lo, hi), about to be written whole, out of the
// lazy runs.
func (c *cache) overwrite(lo, hi int) {
	if len(c.lazy) == 0 {
		return
	}
	if lo == 0 && hi == len(c.tags) {
		clear(c.lazy)
		c.lazy = c.lazy[:0]
		return
	}
	lb := c.lineBytes()
	var buf [4]lazyRun
	rest := buf[:0] // the parts of runs cut, on the stack (a run or two)
	k := 0
	for _, r := range c.lazy {
		if r.hi <= lo || hi <= r.lo {
			c.lazy[k] = r
			k++
			continue
		}
		if r.lo < lo {
			rest = append(rest, lazyRun{lo: r.lo, hi: lo, b: r.b[:(lo-r.lo)*lb]})
		}
		if hi < r.hi {
			rest = append(rest, lazyRun{lo: hi, hi: r.hi, b: r.b[(hi-r.lo)*lb:]})
		}
	}
	clear(c.lazy[k:])
	c.lazy = append(c.lazy[:k], rest...)
}

// whole returns slot i for its bytes to be written whole: a lazy run
// holding it is cut, not copied in.
func (c *cache) whole(i int) []byte {
	c.overwrite(i, i+1)
	return c.data[i*c.lineBytes() : (i+1)*c.lineBytes()]
}

// bytes returns every slot's bytes (the lazy runs copied in).
func (c *cache) bytes() []byte {
	c.settle(0, len(c.tags))
	return c.data
}

func newCache(c CacheConfig) *cache {
	shift := uint(0)
	for 1<<shift < c.LineBytes {
		shift++
	}
	return &cache{shift: uint32(shift), sets: c.SizeBytes / c.LineBytes / c.Ways, ways: c.Ways}
}

// lineBytes is the line size.
func (c *cache) lineBytes() int { return 1 << c.shift }

// alloc allocates the arrays, empty.
func (c *cache) alloc() {
	n := c.sets * c.ways
	c.tags, c.data = make([]uint64, n), make([]byte, n*c.lineBytes())
	if c.ways > 1 {
		c.used = make([]uint64, n)
	}
}

func (c *cache) line(a Addr) uint64 { return uint64(a) >> c.shift }

// lookup returns the slot holding line, or -1.
func (c *cache) lookup(line uint64) int {
	if c.tags == nil {
		return -1
	}
	base := int(line%uint64(c.sets)) * c.ways
	for w := 0; w < c.ways; w++ {
		if c.tags[base+w] == line+1 {
			c.clock++
			if c.used != nil {
				c.used[base+w] = c.clock
			}
			return base + w
		}
	}
	return -1
}

// fill installs line from memory, evicting the least recently used way.
func (c *cache) fill(m *Memory, line uint64) int {
	victim := c.claim(line)
	c.load(m, victim, line)
	return victim
}

// load reads line from memory into slot i.
func (c *cache) load(m *Memory, i int, line uint64) {
	// A line may extend past the end of allocated memory: fill what exists.
	a, slot := Addr(line<<c.shift), c.whole(i)
	n := max(0, min(len(slot), m.Used()-int(a)))
	m.Read(a, slot[:n])
	clear(slot[n:])
}

// claim gives line the least recently used way of its set, as fill does,
// and returns it; the slot's bytes are the caller's to set.
func (c *cache) claim(line uint64) int {
	if c.tags == nil {
		c.alloc()
	}
	base := int(line%uint64(c.sets)) * c.ways
	victim := base
	for w := 0; w < c.ways && c.used != nil; w++ {
		if c.tags[base+w] == 0 {
			victim = base + w
			break
		}
		if c.used[base+w] < c.used[victim] {
			victim = base + w
		}
	}
	c.clock++
	c.tags[victim] = line + 1
	if c.used != nil {
		c.used[victim] = c.clock
	}
	return victim
}

func (c *cache) slot(i int) []byte {
	if len(c.lazy) > 0 {
		c.settle(i, i+1)
	}
	return c.data[i*c.lineBytes() : (i+1)*c.lineBytes()]
}

// overlap returns the part of slot i's line and of b, the bytes from
// address a, that cover the same addresses, from where they begin to
// overlap (copy or compare up to the shorter length).
func (c *cache) overlap(i int, a Addr, b []byte) (src, dst []byte) {
	la := Addr((c.tags[i] - 1) << c.shift)
	src, dst = c.slot(i), b
	if la < a {
		return src[a-la:], dst
	}
	return src, dst[la-a:]
}

// update writes b at a into the lines this cache holds (its own stores).
func (c *cache) update(a Addr, b []byte) {
	if c.tags == nil || len(b) == 0 {
		return
	}
	if c.spans(a, len(b)) {
		// More lines than the cache holds (a workload filling a 10 MB
		// buffer): visit the slots, not the lines.
		end := a + Addr(len(b))
		c.eachCached(a, len(b), func(i int, la Addr) {
			lo, hi := max(a, la), min(end, la+Addr(c.lineBytes()))
			copy(c.slot(i)[lo-la:hi-la], b[lo-a:hi-a])
		})
		return
	}
	if c.ways == 1 {
		// Direct-mapped: the lines' sets follow each other, in at most
		// two runs of consecutive tags (the sets wrap around).
		first, last := c.line(a), c.line(a+Addr(len(b))-1)
		sets := uint64(c.sets)
		for line := first; line <= last; {
			set := int(line % sets)
			end := min(last, line+sets-uint64(set)-1) // the run's last line
			tags, want := c.tags[set:set+int(end-line)+1], line+1
			for k := 0; k < len(tags); k, want = k+1, want+1 {
				if tags[k] != want { // most lines are not cached
					continue
				}
				la := Addr((want - 1) << c.shift)
				lo, hi := max(a, la), min(a+Addr(len(b)), la+Addr(c.lineBytes()))
				copy(c.slot(set + k)[lo-la:hi-la], b[lo-a:hi-a])
			}
			line = end + 1
		}
		return
	}
	for len(b) > 0 {
		line := c.line(a)
		off := int(a) & (c.lineBytes() - 1)
		n := min(len(b), c.lineBytes()-off)
		if i := c.peek(line); i >= 0 {
			copy(c.slot(i)[off:], b[:n])
		}
		a += Addr(n)
		b = b[n:]
	}
}

// refresh reloads from m the bytes of [a, a+n) that this cache holds
// (after a copy that bypassed it).
func (c *cache) refresh(m *Memory, a Addr, n int) {
	if c.tags == nil || n <= 0 {
		return
	}
	if c.spans(a, n) {
		end := a + Addr(n)
		c.eachCached(a, n, func(i int, la Addr) {
			lo, hi := max(a, la), min(end, la+Addr(c.lineBytes()))
			m.Read(lo, c.slot(i)[lo-la:hi-la])
		})
		return
	}
	for n > 0 {
		line := c.line(a)
		off := int(a) & (c.lineBytes() - 1)
		k := min(n, c.lineBytes()-off)
		if i := c.peek(line); i >= 0 {
			m.Read(a, c.slot(i)[off:off+k])
		}
		a += Addr(k)
		n -= k
	}
}

// peek is lookup without touching the LRU state.
func (c *cache) peek(line uint64) int {
	if c.tags == nil {
		return -1
	}
	base := int(line%uint64(c.sets)) * c.ways
	for w := 0; w < c.ways; w++ {
		if c.tags[base+w] == line+1 {
			return base + w
		}
	}
	return -1
}

func (c *cache) invalidate(line uint64) {
	if i := c.peek(line); i >= 0 {
		c.tags[i] = 0
	}
}

func (c *cache) flush() { clear(c.tags) }

// spans reports whether [a, a+n) (n > 0) covers more lines than the cache
// has slots.
func (c *cache) spans(a Addr, n int) bool {
	return c.line(a+Addr(n)-1)-c.line(a)+1 > uint64(len(c.tags))
}

// eachCached calls f for every slot holding a line of [a, a+n) (n > 0),
// with the line's address, in slot order, without touching the LRU state:
// for updates of distinct lines, whose order does not matter.
func (c *cache) eachCached(a Addr, n int, f func(slot int, la Addr)) {
	first, last := c.line(a), c.line(a+Addr(n)-1)
	for i, t := range c.tags {
		if t != 0 && t-1 >= first && t-1 <= last {
			f(i, Addr((t-1)<<c.shift))
		}
	}
}

package mem

// cache is a set-associative, write-through, no-write-allocate data cache
// holding real copies of lines, so that a non-coherent cache can return
// stale data. Replacement is least-recently-used within a set.
type cache struct {
	lineBytes int
	shift     uint
	sets      int
	ways      int
	tags      []uint64 // line number + 1; 0 is invalid
	used      []uint64 // last-use stamp for LRU
	data      []byte   // sets*ways lines
	clock     uint64
}

func newCache(c CacheConfig) *cache {
	n := c.SizeBytes / c.LineBytes
	shift := uint(0)
	for 1<<shift < c.LineBytes {
		shift++
	}
	return &cache{
		lineBytes: c.LineBytes, shift: shift, sets: n / c.Ways, ways: c.Ways,
		tags: make([]uint64, n), used: make([]uint64, n), data: make([]byte, n*c.LineBytes),
	}
}

func (c *cache) line(a Addr) uint64 { return uint64(a) >> c.shift }

// lookup returns the slot holding line, or -1.
func (c *cache) lookup(line uint64) int {
	base := int(line%uint64(c.sets)) * c.ways
	for w := 0; w < c.ways; w++ {
		if c.tags[base+w] == line+1 {
			c.clock++
			c.used[base+w] = c.clock
			return base + w
		}
	}
	return -1
}

// fill installs line from memory, evicting the least recently used way.
func (c *cache) fill(m *Memory, line uint64) int {
	base := int(line%uint64(c.sets)) * c.ways
	victim := base
	for w := 0; w < c.ways; w++ {
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
	c.used[victim] = c.clock
	// A line may extend past the end of allocated memory: fill what exists.
	a, slot := Addr(line<<c.shift), c.slot(victim)
	n := max(0, min(len(slot), m.Used()-int(a)))
	m.Read(a, slot[:n])
	clear(slot[n:])
	return victim
}

func (c *cache) slot(i int) []byte { return c.data[i*c.lineBytes : (i+1)*c.lineBytes] }

// update writes b at a into the lines this cache holds (its own stores).
func (c *cache) update(a Addr, b []byte) {
	for len(b) > 0 {
		line := c.line(a)
		off := int(a) & (c.lineBytes - 1)
		n := min(len(b), c.lineBytes-off)
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
	for n > 0 {
		line := c.line(a)
		off := int(a) & (c.lineBytes - 1)
		k := min(n, c.lineBytes-off)
		if i := c.peek(line); i >= 0 {
			m.Read(a, c.slot(i)[off:off+k])
		}
		a += Addr(k)
		n -= k
	}
}

// peek is lookup without touching the LRU state.
func (c *cache) peek(line uint64) int {
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

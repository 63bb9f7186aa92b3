package mem

// The line cache: where the lines a memory's reads found lately live, so
// that a read of a word whose line was found before is a compare and a
// copy, not a chunk look-up and a search of the sparse lines. A poll over
// many peers' flags (PVM's sweep, ScaMPI's scan of its channels, a
// spinner's predicate) reads the same few hundred words over and over.
//
// An entry holds where a run of a line's bytes lives: the line's storage,
// or nothing when the run reads as zeros. A write into storage that exists
// changes no entry (the entry sees its bytes: it points at them). What
// moves bytes or changes what a range reads as drops the entries of the
// lines it touches (forget): storage allocated where zeros were, lines
// gathered into a page or a flat chunk, chunks flattened, shared bytes
// placed over a range. Shared bytes cut out of a range need nothing: no
// entry covers bytes under a ref.

// 1<<lineCacheBits is the number of entries: 8 KiB a memory, room for a
// scan of 128 rings' flags and the words beside them.
const lineCacheBits = 9

// readsBeforeCache is how many reads a memory serves before it gets a line
// cache: most memories of a large machine see a few, and a million PEs'
// memories should not each carry one.
const readsBeforeCache = 1024

// lineView is one entry, 16 bytes: bytes [lo, hi) of line ln-1 (0: empty)
// are those of b (the line's storage; nil: they read as zeros). Only a
// line that lies in one chunk has one, and only a line number that fits
// (a memory of up to 256 GiB).
type lineView struct {
	b      *[LineBytes]byte
	ln     uint32
	lo, hi uint8
}

// lineSlot is the entry line ln maps to (a multiplicative hash: rings of
// slots a power of two apart must not all fall on one entry).
func lineSlot(ln uint64) uint64 { return (ln * 0x9E3779B97F4A7C15) >> (64 - lineCacheBits) }

// cachedRead copies the n bytes at a (within one line) into b from the
// line cache and reports whether it could: false when the memory has no
// cache yet, or the bytes are not one run of storage or zeros.
func (m *Memory) cachedRead(a Addr, b []byte) bool {
	if m.rc == nil {
		if m.reads++; m.reads < readsBeforeCache {
			return false
		}
		m.rc = new([1 << lineCacheBits]lineView)
		m.rcLo = 1<<32 - 1
	}
	ln, lo := uint64(a)>>lineShift, int(a)&(LineBytes-1)
	e := &m.rc[lineSlot(ln)]
	if uint64(e.ln) != ln+1 || lo < int(e.lo) || lo+len(b) > int(e.hi) {
		if !m.lineRun(e, ln, lo) || lo+len(b) > int(e.hi) {
			return false
		}
	}
	switch {
	case e.b == nil:
		clear(b)
	case len(b) == 8: // a word: a move, not a call of memmove
		*(*[8]byte)(b) = *(*[8]byte)(e.b[lo:])
	default:
		copy(b, e.b[lo:])
	}
	return true
}

// cachedWrite writes b at a (within one line) into the storage a cache
// entry names, and reports whether it could.
func (m *Memory) cachedWrite(a Addr, b []byte) bool {
	if m.rc == nil {
		return false
	}
	ln, lo := uint64(a)>>lineShift, int(a)&(LineBytes-1)
	e := &m.rc[lineSlot(ln)]
	if uint64(e.ln) != ln+1 || e.b == nil || lo < int(e.lo) || lo+len(b) > int(e.hi) {
		return false
	}
	copy(e.b[lo:], b)
	return true
}

// lineRun fills e with the longest run of line ln's bytes around offset
// off that lies under no shared bytes, in storage or in zeros, and reports
// whether there is one: the line lies in one chunk, off is not under
// shared bytes, and ln fits an entry.
func (m *Memory) lineRun(e *lineView, ln uint64, off int) bool {
	start := Addr(ln << lineShift)
	end := start + LineBytes
	if uint64(end) > uint64(m.used) || ln+1 > 1<<32-1 {
		return false
	}
	c := &m.chunks[m.find(start)]
	if end > c.end {
		return false
	}
	x := start + Addr(off)
	lo, hi := start, end
	if c.hasRefs() {
		rs := c.sp.refs
		for i := c.firstRef(lo); i < len(rs) && rs[i].a < hi; i++ {
			r := &rs[i]
			switch {
			case r.end() <= x:
				lo = max(lo, r.end())
			case r.a <= x:
				return false // x is shared bytes
			default:
				hi = r.a
			}
		}
	}
	var b *[LineBytes]byte
	switch pg := c.page(int(start>>pageShift) - int(c.base>>pageShift)); {
	case c.flat != nil:
		b = (*[LineBytes]byte)(c.flat[start-c.base:])
	case pg != nil:
		b = (*[LineBytes]byte)(pg[int(start)&(PageBytes-1):])
	default:
		if ls := c.ls(); len(ls) > 0 {
			if j := c.findLine(ln); j < len(ls) && ls[j].n == ln {
				b = ls[j].b
			}
		}
	}
	*e = lineView{b: b, ln: uint32(ln + 1), lo: uint8(lo - start), hi: uint8(hi - start)}
	m.rcLo, m.rcHi = min(m.rcLo, uint32(ln+1)), max(m.rcHi, uint32(ln+1))
	return true
}

// forget drops the line cache's entries of the lines [a, end) touches:
// what they read as, or where it lives, is about to change.
func (m *Memory) forget(a, end Addr) {
	if m.rc == nil || end <= a {
		return
	}
	first, last := uint64(a)>>lineShift, uint64(end-1)>>lineShift
	if last+1 < uint64(m.rcLo) || first+1 > uint64(m.rcHi) {
		return // no entry was ever filled for a line there
	}
	if last-first >= 1<<lineCacheBits {
		for i := range m.rc {
			if e := &m.rc[i]; uint64(e.ln)-first-1 <= last-first { // first < ln-1+1 <= last+1
				e.ln = 0
			}
		}
		return
	}
	for ln := first; ln <= last; ln++ {
		if e := &m.rc[lineSlot(ln)]; uint64(e.ln) == ln+1 {
			e.ln = 0
		}
	}
}

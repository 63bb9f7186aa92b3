// Package mem holds the memory building blocks machines share: a node's
// byte-addressed memory with segments, and a CPU's view of it (an optional
// cache, coherent or not; an optional store buffer that drains in order or
// reordered; fences; atomics; bulk copies; spin-waits that honour the cache;
// word sets, whose scan by uncached loads is one timed operation and whose
// wait sleeps until one of the words is ready).
package mem

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/msgsim/msgsim/sim"
)

// Addr is a byte address within one Memory.
type Addr uint64

// Segment is a named, allocated range of a Memory.
type Segment struct {
	Name string
	Base Addr
	Size int
}

// End is the first address past the segment.
func (s Segment) End() Addr { return s.Base + Addr(s.Size) }

// Addr returns the address at offset off within the segment.
func (s Segment) Addr(off int) Addr { return s.Base + Addr(off) }

// Memory is one node's byte-addressable memory. Writes that become globally
// visible (a store buffer draining, a vector move, a remote put) go through
// Write, which wakes the processes spinning on the written bytes.
//
// The bytes follow the data: each segment (and each alignment gap between
// segments) is a chunk of its own, allocated when first written (reads of
// untouched bytes see zeros and allocate nothing): a chunk of up to PageBytes
// as one buffer of its size, a larger one in pages of PageBytes. A page
// region of a larger chunk that only sees small writes (a word or a block
// in a per-peer array of a large machine) holds just the LineBytes lines
// written, until it holds sparseLines of them or a write spans lines; then
// it becomes a whole page. Growing the memory never copies it. A chunk
// whose bytes are asked for as one slice across pages (Bytes) becomes one
// flat buffer, once.
type Memory struct {
	name     string
	used     int // end of the last segment: the allocated address space
	capacity int
	segs     []Segment
	chunks   []chunk // by increasing base, covering [0, used) without holes
	last     int     // index of the chunk the last access found
	resident int     // bytes of storage allocated to chunks
	watchers []*watcher
	sets     []*WordSet // word sets of this memory's CPUs (CPU.NewWordSet)
	// eng, set by the first CPU on the memory, is told every access while
	// a schedule explorer runs (sim.Engine.TouchRange: the footprint of
	// the running step); key names the memory there.
	eng *sim.Engine
	key uint64
	// segs0 and chunks0 hold the first segments and chunks in the memory
	// itself: most memories hold a few (a PE's library blocks and its
	// buffers), and a machine of a million PEs would otherwise allocate
	// two small slices per PE. A memory is not copied once it holds a
	// segment (segs and chunks may point here).
	segs0   [4]Segment
	chunks0 [4]chunk
}

// PageBytes is the size of a memory page: the unit in which a chunk's bytes
// are allocated when first written.
const PageBytes = 1 << pageShift

// pageShift: 64 KiB pages, so that pages are few large objects for the Go
// heap (4 KiB pages made the kernel and the allocator work 4 x harder on
// t3d-fig5) while segments smaller than a page cost only their size.
const pageShift = 16

// LineBytes is the size of the small pages (lines) that hold the bytes of
// a sparsely written page region.
const LineBytes = 1 << lineShift

const lineShift = 6

// sparseLines is how many lines a page region holds before it becomes a
// whole page (2 KiB of lines for a 64 KiB page); smallLines is how many a
// chunk of at most a page holds before it becomes flat.
const (
	sparseLines = 32
	smallLines  = 8
)

// chunk is the storage of one segment or one gap: flat (one buffer for
// [base, end)) or pages (pages[i] holds absolute page base>>pageShift + i,
// nil until written; a page region not yet a whole page may hold lines,
// sorted by absolute line number).
type chunk struct {
	base, end Addr
	flat      []byte
	pages     []*[PageBytes]byte
	sp        *sparse // lines and shared bytes; nil without (most chunks)
}

// sparse is a chunk's storage other than flat and whole pages.
type sparse struct {
	lines []line
	// shared, when not nil, is what the chunk holds at shareAt (zeros
	// around it): a caller's bytes, never written here, copied into the
	// chunk's own storage at the first write (Share). The chunk has no
	// storage of its own meanwhile.
	shared  []byte
	shareAt Addr
	// copies are ranges of the chunk's own storage that hold a copy of
	// shared bytes (WriteShared where they could not be shared), each
	// dropped when a byte of its range is written: SharedView returns the
	// shared bytes for them, so that a copy out of a buffer that received
	// them (a pool slot, a system buffer) shares them again.
	// They do not overlap and are sorted by address, so that a write
	// finds the ones it overlaps by a binary search.
	copies []copied
	seq    uint64 // copies remembered so far
}

// copied is a range [a, a+len(b)) of a chunk's storage that holds b, the
// seq-th remembered in its chunk.
type copied struct {
	a   Addr
	b   []byte
	seq uint64
}

// end is the first address past the copy.
func (k *copied) end() Addr { return k.a + Addr(len(k.b)) }

// firstCopy is the index of the first of the chunk's copies that ends
// after a.
func (c *chunk) firstCopy(a Addr) int {
	ks := c.sp.copies
	lo, hi := 0, len(ks)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ks[mid].end() <= a {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// maxCopies bounds a chunk's copies (the oldest is forgotten first), and
// minCopied is the least length worth remembering.
const (
	maxCopies = 128
	minCopied = 512
)

// ls is the chunk's lines.
func (c *chunk) ls() []line {
	if c.sp == nil {
		return nil
	}
	return c.sp.lines
}

// setLines replaces the chunk's lines.
func (c *chunk) setLines(l []line) {
	if len(l) == 0 {
		l = nil
	}
	if c.sp == nil {
		if l == nil {
			return
		}
		c.sp = &sparse{}
	}
	c.sp.lines = l
	if l == nil && c.sp.shared == nil && c.sp.copies == nil {
		c.sp = nil
	}
}

// sharedBytes is the chunk's shared bytes and where they are (nil: none).
func (c *chunk) sharedBytes() ([]byte, Addr) {
	if c.sp == nil {
		return nil, 0
	}
	return c.sp.shared, c.sp.shareAt
}

// Share makes the len(b) bytes at a read as b without copying it, as
// Write(a, b) would (spinners watching them wake): b is shared and must
// never change; the bytes are copied into the memory's own storage when
// written (copy on write): a page at a time (the page written) in a chunk
// larger than a page, the whole chunk in a smaller one or when asked for
// by Bytes across pages. Workloads fill many buffers with windows of one
// pattern this way (every sender of an all-to-one sends its own 10 MB).
// When the bytes cannot be shared (share), it is Write(a, b).
func (m *Memory) Share(a Addr, b []byte) {
	m.check(a, len(b))
	if !m.share(a, b) {
		m.put(a, b)
	}
	m.notify(a, len(b))
}

// WriteShared is Write of bytes that never change (a slice SharedView
// returned, or one given to Share): the memory shares them instead of
// copying them when it can (share), so that a payload delivered from PE
// to PE (a broadcast's tree, a put into a system buffer and the copy out
// of it) is one copy of the bytes, not one per PE. Reads see the same
// bytes either way.
func (m *Memory) WriteShared(a Addr, b []byte) {
	m.touch(a, len(b))
	m.check(a, len(b))
	if !m.share(a, b) {
		m.put(a, b)
		m.remember(a, b)
	}
	m.notify(a, len(b))
}

// remember records that [a, a+len(b)) now holds a copy of the shared
// bytes b, when the range lies in one chunk and is long enough to matter.
func (m *Memory) remember(a Addr, b []byte) {
	if len(b) < minCopied {
		return
	}
	c := &m.chunks[m.find(a)]
	if a+Addr(len(b)) > c.end {
		return
	}
	if c.sp != nil && c.sp.copies != nil {
		c.forget(a, a+Addr(len(b))) // what the range held before
	}
	if c.sp == nil {
		c.sp = &sparse{}
	}
	if len(c.sp.copies) >= maxCopies { // forget the oldest
		old := 0
		for i, k := range c.sp.copies {
			if k.seq < c.sp.copies[old].seq {
				old = i
			}
		}
		c.sp.copies = slices.Delete(c.sp.copies, old, old+1)
	}
	c.sp.seq++
	c.sp.copies = slices.Insert(c.sp.copies, c.firstCopy(a), copied{a: a, b: b, seq: c.sp.seq})
}

// written forgets the copies of shared bytes that [a, a+n) overlaps, in
// the chunks it spans: their bytes may have changed.
func (m *Memory) written(a Addr, n int) {
	for x, end := a, a+Addr(n); x < end; {
		c := &m.chunks[m.find(x)]
		if c.sp != nil && c.sp.copies != nil {
			c.forget(x, min(end, c.end))
		}
		x = c.end
	}
}

// forget drops the chunk's copies that overlap [a, end).
func (c *chunk) forget(a, end Addr) {
	i := c.firstCopy(a)
	j := i
	for j < len(c.sp.copies) && c.sp.copies[j].a < end {
		j++
	}
	if i == j {
		return
	}
	c.sp.copies = slices.Delete(c.sp.copies, i, j)
	if len(c.sp.copies) == 0 {
		c.sp.copies = nil
		if c.sp.shared == nil && c.sp.lines == nil {
			c.sp = nil
		}
	}
}

// share makes [a, a+len(b)) read as b without copying it, and reports
// whether it could: the range lies inside one chunk that holds nothing yet,
// or that holds only shared bytes which the range covers (they are all
// overwritten) or continues (b follows them in the same array, as a
// payload delivered in pieces does). Otherwise nothing changes.
func (m *Memory) share(a Addr, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := &m.chunks[m.find(a)]
	end := a + Addr(len(b))
	if end > c.end || c.flat != nil || c.pages != nil {
		return false
	}
	if c.sp == nil {
		c.sp = &sparse{shared: b, shareAt: a}
		return true
	}
	sh, at := c.sp.shared, c.sp.shareAt
	if sh == nil || c.sp.lines != nil {
		return false
	}
	switch {
	case a <= at && end >= at+Addr(len(sh)): // covers them
		c.sp.shared, c.sp.shareAt = b, a
		return true
	case a == at+Addr(len(sh)) && follows(sh, b): // continues them
		c.sp.shared = sh[:len(sh)+len(b)]
		return true
	}
	return false
}

// follows reports whether b starts where sh ends, in the same array.
func follows(sh, b []byte) bool {
	return cap(sh) > len(sh) && &sh[:len(sh)+1][len(sh)] == &b[0]
}

// SharedView returns the n bytes at a when they are shared bytes (Share,
// WriteShared), without copying them, and true; else nil and false. The
// slice must never be written: a machine that reads a payload to deliver
// it elsewhere (a put) may hold it instead of a copy, since the memory
// copies shared bytes before they change.
func (m *Memory) SharedView(a Addr, n int) ([]byte, bool) {
	if n <= 0 || uint64(a)+uint64(n) > uint64(m.used) {
		return nil, false
	}
	c := &m.chunks[m.find(a)]
	if c.sp == nil {
		return nil, false
	}
	sh, at := c.sp.shared, c.sp.shareAt
	if sh == nil || a < at || a+Addr(n) > at+Addr(len(sh)) || c.ownPages(a, n) {
		i := c.firstCopy(a)
		if i == len(c.sp.copies) || c.sp.copies[i].a > a || a+Addr(n) > c.sp.copies[i].end() {
			return nil, false
		}
		sh, at = c.sp.copies[i].b, c.sp.copies[i].a
	}
	m.touch(a, n)
	off := int(a - at)
	return sh[off : off+n], true
}

// sharedPiece is piece's answer at a, for at most k bytes, in a chunk
// holding the shared bytes sh at at and zeros around them.
func sharedPiece(sh []byte, at, a Addr, k int) ([]byte, int) {
	switch end := at + Addr(len(sh)); {
	case a < at: // zeros before the shared bytes
		return nil, min(k, int(at-a))
	case a < end:
		off := int(a - at)
		k = min(k, len(sh)-off)
		return sh[off : off+k : off+k], k
	}
	return nil, k // zeros after them
}

// ownPages reports whether any page of [a, a+n) in c holds its own bytes.
func (c *chunk) ownPages(a Addr, n int) bool {
	if c.pages == nil {
		return false
	}
	first := int(a>>pageShift) - int(c.base>>pageShift)
	last := int((a+Addr(n)-1)>>pageShift) - int(c.base>>pageShift)
	for _, p := range c.pages[first : last+1] {
		if p != nil {
			return true
		}
	}
	return false
}

// unshare copies a small chunk's shared bytes into its own storage.
func (m *Memory) unshare(c *chunk) {
	b, a := c.sharedBytes()
	c.sp.shared = nil // a shared chunk has no lines
	if c.sp.copies == nil {
		c.sp = nil
	}
	sh, at := b, a
	for len(b) > 0 {
		p, k := m.piece(a, len(b), true)
		copy(p, b)
		a, b = a+Addr(k), b[k:]
	}
	m.remember(at, sh) // the storage now holds a copy of them
}

// line is a LineBytes line of a sparsely written page region.
type line struct {
	n uint64 // absolute line number: address >> lineShift
	b *[LineBytes]byte
}

// findLine returns the index of the first line numbered at least n.
func (c *chunk) findLine(n uint64) int {
	ls := c.ls()
	lo, hi := 0, len(ls)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ls[mid].n < n {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// pageLines returns the range [i, j) of c.lines in the page region of
// absolute page pg.
func (c *chunk) pageLines(pg uint64) (int, int) {
	per := uint64(PageBytes / LineBytes)
	return c.findLine(pg * per), c.findLine((pg + 1) * per)
}

// NewMemory returns an empty memory that can hold capacity bytes of segments
// (0: unlimited).
func NewMemory(name string, capacity int) *Memory {
	m := new(Memory)
	InitMemory(m, name, capacity)
	return m
}

// InitMemory makes *m an empty memory, as NewMemory returns one, in place:
// a machine of many PEs keeps their memories in one array (one allocation,
// not one per PE). m must not be copied afterwards.
func InitMemory(m *Memory, name string, capacity int) {
	*m = Memory{name: name, capacity: capacity}
}

// Name is the memory's name (the node it belongs to).
func (m *Memory) Name() string { return m.name }

// Used is the number of bytes allocated to segments.
func (m *Memory) Used() int { return m.used }

// Resident is the number of bytes of storage the memory holds: the pages
// written so far and the chunks made flat. It grows with the bytes touched,
// not with the bytes allocated.
func (m *Memory) Resident() int { return m.resident }

// Segments lists the allocated segments in allocation order.
func (m *Memory) Segments() []Segment { return m.segs }

// Alloc allocates a zeroed segment of size bytes aligned to align (a power of
// two, 0 or 1 for none). It fails when the memory's capacity would be exceeded.
func (m *Memory) Alloc(name string, size, align int) (Segment, error) {
	if size < 0 {
		return Segment{}, fmt.Errorf("memory %s: segment %q: negative size %d", m.name, name, size)
	}
	base := m.used
	if align > 1 {
		base = (base + align - 1) &^ (align - 1)
	}
	if m.capacity > 0 && base+size > m.capacity {
		return Segment{}, fmt.Errorf("memory %s: segment %q of %d bytes does not fit: %d of %d bytes in use", m.name, name, size, m.used, m.capacity)
	}
	if m.segs == nil { // most memories hold a few segments: no allocation
		m.segs, m.chunks = m.segs0[:0], m.chunks0[:0]
	}
	if base > m.used {
		m.chunks = append(m.chunks, chunk{base: Addr(m.used), end: Addr(base)})
	}
	if size > 0 {
		m.chunks = append(m.chunks, chunk{base: Addr(base), end: Addr(base + size)})
	}
	m.used = base + size
	s := Segment{Name: name, Base: Addr(base), Size: size}
	m.segs = append(m.segs, s)
	return s, nil
}

func (m *Memory) check(a Addr, n int) {
	if n < 0 || uint64(a)+uint64(n) > uint64(m.used) {
		panic(fmt.Sprintf("memory %s: access [%#x, +%d) outside allocated memory (%d bytes)", m.name, a, n, m.used))
	}
}

// find returns the index of the chunk holding a (a < m.used).
func (m *Memory) find(a Addr) int {
	if i := m.last; i < len(m.chunks) && m.chunks[i].base <= a && a < m.chunks[i].end {
		return i
	}
	lo, hi := 0, len(m.chunks)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if m.chunks[mid].base <= a {
			lo = mid
		} else {
			hi = mid
		}
	}
	m.last = lo
	return lo
}

// piece returns the longest run of live bytes at a, at most n long, that is
// contiguous in storage. When the run's page is not allocated, it returns
// nil and the run's length if alloc is false (the bytes are zeros), or
// allocates the page if alloc is true.
func (m *Memory) piece(a Addr, n int, alloc bool) ([]byte, int) {
	c := &m.chunks[m.find(a)]
	k := min(n, int(c.end-a))
	if sh, at := c.sharedBytes(); sh != nil {
		if c.end-c.base <= PageBytes { // a small chunk: copied whole at the first write
			if alloc {
				m.unshare(c)
				return m.piece(a, n, true)
			}
			return sharedPiece(sh, at, a, k)
		}
		// A larger one: a page written holds its own copy of the shared
		// bytes in it; the other pages still read the shared bytes.
		off := int(a) & (PageBytes - 1)
		k = min(k, PageBytes-off)
		i := int(a>>pageShift) - int(c.base>>pageShift)
		if c.pages != nil && c.pages[i] != nil {
			return c.pages[i][off : off+k : off+k], k
		}
		if !alloc {
			return sharedPiece(sh, at, a, k)
		}
		if c.pages == nil {
			c.pages = make([]*[PageBytes]byte, int((c.end-1)>>pageShift)-int(c.base>>pageShift)+1)
		}
		page := new([PageBytes]byte)
		pb := a &^ (PageBytes - 1)
		m.resident += PageBytes
		c.pages[i] = page
		if lo, hi := max(pb, at), min(pb+PageBytes, at+Addr(len(sh))); lo < hi {
			copy(page[lo-pb:], sh[lo-at:hi-at])
			m.remember(lo, sh[lo-at:hi-at]) // the page holds a copy of them
		}
		return page[off : off+k : off+k], k
	}
	if c.flat == nil && c.pages == nil && c.end-c.base <= sparseLines*LineBytes {
		if !alloc {
			return nil, k
		}
		c.flat = make([]byte, int(c.end-c.base))
		m.resident += len(c.flat)
	}
	if c.flat != nil {
		off := int(a - c.base)
		return c.flat[off : off+k : off+k], k
	}
	small := c.end-c.base <= PageBytes // becomes flat, not paged
	off := int(a) & (PageBytes - 1)
	if !small {
		k = min(k, PageBytes-off)
	}
	i := int(a>>pageShift) - int(c.base>>pageShift)
	if c.pages != nil && c.pages[i] != nil {
		return c.pages[i][off : off+k : off+k], k
	}
	// The page region is not a whole page: its bytes are in lines, or zeros.
	ln := uint64(a) >> lineShift
	lo := int(a) & (LineBytes - 1)
	j := c.findLine(ln)
	ls := c.ls()
	if j < len(ls) && ls[j].n == ln {
		k = min(k, LineBytes-lo)
		return ls[j].b[lo : lo+k : lo+k], k
	}
	if !alloc {
		if j < len(ls) { // zeros up to the next line written
			k = min(k, int(ls[j].n<<lineShift-uint64(a)))
		}
		return nil, k
	}
	pg := uint64(a) >> pageShift
	first, last := c.pageLines(pg)
	limit := sparseLines
	if small {
		// A chunk of at most a page becomes flat sooner: its size is
		// bounded, and flat bytes are the fastest to reach.
		first, last, limit = 0, len(ls), smallLines
	}
	if lo+k <= LineBytes && last-first < limit {
		// A small write into a sparse region: one more line.
		ls = slices.Insert(ls, j, line{n: ln, b: new([LineBytes]byte)})
		c.setLines(ls)
		m.resident += LineBytes
		k = min(k, LineBytes-lo)
		return ls[j].b[lo : lo+k : lo+k], k
	}
	if small {
		// The chunk becomes flat, its lines copied in.
		c.flat = make([]byte, int(c.end-c.base))
		for _, l := range ls {
			start, b := Addr(l.n<<lineShift), l.b[:]
			if start < c.base { // the chunk's first line starts before it
				b, start = b[c.base-start:], c.base
			}
			copy(c.flat[start-c.base:], b)
		}
		m.resident += len(c.flat) - len(ls)*LineBytes
		c.setLines(nil)
		off := int(a - c.base)
		return c.flat[off : off+k : off+k], k
	}
	// The region becomes a whole page, its lines copied in.
	if c.pages == nil {
		c.pages = make([]*[PageBytes]byte, int((c.end-1)>>pageShift)-int(c.base>>pageShift)+1)
	}
	page := new([PageBytes]byte)
	for _, l := range ls[first:last] {
		copy(page[int(l.n<<lineShift)&(PageBytes-1):], l.b[:])
	}
	m.resident += PageBytes - (last-first)*LineBytes
	c.setLines(slices.Delete(ls, first, last))
	c.pages[i] = page
	return page[off : off+k : off+k], k
}

// Bytes returns the live bytes at [a, a+n) without any timing or
// visibility effect: for workloads filling and verifying buffers, and for
// machine models (DMA engines) that account time themselves. A range that
// spans pages makes its chunks flat (once), so prefer Read and Write for
// sparse accesses.
func (m *Memory) Bytes(a Addr, n int) []byte {
	m.touch(a, n)
	m.check(a, n)
	if n == 0 {
		return []byte{}
	}
	b, k := m.piece(a, n, true)
	if k != n {
		m.flatten(a, n)
		b, _ = m.piece(a, n, true)
	}
	m.written(a, n) // the caller may write them
	return b
}

// flatten replaces the chunks holding [a, a+n) with one flat chunk.
func (m *Memory) flatten(a Addr, n int) {
	i, j := m.find(a), m.find(a+Addr(n)-1)
	base, end := m.chunks[i].base, m.chunks[j].end
	flat := make([]byte, int(end-base))
	for x := base; x < end; {
		b, k := m.piece(x, int(end-x), false)
		copy(flat[x-base:], b)
		x += Addr(k)
	}
	for _, c := range m.chunks[i : j+1] {
		m.resident -= len(c.flat) + len(c.ls())*LineBytes
		for _, p := range c.pages {
			if p != nil {
				m.resident -= PageBytes
			}
		}
	}
	m.resident += len(flat)
	m.chunks[i] = chunk{base: base, end: end, flat: flat}
	m.chunks = slices.Delete(m.chunks, i+1, j+1)
	m.last = i
}

// touch tells an exploring engine that the running step accesses [a, a+n).
func (m *Memory) touch(a Addr, n int) {
	if m.eng != nil {
		m.eng.TouchRange(m.key, uint64(a), n)
	}
}

// Read copies memory at a into b (no timing).
func (m *Memory) Read(a Addr, b []byte) {
	m.touch(a, len(b))
	if p := m.fast(a, len(b)); p != nil { // the common case: a word or a line in the last chunk used
		copy(b, p)
		return
	}
	if p := m.fastShared(a, len(b)); p != nil { // a line of a shared payload
		copy(b, p)
		return
	}
	m.check(a, len(b))
	for len(b) > 0 {
		p, k := m.piece(a, len(b), false)
		if p == nil {
			clear(b[:k])
		} else {
			copy(b, p)
		}
		a, b = a+Addr(k), b[k:]
	}
}

// Write makes b globally visible at a and wakes spinners watching any of
// those bytes (no timing: the caller has charged it).
func (m *Memory) Write(a Addr, b []byte) {
	m.put(a, b)
	m.notify(a, len(b))
}

// fast returns the live bytes [a, a+n) when they lie in one allocated page
// (or flat chunk) of one chunk (the last access's, or found), else nil.
func (m *Memory) fast(a Addr, n int) []byte {
	if n <= 0 || uint64(a)+uint64(n) > uint64(m.used) {
		return nil
	}
	c := &m.chunks[m.find(a)]
	if a+Addr(n) > c.end {
		return nil
	}
	if c.flat != nil {
		off := int(a - c.base)
		return c.flat[off : off+n]
	}
	off := int(a) & (PageBytes - 1)
	if c.pages != nil && off+n <= PageBytes {
		if pg := c.pages[int(a>>pageShift)-int(c.base>>pageShift)]; pg != nil {
			return pg[off : off+n]
		}
	}
	// A word in a line of a sparse region (a shared chunk has no lines).
	if lo := int(a) & (LineBytes - 1); c.sp != nil && lo+n <= LineBytes {
		ln := uint64(a) >> lineShift
		if j := c.findLine(ln); j < len(c.sp.lines) && c.sp.lines[j].n == ln {
			return c.sp.lines[j].b[lo : lo+n]
		}
	}
	return nil
}

// fastShared returns the shared bytes [a, a+n) when the chunk the last
// access found shares them, else nil. Never written through.
func (m *Memory) fastShared(a Addr, n int) []byte {
	if m.last >= len(m.chunks) || n <= 0 {
		return nil
	}
	c := &m.chunks[m.last]
	if c.sp == nil || c.sp.shared == nil {
		return nil
	}
	sh, at := c.sp.shared, c.sp.shareAt
	if a < at || a+Addr(n) > at+Addr(len(sh)) || c.ownPages(a, n) {
		return nil
	}
	off := int(a - at)
	return sh[off : off+n]
}

// put stores b at a, without visibility effects.
func (m *Memory) put(a Addr, b []byte) {
	m.touch(a, len(b))
	if p := m.fast(a, len(b)); p != nil {
		copy(p, b)
		if c := &m.chunks[m.last]; c.sp != nil && c.sp.copies != nil {
			c.forget(a, a+Addr(len(b)))
		}
		return
	}
	m.check(a, len(b))
	n := len(b)
	for x := a; len(b) > 0; {
		p, k := m.piece(x, len(b), true)
		copy(p, b)
		x, b = x+Addr(k), b[k:]
	}
	m.written(a, n) // after the pieces: unsharing a chunk remembers its copy
}

// inChunk reports whether [a, a+n) (n > 0) lies in one chunk: its storage
// breaks only at lines and pages.
func (m *Memory) inChunk(a Addr, n int) bool {
	if n <= 0 || uint64(a)+uint64(n) > uint64(m.used) {
		return false
	}
	return a+Addr(n) <= m.chunks[m.find(a)].end
}

// modify calls f(p, off) for each run p of the live bytes [a, a+n) that is
// contiguous in storage, allocated as put allocates them (off: p's offset
// from a), for f to change in place, then forgets the copies of shared
// bytes the range overlaps, as put does. No visibility effect: the caller
// notifies.
func (m *Memory) modify(a Addr, n int, f func(p []byte, off int)) {
	m.touch(a, n)
	m.check(a, n)
	for off := 0; off < n; {
		p, k := m.piece(a+Addr(off), n-off, true)
		f(p[:k], off)
		off += k
	}
	m.written(a, n)
}

// view returns the live bytes [a, a+len(b)) without copying them when they
// are contiguous in storage (not to be written), else reads them into b.
func (m *Memory) view(a Addr, b []byte) []byte {
	if p := m.fast(a, len(b)); p != nil {
		m.touch(a, len(b))
		return p
	}
	if p := m.fastShared(a, len(b)); p != nil {
		m.touch(a, len(b))
		return p
	}
	m.Read(a, b)
	return b
}

// copyWithin copies n bytes from src to dst inside m, without visibility
// effects, piece by piece (through a copy when the ranges overlap).
func (m *Memory) copyWithin(dst, src Addr, n int) {
	m.touch(src, n)
	m.check(src, n)
	m.check(dst, n)
	if dst < src+Addr(n) && src < dst+Addr(n) {
		b := make([]byte, n)
		m.Read(src, b)
		m.put(dst, b)
		return
	}
	for n > 0 {
		s, k := m.piece(src, n, false)
		if s == nil {
			d, kd := m.piece(dst, k, false)
			if d != nil {
				m.written(dst, kd)
				clear(d)
			}
			k = kd
		} else {
			m.put(dst, s)
		}
		src, dst, n = src+Addr(k), dst+Addr(k), n-k
	}
}

// equal reports whether the bytes at a are b.
func (m *Memory) equal(a Addr, b []byte) bool {
	m.touch(a, len(b))
	m.check(a, len(b))
	for len(b) > 0 {
		p, k := m.piece(a, len(b), false)
		if p == nil {
			for _, x := range b[:k] {
				if x != 0 {
					return false
				}
			}
		} else if string(p) != string(b[:k]) {
			return false
		}
		a, b = a+Addr(k), b[k:]
	}
	return true
}

// Load64 reads a little-endian 64-bit word (no timing).
func (m *Memory) Load64(a Addr) uint64 {
	var b [8]byte
	m.Read(a, b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Store64 writes a little-endian 64-bit word with Write's visibility effects.
func (m *Memory) Store64(a Addr, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.Write(a, b[:])
}

// watcher is a spinning process's interest in some byte ranges of a memory.
type watcher struct {
	proc    *sim.Proc
	ranges  []span
	fired   bool // a watched byte was written since the watch was armed
	blocked bool // the process is blocked in its spin, not polling
	// The poll grid: the last poll started at polled and one poll costs
	// period; the spinner would poll again at polled + k*period.
	polled, period sim.Time
	// cached lists the bytes the last poll read through a non-coherent
	// cache (its Loads and Memcpy sources), for the staleness check.
	cached []span
}

// nextPoll is the first poll instant at or after t on the watcher's grid:
// polled + k*period for the smallest k >= 1 with that instant >= t. A poll
// that cost no simulated time has no grid: t itself.
func (w *watcher) nextPoll(t sim.Time) sim.Time {
	if w.period <= 0 {
		return t
	}
	next := w.polled + w.period
	if t <= next {
		return next
	}
	k := (t - w.polled + w.period - 1) / w.period
	return w.polled + k*w.period
}

// wake resumes a blocked spinner at its first poll instant at or after now,
// the poll that reads the write that woke it.
func (w *watcher) wake() {
	w.blocked = false
	w.proc.WakeAt(w.nextPoll(w.proc.Now()))
}

type span struct {
	a Addr
	n int
}

func (m *Memory) addWatcher(w *watcher) { m.watchers = append(m.watchers, w) }

func (m *Memory) removeWatcher(w *watcher) { m.watchers = removeWatcher(m.watchers, w) }

func (m *Memory) notify(a Addr, n int) {
	for _, w := range m.watchers {
		for _, r := range w.ranges {
			if a < r.a+Addr(r.n) && r.a < a+Addr(n) {
				w.fired = true
				if w.blocked {
					w.wake()
				}
				break
			}
		}
	}
	for _, s := range m.sets {
		s.written(a, n)
	}
}

// Region is a range of bytes in a memory: a user buffer, a slot, a packet.
type Region struct {
	Mem  *Memory
	Addr Addr
	Len  int
}

// Bytes returns the region's live bytes (no timing).
func (r Region) Bytes() []byte { return r.Mem.Bytes(r.Addr, r.Len) }

// Slice returns the sub-region [off, off+n).
func (r Region) Slice(off, n int) Region { return Region{Mem: r.Mem, Addr: r.Addr + Addr(off), Len: n} }

// holds reports whether the live bytes [a, a+len(want)) are want's own
// bytes: every byte is read from shared bytes (Share, WriteShared) at the
// very place in the very array want is (not a copy of them, not zeros).
// Such bytes are equal to want by construction. No effect but touch.
func (m *Memory) holds(a Addr, want []byte) bool {
	n := len(want)
	if n == 0 || uint64(a)+uint64(n) > uint64(m.used) {
		return false
	}
	m.touch(a, n)
	for i := 0; i < n; {
		p, k := m.piece(a+Addr(i), n-i, false)
		if p == nil || &p[0] != &want[i] {
			return false
		}
		i += k
	}
	return true
}

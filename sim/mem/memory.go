// Package mem holds the memory building blocks machines share: a node's
// byte-addressed memory with segments, and a CPU's view of it (an optional
// cache, coherent or not; an optional store buffer that drains in order or
// reordered; fences; atomics; bulk copies; spin-waits that honour the cache;
// polls whose run of uncached loads is one timed operation, replayed when a
// write lands on a word it read).
//
// Layer: imports sim only; machines, stacks and workloads build on it.
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
// flat buffer, once. Bytes that never change (Share, WriteShared) are held
// by reference, not copied: a chunk's refs are ranges that read as a
// caller's slice, over whatever its storage holds there (copy on write:
// a write cuts the range out of its refs).
type Memory struct {
	name     string
	used     int // end of the last segment: the allocated address space
	capacity int
	segs     []Segment
	chunks   []chunk // by increasing base, covering [0, used) without holes
	last     int32   // index of the chunk the last access found
	// near holds the chunks other look-ups found lately (index+1, 0:
	// none), most recent first: an access pattern that moves among a few
	// segments (a pool's headers, a list buffer, a user buffer) finds
	// them here instead of by a binary search over every segment.
	near     [3]int32
	resident int // bytes of storage allocated to chunks
	watchers []*watcher
	polls    []*pollState // merged polls of this memory's CPUs (CPU.Poll)
	held     *storeRun    // a CPU's merged store run whose stores it holds aside (CPU.StoreRun)
	// footprint is that of the engine of the first CPU on the memory
	// (Hooks.Footprint; attached: there is one): it is told every access
	// while a schedule explorer runs (the footprint of the running
	// step); key names the memory there.
	key       uint64
	footprint *sim.Footprint
	// segs0 and chunks0 hold the first segments and chunks in the memory
	// itself: most memories hold a few (a PE's library blocks and its
	// buffers), and a machine of a million PEs would otherwise allocate
	// two small slices per PE. A memory is not copied once it holds a
	// segment (segs and chunks may point here).
	segs0   [4]Segment
	chunks0 [4]chunk
	// rc is the line cache (linecache.go), nil until the memory has
	// served readsBeforeCache reads; [rcLo, rcHi] bounds the line numbers
	// (plus one) its entries were ever filled for.
	rc         *[1 << lineCacheBits]lineView
	reads      uint32
	rcLo, rcHi uint32
	attached   bool
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
// sorted by absolute line number). sp comes right after the bounds: an
// access reads the three together (one host cache line).
type chunk struct {
	base, end Addr
	sp        *sparse // lines and shared bytes; nil without (most chunks)
	flat      []byte
	// pages is nil until a chunk larger than a page holds a whole page
	// (behind a pointer: a million PEs' few small chunks never need it).
	pages *[]*[PageBytes]byte
}

// page is the chunk's i-th whole page, nil if it has none there.
func (c *chunk) page(i int) *[PageBytes]byte {
	if c.pages == nil {
		return nil
	}
	return (*c.pages)[i]
}

// sparse is a chunk's storage other than flat and whole pages, and its
// refs.
type sparse struct {
	lines []line
	// refs are ranges of the chunk that read as shared bytes (Share,
	// WriteShared): a caller's bytes that never change, held instead of a
	// copy. A ref hides what the chunk's storage holds under it; a write
	// cuts its range out of the refs first (cutRefs), keeping the bytes a
	// partial write leaves in storage where the caller needs them (Bytes,
	// modify). Refs do not overlap and are sorted by address, so that an
	// access finds the ones it overlaps by a binary search.
	refs []ref
	hint int // index of the ref the last look-up found (firstRef)
}

// ref is a range [a, a+len(b)) of a chunk that reads as b.
type ref struct {
	a Addr
	b []byte
}

// end is the first address past the ref.
func (r *ref) end() Addr { return r.a + Addr(len(r.b)) }

// firstRef is the index of the first of the chunk's refs that ends after
// a (len(refs) if none).
func (c *chunk) firstRef(a Addr) int {
	if c.sp == nil {
		return 0
	}
	rs := c.sp.refs
	if len(rs) == 0 || rs[len(rs)-1].end() <= a {
		return len(rs) // past every ref: a payload delivered in pieces, appended
	}
	// Accesses move forward through a chunk (a scan of pool slots, a
	// payload delivered in pieces): the last answer or the next one.
	for i := c.sp.hint; i < min(c.sp.hint+2, len(rs)); i++ {
		if rs[i].end() > a && (i == 0 || rs[i-1].end() <= a) {
			c.sp.hint = i
			return i
		}
	}
	lo, hi := 0, len(rs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if rs[mid].end() <= a {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	c.sp.hint = lo
	return lo
}

// hasRefs reports whether the chunk holds any ref.
func (c *chunk) hasRefs() bool { return c.sp != nil && c.sp.refs != nil }

// refOverlaps reports whether a ref of the chunk overlaps [a, end).
func (c *chunk) refOverlaps(a, end Addr) bool {
	if !c.hasRefs() {
		return false
	}
	i := c.firstRef(a)
	return i < len(c.sp.refs) && c.sp.refs[i].a < end
}

// maxRefs bounds a chunk's refs (the lowest is copied into storage
// first), and minRef is the least length held by reference in a chunk
// that holds anything already (an untouched chunk takes any).
const (
	maxRefs = 256
	minRef  = 512
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
	c.tidy()
}

// tidy drops the chunk's sparse part when it holds nothing.
func (c *chunk) tidy() {
	if c.sp != nil && c.sp.lines == nil && c.sp.refs == nil {
		c.sp = nil
	}
}

// Share makes the len(b) bytes at a read as b without copying it, as
// Write(a, b) would (spinners watching them wake): b is shared and must
// never change; a write into them cuts them out of the chunk's refs (copy
// on write: the bytes the write leaves are still b's). Workloads fill many
// buffers with windows of one pattern this way (every sender of an
// all-to-one sends its own 10 MB). When the bytes cannot be shared
// (share), it is Write(a, b).
func (m *Memory) Share(a Addr, b []byte) {
	m.look(a, len(b))
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
	m.Share(a, b)
}

// share makes [a, a+len(b)) read as b without copying it, and reports
// whether it could: the range lies inside one chunk, and is at least
// minRef long or the chunk holds nothing yet and is larger than a line (a
// ref costs about 100 bytes: the few bytes of a smaller chunk are cheaper
// copied, as a million PEs' one-word broadcast buffers are). The range is cut out of the
// chunk's refs and becomes one of them, joined to a ref it continues (b
// follows it in the same array, as a payload delivered in pieces does).
// Otherwise nothing changes.
func (m *Memory) share(a Addr, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := &m.chunks[m.find(a)]
	end := a + Addr(len(b))
	if end > c.end || (len(b) < minRef && (c.end-c.base <= LineBytes || c.flat != nil || c.pages != nil || c.sp != nil)) {
		return false
	}
	m.forget(a, end)
	if c.sp == nil {
		c.sp = &sparse{refs: []ref{{a: a, b: b}}}
		return true
	}
	m.cutRefs(c, a, end, false)
	if c.sp == nil {
		c.sp = &sparse{}
	}
	rs := c.sp.refs
	i := c.firstRef(a)
	switch {
	case i > 0 && rs[i-1].end() == a && follows(rs[i-1].b, b):
		r := &rs[i-1]
		r.b = r.b[:len(r.b)+len(b)]
		if i < len(rs) && rs[i].a == end && follows(r.b, rs[i].b) {
			r.b = r.b[:len(r.b)+len(rs[i].b)]
			c.sp.refs = slices.Delete(rs, i, i+1)
		}
		return true
	case i < len(rs) && rs[i].a == end && follows(b, rs[i].b):
		rs[i] = ref{a: a, b: b[:len(b)+len(rs[i].b)]}
		return true
	}
	if len(rs) >= maxRefs { // the lowest goes into storage
		r := rs[0]
		m.cutRefs(c, r.a, r.end(), true)
		if c.sp == nil {
			c.sp = &sparse{}
		}
		rs, i = c.sp.refs, c.firstRef(a)
	}
	c.sp.refs = slices.Insert(rs, i, ref{a: a, b: b})
	return true
}

// follows reports whether b starts where sh ends, in the same array, and
// sh can be extended over it.
func follows(sh, b []byte) bool {
	return len(b) > 0 && cap(sh)-len(sh) >= len(b) && &sh[:len(sh)+1][len(sh)] == &b[0]
}

// unref cuts [a, a+n) out of the refs of the chunks it spans, before a
// write there: keep copies the bytes they held there into storage first,
// for a write that does not overwrite all of them.
func (m *Memory) unref(a Addr, n int, keep bool) {
	for x, end := a, a+Addr(n); x < end; {
		c := &m.chunks[m.find(x)]
		if c.hasRefs() {
			m.cutRefs(c, x, min(end, c.end), keep)
		}
		x = c.end
	}
}

// cutRefs cuts [a, end) out of c's refs (what they hold outside it stays
// shared); keep copies what they held in it into c's storage.
func (m *Memory) cutRefs(c *chunk, a, end Addr, keep bool) {
	if !c.hasRefs() {
		return
	}
	rs := c.sp.refs
	i := c.firstRef(a)
	j := i
	for j < len(rs) && rs[j].a < end {
		j++
	}
	if i == j {
		return
	}
	var kept []ref
	if keep {
		for _, r := range rs[i:j] {
			lo, hi := max(r.a, a), min(r.end(), end)
			kept = append(kept, ref{a: lo, b: r.b[lo-r.a : hi-r.a]})
		}
	}
	var rest [2]ref
	k := 0
	if first := rs[i]; first.a < a {
		rest[k] = ref{a: first.a, b: first.b[:a-first.a]}
		k++
	}
	if last := rs[j-1]; last.end() > end {
		rest[k] = ref{a: end, b: last.b[end-last.a:]}
		k++
	}
	rs = slices.Replace(rs, i, j, rest[:k]...)
	if len(rs) == 0 {
		rs = nil
	}
	c.sp.refs = rs
	c.tidy()
	for _, r := range kept {
		m.store(r.a, r.b)
	}
}

// SharedView returns the n bytes at a when they are shared bytes (Share,
// WriteShared), without copying them, and true; else nil and false. The
// slice must never be written: a machine that reads a payload to deliver
// it elsewhere (a put) may hold it instead of a copy, since the memory
// never writes shared bytes.
func (m *Memory) SharedView(a Addr, n int) ([]byte, bool) {
	if n <= 0 || uint64(a)+uint64(n) > uint64(m.used) {
		return nil, false
	}
	m.look(a, n)
	c := &m.chunks[m.find(a)]
	b := c.refAt(a, n)
	if b == nil {
		return nil, false
	}
	m.touch(a, n)
	return b, true
}

// refAt returns the bytes [a, a+n) (n > 0) when one ref of c holds them
// all, else nil. Never written through.
func (c *chunk) refAt(a Addr, n int) []byte {
	if !c.hasRefs() {
		return nil
	}
	i := c.firstRef(a)
	if i == len(c.sp.refs) {
		return nil
	}
	r := &c.sp.refs[i]
	if r.a > a || a+Addr(n) > r.end() {
		return nil
	}
	off := int(a - r.a)
	return r.b[off : off+n]
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

// Describe names address a for people: the memory, the segment holding
// it and the offset in it ("rank0 [context ids]+8"), or the bare address.
func (m *Memory) Describe(a Addr) string {
	for _, sg := range m.segs {
		if a >= sg.Base && a < sg.End() {
			return fmt.Sprintf("%s [%s]+%d", m.name, sg.Name, a-sg.Base)
		}
	}
	return fmt.Sprintf("%s %#x", m.name, uint64(a))
}

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
	if i := int(m.last); i < len(m.chunks) && m.chunks[i].base <= a && a < m.chunks[i].end {
		return i
	}
	return m.findFar(a)
}

// findFar is find when a is not in the last chunk found: one of the near
// chunks, or a binary search. The chunk found becomes the last, and the
// last becomes the most recent near one.
func (m *Memory) findFar(a Addr) int {
	prev := m.last + 1
	for k, j := range m.near {
		if i := int(j) - 1; i >= 0 && i < len(m.chunks) && m.chunks[i].base <= a && a < m.chunks[i].end {
			copy(m.near[1:k+1], m.near[:k])
			m.near[0] = prev
			m.last = int32(i)
			return i
		}
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
	copy(m.near[1:], m.near[:len(m.near)-1])
	m.near[0] = prev
	m.last = int32(lo)
	return lo
}

// piece returns the longest run of live bytes at a, at most n long, that is
// contiguous in storage. When the run's page is not allocated, it returns
// nil and the run's length if alloc is false (the bytes are zeros), or
// allocates the page if alloc is true.
func (m *Memory) piece(a Addr, n int, alloc bool) ([]byte, int) {
	c := &m.chunks[m.find(a)]
	k := min(n, int(c.end-a))
	if c.hasRefs() {
		// A ref's bytes hide the storage under them; a run of storage
		// stops at the next ref. A writer (alloc) has cut its range out
		// of the refs first (unref).
		if i := c.firstRef(a); i < len(c.sp.refs) {
			r := &c.sp.refs[i]
			if r.a <= a {
				if alloc {
					panic(fmt.Sprintf("memory %s: storage asked for at %#x under shared bytes (a bug in the model)", m.name, a))
				}
				off := int(a - r.a)
				k = min(k, len(r.b)-off)
				return r.b[off : off+k : off+k], k
			}
			k = min(k, int(r.a-a))
		}
	}
	if c.flat == nil && c.pages == nil && c.end-c.base <= sparseLines*LineBytes {
		if !alloc {
			return nil, k
		}
		c.flat = make([]byte, int(c.end-c.base))
		m.resident += len(c.flat)
		m.forget(c.base, c.end)
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
	if pg := c.page(i); pg != nil {
		return pg[off : off+k : off+k], k
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
		m.forget(Addr(ln<<lineShift), Addr(ln+1)<<lineShift)
		ls = slices.Insert(ls, j, line{n: ln, b: new([LineBytes]byte)})
		c.setLines(ls)
		m.resident += LineBytes
		k = min(k, LineBytes-lo)
		return ls[j].b[lo : lo+k : lo+k], k
	}
	if small {
		// The chunk becomes flat, its lines copied in.
		m.forget(c.base, c.end)
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
		pages := make([]*[PageBytes]byte, int((c.end-1)>>pageShift)-int(c.base>>pageShift)+1)
		c.pages = &pages
	}
	m.forget(max(c.base, Addr(pg<<pageShift)), min(c.end, Addr(pg+1)<<pageShift))
	page := new([PageBytes]byte)
	for _, l := range ls[first:last] {
		copy(page[int(l.n<<lineShift)&(PageBytes-1):], l.b[:])
	}
	m.resident += PageBytes - (last-first)*LineBytes
	c.setLines(slices.Delete(ls, first, last))
	(*c.pages)[i] = page
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
	m.unref(a, n, true) // the caller may write them
	b, k := m.piece(a, n, true)
	if k != n {
		m.flatten(a, n)
		b, _ = m.piece(a, n, true)
	}
	return b
}

// flatten replaces the chunks holding [a, a+n) with one flat chunk.
func (m *Memory) flatten(a Addr, n int) {
	i, j := m.find(a), m.find(a+Addr(n)-1)
	base, end := m.chunks[i].base, m.chunks[j].end
	flat := make([]byte, int(end-base))
	var refs []ref // kept: they hide the storage under them
	for x := base; x < end; {
		b, k := m.piece(x, int(end-x), false)
		copy(flat[x-base:], b)
		x += Addr(k)
	}
	for _, c := range m.chunks[i : j+1] {
		if c.hasRefs() {
			refs = append(refs, c.sp.refs...)
		}
		m.resident -= len(c.flat) + len(c.ls())*LineBytes
		if c.pages != nil {
			for _, p := range *c.pages {
				if p != nil {
					m.resident -= PageBytes
				}
			}
		}
	}
	m.resident += len(flat)
	m.chunks[i] = chunk{base: base, end: end, flat: flat}
	if refs != nil {
		m.chunks[i].sp = &sparse{refs: refs}
	}
	m.chunks = slices.Delete(m.chunks, i+1, j+1)
	m.forget(base, end)
	m.last, m.near = int32(i), [len(m.near)]int32{} // indices past i moved
}

// touch tells an exploring engine that the running step accesses [a, a+n).
func (m *Memory) touch(a Addr, n int) {
	m.footprint.TouchRange(m.key, uint64(a), n)
	m.look(a, n)
}

// look: [a, a+n) is about to be read or written; a held store run makes
// the stores visible that are due (storeRun.touched).
func (m *Memory) look(a Addr, n int) {
	if m.held != nil {
		m.held.touched(a, n)
	}
}

// Read copies memory at a into b (no timing).
func (m *Memory) Read(a Addr, b []byte) {
	m.touch(a, len(b))
	if lo := int(a) & (LineBytes - 1); lo+len(b) <= LineBytes && len(b) > 0 {
		if m.cachedRead(a, b) {
			return
		}
	}
	if p := m.fast(a, len(b)); p != nil { // the common case: a word or a line in the last chunk used
		copy(b, p)
		return
	}
	if p := m.fastRef(a, len(b)); p != nil { // a line of a shared payload
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
	if a+Addr(n) > c.end || c.refOverlaps(a, a+Addr(n)) {
		return nil
	}
	if c.flat != nil {
		off := int(a - c.base)
		return c.flat[off : off+n]
	}
	off := int(a) & (PageBytes - 1)
	if c.pages != nil && off+n <= PageBytes {
		if pg := (*c.pages)[int(a>>pageShift)-int(c.base>>pageShift)]; pg != nil {
			return pg[off : off+n]
		}
	}
	// A word in a line of a sparse region.
	if lo := int(a) & (LineBytes - 1); c.sp != nil && lo+n <= LineBytes {
		ln := uint64(a) >> lineShift
		if j := c.findLine(ln); j < len(c.sp.lines) && c.sp.lines[j].n == ln {
			return c.sp.lines[j].b[lo : lo+n]
		}
	}
	return nil
}

// fastRef returns the shared bytes [a, a+n) when one ref of the chunk the
// last access found holds them, else nil. Never written through.
func (m *Memory) fastRef(a Addr, n int) []byte {
	if int(m.last) >= len(m.chunks) || n <= 0 {
		return nil
	}
	return m.chunks[m.last].refAt(a, n)
}

// put stores b at a, without visibility effects.
func (m *Memory) put(a Addr, b []byte) {
	m.touch(a, len(b))
	if lo := int(a) & (LineBytes - 1); lo+len(b) <= LineBytes && len(b) > 0 && m.cachedWrite(a, b) {
		return
	}
	if p := m.fast(a, len(b)); p != nil {
		copy(p, b)
		return
	}
	m.check(a, len(b))
	m.unref(a, len(b), false) // overwritten
	m.store(a, b)
}

// store writes b into the storage at a, where no ref is.
func (m *Memory) store(a Addr, b []byte) {
	for len(b) > 0 {
		p, k := m.piece(a, len(b), true)
		copy(p, b)
		a, b = a+Addr(k), b[k:]
	}
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
// from a), for f to change in place; shared bytes there are copied into
// storage first, a modifyBlock at a time, each just before f changes it
// (while the host's cache holds it). Runs break at lines, pages and
// multiples of modifyBlock from a. No visibility effect: the caller
// notifies.
func (m *Memory) modify(a Addr, n int, f func(p []byte, off int)) {
	m.touch(a, n)
	m.check(a, n)
	for off := 0; off < n; {
		end := min(n, off+modifyBlock)
		m.unref(a+Addr(off), end-off, true)
		for off < end {
			p, k := m.piece(a+Addr(off), end-off, true)
			f(p[:k], off)
			off += k
		}
	}
}

// modifyBlock is how much of a range modify copies out of shared bytes
// before f changes it: well within a host's L2 cache.
const modifyBlock = 16 << 10

// view returns the live bytes [a, a+len(b)) without copying them when they
// are contiguous in storage (not to be written), else reads them into b.
func (m *Memory) view(a Addr, b []byte) []byte {
	if p := m.fast(a, len(b)); p != nil {
		m.touch(a, len(b))
		return p
	}
	if p := m.fastRef(a, len(b)); p != nil {
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
			m.unref(dst, k, false)
			d, kd := m.piece(dst, k, false)
			if d != nil {
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
		if w.watches(a, a+Addr(n)) {
			w.fired = true
			if w.blocked {
				w.wake()
			}
		}
	}
	for _, pl := range m.polls {
		if pl.armed {
			pl.written(a, n)
		}
	}
}

// watches reports whether the watcher watches a byte of [lo, hi).
func (w *watcher) watches(lo, hi Addr) bool {
	for _, r := range w.ranges {
		if lo < r.a+Addr(r.n) && r.a < hi {
			return true
		}
	}
	return false
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

package mem

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSparseAllocationFollowsTheData: a 1 GiB segment of which 100 words
// are written holds storage for the pages written, not for the segment, and
// the Go heap grows accordingly.
func TestSparseAllocationFollowsTheData(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMemory("node0", 0)
	s, err := m.Alloc("big", 1<<30, 8)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 100
	for i := range writes {
		m.Store64(s.Addr(i*(s.Size/writes)&^7), uint64(i+1))
	}
	for i := range writes {
		if got := m.Load64(s.Addr(i * (s.Size / writes) &^ 7)); got != uint64(i+1) {
			t.Fatalf("word %d: got %d, want %d", i, got, i+1)
		}
	}
	if got := m.Load64(s.Addr(8)); got != 0 {
		t.Errorf("untouched word reads %d, want 0", got)
	}
	if m.Used() != 1<<30 {
		t.Errorf("Used = %d, want 1 GiB", m.Used())
	}
	if r := m.Resident(); r > writes*LineBytes {
		t.Errorf("Resident = %d bytes after %d word writes, want at most %d (one line each)", r, writes, writes*LineBytes)
	}
	// Words written close together fill a page region with lines until it
	// becomes a whole page, keeping what the lines held.
	for i := range 2 * sparseLines {
		m.Store64(s.Addr(PageBytes+i*LineBytes), uint64(i+7))
	}
	for i := range 2 * sparseLines {
		if got := m.Load64(s.Addr(PageBytes + i*LineBytes)); got != uint64(i+7) {
			t.Fatalf("dense word %d: got %d, want %d", i, got, i+7)
		}
	}
	if r := m.Resident(); r > writes*LineBytes+PageBytes {
		t.Errorf("Resident = %d bytes, want at most %d (the lines and one whole page)", r, writes*LineBytes+PageBytes)
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 64<<20 {
		t.Errorf("heap grew by %d bytes for %d touched pages", grew, writes)
	}
	runtime.KeepAlive(m)
}

// TestPagedMemoryMatchesFlat: random reads, writes, copies and Bytes views
// over segments, gaps and page boundaries see what one flat array would.
// Several seeds: shared bytes are held by reference (refs), cut by every
// write that overlaps them.
func TestPagedMemoryMatchesFlat(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { pagedMatchesFlat(t, seed) })
	}
}

func pagedMatchesFlat(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(1+seed, 2))
	m := NewMemory("node0", 0)
	var segs []Segment
	for i, size := range []int{3, 100, PageBytes, 5 * PageBytes / 2, 17, 3 * PageBytes, 1, 3000, 40000} {
		sg, err := m.Alloc("s", size, 1<<(i%7))
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, sg)
	}
	ref := make([]byte, m.Used())
	// Some segments start out shared (copy on write): a window of them.
	for i, sg := range segs {
		if i%2 == 1 {
			b := make([]byte, sg.Size-i)
			randomBytes(r, b)
			m.Share(sg.Addr(i/2), b)
			copy(ref[int(sg.Base)+i/2:], b)
		}
	}
	// pat is bytes that never change, written shared (WriteShared), in
	// pieces that may continue the last one; shared lists what was written
	// so, for SharedView to look at.
	pat := make([]byte, 4*PageBytes)
	randomBytes(r, pat)
	type span struct{ a, n int }
	var shared []span
	lastA, lastO, lastN := 0, 0, 0
	views := 0
	for step := range 4000 {
		a := r.IntN(len(ref))
		n := r.IntN(min(len(ref)-a, 2*PageBytes) + 1)
		if step%2 == 0 { // words and blocks: sparse lines, then whole pages
			n = r.IntN(min(len(ref)-a, 2*LineBytes) + 1)
		}
		switch r.IntN(8) {
		case 6:
			o := r.IntN(len(pat) - min(n, len(pat)) + 1)
			n = min(n, len(pat))
			if r.IntN(2) == 0 { // continue the last shared piece
				a, o = lastA+lastN, lastO+lastN
				n = min(n, len(ref)-a, len(pat)-o)
			}
			m.WriteShared(Addr(a), pat[o:o+n])
			copy(ref[a:], pat[o:o+n])
			lastA, lastO, lastN = a, o, n
			shared = append(shared, span{a, n})
		case 7:
			if len(shared) == 0 {
				break
			}
			sp := shared[r.IntN(len(shared))]
			x := sp.a + r.IntN(sp.n+1)
			k := r.IntN(sp.a + sp.n - x + 1)
			if b, ok := m.SharedView(Addr(x), k); ok {
				views++
				if !bytes.Equal(b, ref[x:x+k]) {
					t.Fatalf("step %d: SharedView(%#x, %d) differs from the memory's bytes", step, x, k)
				}
			}
		case 0, 1:
			b := make([]byte, n)
			randomBytes(r, b)
			m.Write(Addr(a), b)
			copy(ref[a:], b)
		case 2:
			b := make([]byte, n)
			m.Read(Addr(a), b)
			if !bytes.Equal(b, ref[a:a+n]) {
				t.Fatalf("step %d: Read(%#x, %d) differs", step, a, n)
			}
		case 3:
			src := r.IntN(len(ref) - n + 1)
			CopyWithin(m, Addr(a), Addr(src), n)
			copy(ref[a:a+n], ref[src:src+n])
		case 5:
			b := make([]byte, n)
			randomBytes(r, b)
			m.Share(Addr(a), b) // a Write unless [a, a+n) is in an untouched segment
			copy(ref[a:], b)
		case 4:
			if r.IntN(20) == 0 { // Bytes flattens: keep some chunks paged
				b := m.Bytes(Addr(a), n)
				if !bytes.Equal(b, ref[a:a+n]) {
					t.Fatalf("step %d: Bytes(%#x, %d) differs", step, a, n)
				}
				if n > 0 {
					b[0]++
					ref[a]++
				}
			}
		}
	}
	got := make([]byte, len(ref))
	m.Read(0, got)
	if !bytes.Equal(got, ref) {
		t.Fatal("final contents differ")
	}
	if views == 0 {
		t.Error("SharedView never returned shared bytes")
	}
}

// randomBytes fills b from r, eight bytes a draw.
func randomBytes(r *rand.Rand, b []byte) {
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, r.Uint64())
		b = b[8:]
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// BenchmarkMemoryWord measures an 8-byte Write and Read in a segment among
// others (the loads and stores of control words).
func BenchmarkMemoryWord(b *testing.B) {
	m := NewMemory("node0", 0)
	var segs []Segment
	for range 64 {
		s, _ := m.Alloc("s", 16<<10, 64)
		segs = append(segs, s)
	}
	var w [8]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a := segs[i&63].Addr(8 * (i & 255))
		m.Write(a, w[:])
		m.Read(a, w[:])
	}
}

// TestShareCopiesOnWrite: shared bytes are read without being copied (no
// resident storage) until the first write into their segment, which copies
// them; the caller's slice is never written.
func TestShareCopiesOnWrite(t *testing.T) {
	m := NewMemory("node0", 0)
	a, _ := m.Alloc("a", 10, 8)
	s, _ := m.Alloc("big", 3*PageBytes, 64)
	b := make([]byte, 2*PageBytes+5)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	keep := bytes.Clone(b)
	m.Share(s.Addr(3), b)
	got := make([]byte, s.Size)
	m.Read(s.Base, got)
	if !bytes.Equal(got[3:3+len(b)], b) || got[0] != 0 || got[len(got)-1] != 0 {
		t.Fatal("shared segment does not read as the shared bytes with zeros around them")
	}
	if m.Resident() != 0 {
		t.Errorf("Resident = %d after Share, want 0", m.Resident())
	}
	m.Store64(a.Base, 1) // another segment: still shared
	m.Store64(s.Addr(PageBytes), 42)
	if !bytes.Equal(b, keep) {
		t.Fatal("a write changed the caller's shared slice")
	}
	m.Read(s.Base, got)
	want := append(append(make([]byte, 3), keep...), make([]byte, s.Size-3-len(keep))...)
	copy(want[PageBytes:], []byte{42, 0, 0, 0, 0, 0, 0, 0})
	if !bytes.Equal(got, want) {
		t.Fatal("after a write the segment does not hold the shared bytes and the write")
	}
}

// TestSharedPayloadTravelsWithoutCopies: a payload forwarded from memory
// to memory as a broadcast tree does (put into a pool slot next to a
// header word, copied out into the user buffer) stays one copy of its
// bytes: every memory reads it, and none holds more than its pool's pages.
func TestSharedPayloadTravelsWithoutCopies(t *testing.T) {
	for _, slots := range []int{4, 12} { // a pool smaller than a page, larger than one
		t.Run(fmt.Sprint(slots, " slots"), func(t *testing.T) { sharedPayloadTravels(t, slots) })
	}
}

func sharedPayloadTravels(t *testing.T, slots int) {
	const size, piece = 1 << 20, 8 << 10
	pat := make([]byte, size)
	for i := range pat {
		pat[i] = byte(i*131 + i>>9)
	}
	var ms []*Memory
	var bufs, pools []Segment
	for i := range 8 {
		m := NewMemory(fmt.Sprint("node", i), 0)
		pool, _ := m.Alloc("pool", slots*(64+piece), 64)
		buf, _ := m.Alloc("buf", size, 64)
		ms, bufs, pools = append(ms, m), append(bufs, buf), append(pools, pool)
	}
	ms[0].Share(bufs[0].Base, pat)
	for i := 1; i < len(ms); i++ {
		from, to := ms[i-1], ms[i]
		for off, slot := 0, 0; off < size; off, slot = off+piece, (slot+1)%slots {
			src, ok := from.SharedView(bufs[i-1].Addr(off), piece)
			if !ok {
				t.Fatalf("node %d: bytes at %d not shared", i-1, off)
			}
			hdr := pools[i].Addr(slot * (64 + piece))
			to.WriteShared(hdr+64, src)
			to.Store64(hdr, uint64(off)) // the header beside the data
			in, ok := to.SharedView(hdr+64, piece)
			if !ok {
				t.Fatalf("node %d: pool slot %d not seen as shared bytes", i, slot)
			}
			to.WriteShared(bufs[i].Addr(off), in)
		}
	}
	got := make([]byte, size)
	for i, m := range ms {
		m.Read(bufs[i].Base, got)
		if !bytes.Equal(got, pat) {
			t.Fatalf("node %d: the payload differs", i)
		}
		if limit := pools[i].Size + 2*PageBytes; m.Resident() > limit { // the pool's pages
			t.Errorf("node %d: %d bytes resident, want at most %d (the pool's pages)", i, m.Resident(), limit)
		}
	}
	// A write into a forwarded buffer copies it there, not anywhere else.
	ms[3].Store64(bufs[3].Addr(8), 7)
	ms[4].Read(bufs[4].Base, got)
	if !bytes.Equal(got, pat) {
		t.Fatal("a write at node 3 changed node 4's bytes")
	}
}

// TestRefsBounded: a chunk holds at most maxRefs ranges of shared bytes
// by reference; past that the lowest is copied into its storage, and the
// memory still reads what was written.
func TestRefsBounded(t *testing.T) {
	const pieces, piece = maxRefs + 40, minRef
	m := NewMemory("node0", 0)
	s, _ := m.Alloc("buf", pieces*(piece+8), 64)
	pat := make([]byte, pieces*(piece+8))
	for i := range pat {
		pat[i] = byte(i*13 + i>>8)
	}
	want := make([]byte, s.Size)
	for i := range pieces { // every piece from its own place: none continues another
		a := i * (piece + 8)
		o := (pieces - 1 - i) * (piece + 8)
		m.WriteShared(s.Addr(a), pat[o:o+piece])
		copy(want[a:], pat[o:o+piece])
	}
	if n := len(m.chunks[m.find(s.Base)].sp.refs); n > maxRefs {
		t.Errorf("%d refs in one chunk, want at most %d", n, maxRefs)
	}
	got := make([]byte, s.Size)
	m.Read(s.Base, got)
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes differ from what was written")
	}
	if _, ok := m.SharedView(s.Addr((pieces-1)*(piece+8)), piece); !ok {
		t.Error("the last piece written is not shared")
	}
}

// TestFindNearMatchesSearch: find (the last chunk, the near ones, or a
// binary search) returns the chunk holding the address, as a linear
// search does, on accesses that hop among a few of many segments and
// after flatten has merged chunks (their indices moved).
func TestFindNearMatchesSearch(t *testing.T) {
	m := NewMemory("node0", 0)
	var segs []Segment
	for i := range 300 {
		s, err := m.Alloc(fmt.Sprint("s", i), 64+i%7*64, 64)
		if err != nil {
			t.Fatal(err)
		}
		segs = append(segs, s)
	}
	linear := func(a Addr) int {
		for i, c := range m.chunks {
			if c.base <= a && a < c.end {
				return i
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 20000 {
		if k == 10000 { // merge segments 100 to 120 into one chunk
			m.Bytes(segs[100].Base, int(segs[120].End()-segs[100].Base))
		}
		s := segs[rng.IntN(5)*60+rng.IntN(3)] // a few segments, often
		if k%7 == 0 {
			s = segs[rng.IntN(len(segs))]
		}
		a := s.Base + Addr(rng.IntN(s.Size))
		if got, want := m.find(a), linear(a); got != want {
			t.Fatalf("access %d at %#x: find %d, chunk %d holds it", k, a, got, want)
		}
	}
}

package mem

import (
	"bytes"
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
func TestPagedMemoryMatchesFlat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
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
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			m.Share(sg.Addr(i/2), b)
			copy(ref[int(sg.Base)+i/2:], b)
		}
	}
	for step := range 3000 {
		a := r.IntN(len(ref))
		n := r.IntN(min(len(ref)-a, 2*PageBytes) + 1)
		if step%2 == 0 { // words and blocks: sparse lines, then whole pages
			n = r.IntN(min(len(ref)-a, 2*LineBytes) + 1)
		}
		switch r.IntN(6) {
		case 0, 1:
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
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
			for i := range b {
				b[i] = byte(r.Uint32())
			}
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

package mem

import (
	"bytes"
	"encoding/binary"
	"github.com/msgsim/msgsim/sim"
	"testing"
)

// TestLineCacheFollowsLayout: a word read through the line cache before a
// change of the memory's layout reads what memory holds after it, and a
// word written through the cache afterwards lands where every other access
// finds it. Each case warms the cache, reads (and so caches) the word at
// w (after writing it, unless the case reads its zeros), changes the
// layout with op, then writes and reads w and compares the word with a
// read the cache cannot serve (across lines).
func TestLineCacheFollowsLayout(t *testing.T) {
	const big = 3 * PageBytes // sparse page regions: lines, then pages
	cases := []struct {
		name string
		size int  // the segment under test (after a 64-byte one)
		w    int  // offset of the cached word in it
		zero bool // the cached word is zeros: its line has no storage
		op   func(m *Memory, s Segment)
	}{
		{"zeros, then a line", big, 4096, true, func(m *Memory, s Segment) {
			m.Store64(s.Addr(4096+16), 7) // the word's own line, allocated
		}},
		{"lines, then a whole page", big, 4096, false, func(m *Memory, s Segment) {
			m.Store64(s.Addr(4096+16), 7)
			m.Write(s.Addr(4000), make([]byte, 300)) // spans lines: the page
		}},
		{"lines, then many lines: a page", big, 64, false, func(m *Memory, s Segment) {
			m.Store64(s.Addr(64), 7)
			for i := range sparseLines + 1 {
				m.Store64(s.Addr(128+64*i), uint64(i))
			}
		}},
		{"a small chunk's zeros, then flat", 1000, 128, true, func(m *Memory, s Segment) {
			m.Store64(s.Addr(8), 7)
		}},
		{"a small chunk's lines, then flat", 40000, 128, false, func(m *Memory, s Segment) {
			m.Store64(s.Addr(136), 7)
			for i := range smallLines + 1 {
				m.Store64(s.Addr(1024+64*i), uint64(i))
			}
		}},
		{"shared bytes placed over it", big, 4096, false, func(m *Memory, s Segment) {
			b := bytes.Repeat([]byte{0xab}, 4096)
			m.Share(s.Addr(2048), b)
		}},
		{"flattened with the next chunk", 1000, 128, false, func(m *Memory, s Segment) {
			if _, err := m.Alloc("next", 1000, 1); err != nil {
				panic(err)
			}
			m.Bytes(s.Addr(990), 20) // across chunks: one flat chunk
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory("node0", 0)
			if _, err := m.Alloc("pad", 64, 64); err != nil {
				t.Fatal(err)
			}
			s, err := m.Alloc("s", tc.size, 64)
			if err != nil {
				t.Fatal(err)
			}
			var w [8]byte
			for range readsBeforeCache {
				m.Read(0, w[:])
			}
			a := s.Addr(tc.w)
			var v uint64
			if !tc.zero {
				v = 0x1111
				m.Store64(a, v)
			}
			if got := m.Load64(a); got != v {
				t.Fatalf("before: read %#x, want %#x", got, v)
			}
			tc.op(m, s)
			want := longRead(m, a)
			if got := m.Load64(a); got != want {
				t.Fatalf("after: the cache read %#x, memory holds %#x", got, want)
			}
			m.Store64(a, 0x2222)
			if got, slow := m.Load64(a), longRead(m, a); got != 0x2222 || slow != 0x2222 {
				t.Fatalf("written after: the cache reads %#x, memory holds %#x, want 0x2222", got, slow)
			}
			if e := m.rc[lineSlot(uint64(a)>>lineShift)]; uint64(e.ln) != uint64(a)>>lineShift+1 {
				t.Errorf("the word's line is not in the cache: the case did not test it")
			}
		})
	}
}

// longRead reads the word at a by a read across lines, which the line
// cache does not serve.
func longRead(m *Memory, a Addr) uint64 {
	b := make([]byte, 2*LineBytes)
	start := a - LineBytes
	m.Read(start, b)
	return binary.LittleEndian.Uint64(b[a-start:])
}

// BenchmarkPollWords measures the untimed reads of a poll over many peers'
// flags (PVM's sweep, ScaMPI's scan): 128 words, each in a ring of its
// own in a large segment of sparse lines, read in turn by a memory a CPU
// works on (so that its accesses are reported to a schedule explorer, had
// it one).
func BenchmarkPollWords(b *testing.B) {
	m := NewMemory("node0", 0)
	cfg, err := Builtin("sc")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := NewCPU(sim.NewEngine(1), "cpu0", m, cfg); err != nil {
		b.Fatal(err)
	}
	s, err := m.Alloc("rings", 128*8192, 64)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 128 {
		if i%3 == 0 { // some flags written, the others zeros
			m.Store64(s.Addr(i*8192), 1)
		}
	}
	var w [8]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Read(s.Addr((i&127)*8192), w[:])
	}
}

package mem

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// TestPeekSame: PeekSame says "the program sees want itself" only when
// memory's live bytes are want's own shared bytes with nothing laid over
// them, and then has Peek's effect on the cache (tags, LRU stamps) and no
// other; in every other case (a copy of the same bytes, a shifted window,
// a page written after the delivery, zeros where a put never landed, a
// stale line of a non-coherent cache, a buffered store) it returns false
// and reads exactly what Peek reads, so the caller compares and reports.
func TestPeekSame(t *testing.T) {
	for _, tc := range []struct {
		model string
		ways  int
	}{{"noncoherent", 2}, {"noncoherent", 1}, {"tso", 2}} {
		cfg, err := Builtin(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Cache.Ways = tc.ways
		e := sim.NewEngine(1)
		m := NewMemory("node0", 0)
		seg, _ := m.Alloc("recv", 3*PageBytes+100, 64) // larger than a page: copy on write per page
		hole, _ := m.Alloc("hole", 4096, 64)           // never written: a dropped put
		a, _ := NewCPU(e, "a", m, cfg)
		b, _ := NewCPU(e, "b", m, cfg) // the twin doing Peek
		lb := cfg.Cache.LineBytes
		pat := make([]byte, seg.Size+64)
		for i := range pat {
			pat[i] = byte(i*7 + i>>8)
		}
		stream := pat[3 : 3+seg.Size] // what the sender shared
		staleLine := seg.Addr(2*PageBytes + 5*lb)
		e.Spawn("p", func(p *sim.Proc) {
			for _, c := range []*CPU{a, b} { // cached before the delivery: zeros
				c.Load(p, staleLine, 8)
			}
			m.WriteShared(seg.Base, stream)  // the delivery: a reference, not a copy
			for _, c := range []*CPU{a, b} { // cached after: the delivered bytes
				for _, l := range []int{1, 2, 40, 1000} {
					c.Load(p, seg.Addr(l*lb), 8)
				}
			}
			check := func(what string, at Addr, want []byte, same bool) {
				t.Helper()
				got, peek := make([]byte, len(want)), make([]byte, len(want))
				if s := a.PeekSame(at, got, want); s != same {
					t.Errorf("%s %s: PeekSame = %v, want %v", tc.model, what, s, same)
				}
				b.Peek(at, peek)
				if same {
					if !bytes.Equal(peek, want) {
						t.Errorf("%s %s: PeekSame true but Peek sees other bytes", tc.model, what)
					}
				} else if !bytes.Equal(got, peek) {
					t.Errorf("%s %s: PeekSame false but did not read what Peek reads", tc.model, what)
				}
				ca, cb := a.cache, b.cache
				if !slices.Equal(ca.tags, cb.tags) || !slices.Equal(ca.used, cb.used) || ca.clock != cb.clock {
					t.Errorf("%s %s: cache state differs from Peek's", tc.model, what)
				}
			}
			off := func(at Addr, n int) []byte { return stream[at-seg.Base : int(at-seg.Base)+n] }
			check("whole page 0", seg.Base, off(seg.Base, PageBytes), true)
			check("across pages", seg.Addr(PageBytes-100), off(seg.Addr(PageBytes-100), 300), true)
			check("a copy of the bytes", seg.Base, bytes.Clone(off(seg.Base, 4096)), false)
			check("shifted window", seg.Base, pat[4:4+4096], false)
			check("a put never landed", hole.Base, make([]byte, 4096), false)
			stale := off(staleLine, lb)
			check("stale line", staleLine-Addr(lb), off(staleLine-Addr(lb), 3*lb), tc.model != "noncoherent" || bytes.Equal(stale, make([]byte, lb)))
			// A write into the shared page after the delivery: that page
			// is copied and written, the others still share.
			m.Write(seg.Addr(PageBytes+77), []byte{off(seg.Addr(PageBytes+77), 1)[0] ^ 0x5a})
			check("written page", seg.Addr(PageBytes), off(seg.Addr(PageBytes), 4096), false)
			check("page beside it", seg.Base, off(seg.Base, PageBytes), true)
			// A store still in the store buffer, forwarded to the program.
			a.Store(p, seg.Addr(100), 8, 0xdeadbeef)
			b.Store(p, seg.Addr(100), 8, 0xdeadbeef)
			check("buffered store", seg.Base, off(seg.Base, 4096), false)
			a.Fence(p)
			b.Fence(p)
			check("after the store drained", seg.Addr(2*PageBytes+10*lb), off(seg.Addr(2*PageBytes+10*lb), 1000), true)
			check("page written by the store", seg.Base, off(seg.Base, 4096), false)
		})
		if err := e.Run(); err != nil {
			t.Fatal(fmt.Errorf("%s: %w", tc.model, err))
		}
	}
}

// TestLargeUpdateMatchesLineByLine: a cache update or refresh of more
// lines than the cache holds (visiting the slots), or of fewer (a
// direct-mapped cache's sets followed without a division per line), leaves
// the cache as the same one done line by line.
func TestLargeUpdateMatchesLineByLine(t *testing.T) {
	for _, ways := range []int{1, 2} {
		cfg, err := Builtin("noncoherent")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Cache.Ways = ways
		cfg.Cache.SizeBytes = 16 * cfg.Cache.LineBytes
		e, m, seg, a, b := twinCPUs(cfg)
		lb := cfg.Cache.LineBytes
		e.Spawn("p", func(p *sim.Proc) {
			staleLines(p, m, seg, lb, []int{3, 40, 7, 41, 12, 60, 5, 0, 63}, a, b)
			for _, n := range []int{seg.Size - lb - 5, 10*lb - 7} { // more lines than the cache, fewer
				updateTwins(t, m, seg, a, b, ways, n)
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
	}
}

// updateTwins does an update and a refresh of n bytes of seg on a at once
// and on b line by line, and compares their caches.
func updateTwins(t *testing.T, m *Memory, seg Segment, a, b *CPU, ways, n int) {
	t.Helper()
	lb := a.cfg.Cache.LineBytes
	off := lb/2 + 3
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*13 + 1)
	}
	for round, whole := range []func(){
		func() { a.cache.update(seg.Addr(off), src) },
		func() { m.Write(seg.Addr(off), src[:n/2]); a.cache.refresh(m, seg.Addr(off), n) },
	} {
		whole()
		for o := 0; o < n; { // line by line (each piece at most one line)
			k := min(n-o, lb-(off+o)%lb)
			if round == 0 {
				b.cache.update(seg.Addr(off+o), src[o:o+k])
			} else {
				b.cache.refresh(m, seg.Addr(off+o), k)
			}
			o += k
		}
		ca, cb := a.cache, b.cache
		if !slices.Equal(ca.tags, cb.tags) || !slices.Equal(ca.used, cb.used) || ca.clock != cb.clock || !bytes.Equal(ca.bytes(), cb.bytes()) {
			t.Errorf("ways %d, %d bytes, round %d: cache state differs", ways, n, round)
		}
	}
}

// TestSharedMemcpyMatchesLineByLine: a Memcpy whose source is shared bytes
// (viewShared: no copy of them is read, the cache only walked, whole
// rounds of it skipped) leaves the destination and the cache (tags, LRU
// stamps, slot bytes) as the look line by line and the write of its bytes
// do, with and without a stale line of a non-coherent cache in the
// source; the stale bytes are what the destination gets, at their offset.
func TestSharedMemcpyMatchesLineByLine(t *testing.T) {
	staleSeen := 0
	for _, tc := range []struct {
		model      string
		ways, size int // of the cache, in lines
		lines      int // of the copy
		stale      int // line of the source cached before the payload (-1: none)
	}{
		{"noncoherent", 1, 8, 50, -1}, {"noncoherent", 1, 8, 50, 3}, {"noncoherent", 1, 8, 50, 40},
		{"noncoherent", 1, 64, 50, 3}, {"noncoherent", 1, 50, 50, 7}, // the stale line hit and kept
		{"noncoherent", 2, 8, 50, 5}, {"noncoherent", 2, 16, 20, 2}, {"tso", 2, 8, 50, 3}, {"noncoherent", 4, 8, 6, 1},
	} {
		cfg, err := Builtin(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Cache.Ways, cfg.Cache.SizeBytes = tc.ways, tc.size*cfg.Cache.LineBytes
		lb := cfg.Cache.LineBytes
		for _, aligned := range []bool{false, true} {
			n, shift := tc.lines*lb-7, 5
			if aligned { // whole lines: the first and last filled from the payload too
				n, shift = tc.lines*lb, 0
			}
			pat := make([]byte, n+lb)
			for i := range pat {
				pat[i] = byte(i*13 + i>>7 + 1)
			}
			var dsts [2][]byte
			var caches [2]*cache
			var sharedDst bool
			for k := range 2 { // 0: Memcpy, 1: the look line by line and a write
				e := sim.NewEngine(1)
				m := NewMemory("node0", 0)
				src, _ := m.Alloc("src", n+2*lb, 64)
				dst, _ := m.Alloc("dst", n, 64)
				c, _ := NewCPU(e, "c", m, cfg)
				at := src.Addr(shift)
				e.Spawn("p", func(p *sim.Proc) {
					if tc.stale >= 0 { // cached zeros: stale once the payload is there
						c.Load(p, src.Addr(tc.stale*lb), 8)
					}
					m.Share(at, pat[:n])
					c.Load(p, src.Addr(tc.lines/2*lb), 8) // a line cached with the payload's bytes
					if k == 0 {
						c.Memcpy(p, dst.Base, at, n)
						return
					}
					buf := make([]byte, n)
					for o := 0; o < n; { // each piece at most one line
						q := min(n-o, lb-int(at+Addr(o))%lb)
						c.view(at+Addr(o), buf[o:o+q], true)
						o += q
					}
					c.write(p, dst.Base, buf)
				})
				if err := e.Run(); err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					_, sharedDst = m.SharedView(dst.Base, n)
				}
				dsts[k], caches[k] = bytes.Clone(m.Bytes(dst.Base, n)), c.cache
			}
			name := fmt.Sprintf("%s %d-way %d lines, copy of %d lines at %d, stale %d", tc.model, tc.ways, tc.size, tc.lines, shift, tc.stale)
			if !bytes.Equal(dsts[0], dsts[1]) {
				t.Errorf("%s: Memcpy copied other bytes than the look line by line", name)
			}
			// A stale line the copy reached (not evicted before by the copy's
			// own lines) shows in the copy, at that line.
			if off := mismatch(dsts[0], pat[:n]); off >= 0 {
				if lo := tc.stale*lb - shift; tc.stale < 0 || off < lo || off >= lo+lb {
					t.Errorf("%s: copy differs from the payload at %d, not in the stale line %d", name, off, tc.stale)
				}
				staleSeen++
				if sharedDst {
					t.Errorf("%s: the destination shares the payload, not the stale bytes copied", name)
				}
			} else if !sharedDst {
				t.Errorf("%s: the destination holds a copy of the payload, not the payload shared", name)
			} else if tc.stale >= 0 && tc.model == "noncoherent" && tc.lines <= tc.size/tc.ways {
				t.Errorf("%s: the stale line was not copied", name)
			}
			a, b := caches[0], caches[1]
			if !slices.Equal(a.tags, b.tags) || !slices.Equal(a.used, b.used) || a.clock != b.clock || !bytes.Equal(a.bytes(), b.bytes()) {
				t.Errorf("%s: cache state differs from the look line by line", name)
			}
		}
	}
	if staleSeen < 3 {
		t.Errorf("%d cases copied a stale line, want at least 3", staleSeen)
	}
}

// mismatch is the first offset where a and b differ, or -1.
func mismatch(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestFoldMatchesPeekPoke: Fold (the ranges gone through in blocks, or
// combined in place in memory when the program sees memory's bytes) leaves
// memory, the cache (tags, LRU stamps, slot bytes) and the result as
// Peek, Peek, combine, Poke of the whole ranges do, on direct-mapped and
// two-way caches, coherent or not, with stale lines in both ranges, a
// buffered store forwarded, ranges of several blocks not aligned to
// lines, and overlapping ranges (folded whole).
func TestFoldMatchesPeekPoke(t *testing.T) {
	sum := func(acc, in []byte) { // int64 sums, as stacks.SumInt64
		for i := 0; i+8 <= len(acc); i += 8 {
			v := uint64(0)
			for j := 7; j >= 0; j-- {
				v = v<<8 | uint64(acc[i+j])
			}
			w := uint64(0)
			for j := 7; j >= 0; j-- {
				w = w<<8 | uint64(in[i+j])
			}
			v += w
			for j := range 8 {
				acc[i+j] = byte(v >> (8 * j))
			}
		}
	}
	for _, tc := range []struct {
		model   string
		ways    int
		n       int  // bytes of each range
		overlap bool // in starts inside acc
		clean   bool // no stale line, no buffered store: folded in place
	}{
		{"noncoherent", 1, 3*foldBlock + 808, false, false}, {"noncoherent", 2, 3*foldBlock + 808, false, false},
		{"noncoherent", 2, 800, false, false}, {"tso", 2, 2*foldBlock + 8, false, false}, {"noncoherent", 1, foldBlock, true, false},
		{"noncoherent", 1, 3*foldBlock + 808, false, true}, {"tso", 2, 2*PageBytes + 8, false, true}, {"noncoherent", 2, 800, false, true},
	} {
		var mems [2][]byte
		var caches [2]*cache
		for k := range 2 { // 0: Fold, 1: Peek, Peek, Poke
			cfg, err := Builtin(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Cache.Ways = tc.ways
			lb := cfg.Cache.LineBytes
			e := sim.NewEngine(1)
			m := NewMemory("node0", 0)
			seg, _ := m.Alloc("buf", 2*tc.n+4*lb, 64)
			c, _ := NewCPU(e, "c", m, cfg)
			acc := seg.Addr(lb/2 + 8) // not on a line
			in := acc + Addr(tc.n) + Addr(lb)
			if tc.overlap {
				in = acc + Addr(tc.n/2)
			}
			pat := make([]byte, seg.Size)
			for i := range pat {
				pat[i] = byte(i*29 + i>>8)
			}
			e.Spawn("p", func(p *sim.Proc) {
				if !tc.clean {
					for _, l := range []Addr{acc + 8, acc + Addr(tc.n/2), in + 64, in + Addr(tc.n) - 8} {
						c.Load(p, l, 8) // cached zeros, stale once the pattern is there
					}
				}
				m.Share(seg.Base, pat)
				c.Store(p, acc+Addr(9*lb), 8, 0x5678) // written before: acc holds its own pages there
				c.Fence(p)
				c.Load(p, acc+Addr(3*lb), 8) // a line cached with the pattern
				c.Load(p, in+Addr(5*lb), 8)
				if !tc.clean {
					c.Store(p, in+Addr(7*lb), 8, 0x1234) // forwarded while buffered (tso)
				}
				if k == 0 {
					c.Fold(acc, in, tc.n, 8, sum)
				} else {
					x, y := make([]byte, tc.n), make([]byte, tc.n)
					c.Peek(acc, x)
					c.Peek(in, y)
					sum(x, y)
					c.Poke(acc, x)
				}
				c.Fence(p)
			})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			mems[k], caches[k] = bytes.Clone(m.Bytes(seg.Base, seg.Size)), c.cache
		}
		name := fmt.Sprintf("%s %d-way, %d bytes, overlap %v, clean %v", tc.model, tc.ways, tc.n, tc.overlap, tc.clean)
		if off := mismatch(mems[0], mems[1]); off >= 0 {
			t.Errorf("%s: memory differs at %d", name, off)
		}
		a, b := caches[0], caches[1]
		if !slices.Equal(a.tags, b.tags) || !slices.Equal(a.used, b.used) || a.clock != b.clock || !bytes.Equal(a.bytes(), b.bytes()) {
			t.Errorf("%s: cache state differs from Peek, Peek, Poke", name)
		}
	}
}

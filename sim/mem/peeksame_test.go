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
// lines than the cache holds (visiting the slots) leaves the cache as the
// same one done line by line.
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
			off, n := lb/2+3, seg.Size-lb-5
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
				if !slices.Equal(ca.tags, cb.tags) || !slices.Equal(ca.used, cb.used) || ca.clock != cb.clock || !bytes.Equal(ca.data, cb.data) {
					t.Errorf("ways %d round %d: cache state differs", ways, round)
				}
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
	}
}

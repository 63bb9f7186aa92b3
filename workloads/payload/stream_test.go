package payload

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// counting is a CPU that counts the reads PeekSame found to be the
// stream's own bytes (not compared).
type counting struct {
	*mem.CPU
	same int
}

// countingPE is one PE with a non-coherent cache whose PeekSame is counted.
func countingPE(t *testing.T) (*sim.Engine, *mem.Memory, *counting) {
	t.Helper()
	cfg, err := mem.Builtin("noncoherent")
	if err != nil {
		t.Fatal(err)
	}
	e := sim.NewEngine(1)
	m := mem.NewMemory("pe", 0)
	cpu, err := mem.NewCPU(e, "pe", m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, m, &counting{CPU: cpu}
}

func (c *counting) PeekSame(a mem.Addr, b, want []byte) bool {
	s := c.CPU.PeekSame(a, b, want)
	if s {
		c.same++
	}
	return s
}

// TestStreamCheckSkipsOnlyItsOwnBytes: a delivery that shares the
// stream's bytes at the matching offset is verified without comparing
// them; a byte written into it after the delivery, a line a non-coherent
// cache held from before the delivery (stale), a put that never landed, a
// window from the wrong offset are each still reported at their offset,
// and a write into the stream itself is caught by Intact.
func TestStreamCheckSkipsOnlyItsOwnBytes(t *testing.T) {
	const n, off = 2*mem.PageBytes + 300, 61
	s := NewStream(Key(7), n+4*off)
	e, m, c := countingPE(t)
	recv, _ := m.Alloc("recv", n, 64)
	other, _ := m.Alloc("other", n, 64)
	buf := make([]byte, CheckBytes)
	e.Spawn("p", func(p *sim.Proc) {
		const staleAt = 2*mem.PageBytes + 128
		c.Load(p, other.Addr(staleAt), 8) // cached (zeros) before the delivery
		m.WriteShared(recv.Base, s.Bytes(off, n))
		m.WriteShared(other.Base, s.Bytes(off, n))

		if x, ok := s.CheckWith(c, recv.Base, n, off, buf); !ok {
			t.Errorf("clean shared delivery reported at %d", x.Offset)
		}
		if windows := (n + CheckBytes - 1) / CheckBytes; c.same != windows {
			t.Errorf("%d of %d reads skipped, want all", c.same, windows)
		}
		if x, ok := s.CheckWith(c, recv.Base, n, off+8, buf); ok || x.Offset != 0 {
			t.Errorf("window of another offset: %+v %v", x, ok)
		}
		if x, ok := s.CheckWith(c, other.Base, n, off, buf); ok || x.Offset != staleAt&^63 || x.Got != 0 {
			t.Errorf("stale line: %+v %v, want reported at %d", x, ok, staleAt&^63)
		}
		c.same = 0
		const at = mem.PageBytes + 70001%mem.PageBytes
		want := s.Bytes(off+at, 1)[0]
		m.Write(recv.Addr(at), []byte{want ^ 0x5a})
		if x, ok := s.CheckWith(c, recv.Base, n, off, buf); ok || x.Offset != at || x.Got != want^0x5a || x.Want != want {
			t.Errorf("byte written after the delivery: %+v %v, want offset %d", x, ok, at)
		}
		if c.same != 1 { // the first window, before the written page
			t.Errorf("%d reads skipped before the written byte, want 1", c.same)
		}
		hole, _ := m.Alloc("hole", 100, 64)
		if x, ok := s.CheckWith(c, hole.Base, 100, off, buf); ok || x.Offset != 0 {
			t.Errorf("put never landed: %+v %v", x, ok)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Intact(); !ok {
		t.Fatal("untouched stream not intact")
	}
	s.b[12345] ^= 1
	if x, ok := s.Intact(); ok || x.Offset != 12345 {
		t.Errorf("written stream: %+v %v", x, ok)
	}
}

// TestStreamCheckPiecesOverEarlierMessage: a message delivered in 8 KB
// pieces (asynchronous ACLMPL's pool buffers copied into the receive
// buffer) over an earlier message from another sender is held by
// reference piece by piece and verified without comparing; a byte planted
// in one piece afterwards is still reported at its offset, with what was
// expected and what was found.
func TestStreamCheckPiecesOverEarlierMessage(t *testing.T) {
	const n, piece = 3*mem.PageBytes + 4000, 8 << 10
	s := NewStream(Key(3), 2*n+1000)
	e, m, c := countingPE(t)
	hdr, _ := m.Alloc("flags", 64, 64)
	recv, _ := m.Alloc("recv", n, 64)
	buf := make([]byte, CheckBytes)
	e.Spawn("p", func(p *sim.Proc) {
		m.WriteShared(recv.Base, s.Bytes(n, n)) // the earlier message
		m.Store64(hdr.Base, 1)
		const off = 517 // the new message's window
		for o := 0; o < n; o += piece {
			k := min(piece, n-o)
			m.WriteShared(recv.Addr(o), s.Bytes(off+o, k))
		}
		if x, ok := s.CheckWith(c, recv.Base, n, off, buf); !ok {
			t.Fatalf("clean delivery in pieces reported at %d", x.Offset)
		}
		if windows := (n + CheckBytes - 1) / CheckBytes; c.same != windows {
			t.Errorf("%d of %d reads skipped, want all", c.same, windows)
		}
		const at = 2*piece + 333
		want := s.Bytes(off+at, 1)[0]
		m.Write(recv.Addr(at), []byte{want ^ 0x81})
		if x, ok := s.CheckWith(c, recv.Base, n, off, buf); ok || x.Offset != at || x.Got != want^0x81 || x.Want != want {
			t.Errorf("byte planted in a piece: %+v %v, want offset %d", x, ok, at)
		}
		if b, ok := m.SharedView(recv.Addr(at+1), 3*piece-at-1); !ok || b[0] != s.Bytes(off+at+1, 1)[0] {
			t.Error("the rest of the piece after the planted byte is no longer shared")
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
}

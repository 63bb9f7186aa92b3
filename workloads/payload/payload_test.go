package payload

import (
	"testing"

	"github.com/msgsim/msgsim/sim/mem"
)

// TestFillAndDiff: any window of a stream, aligned or not, filled then
// checked matches; one flipped byte is found at its offset.
func TestFillAndDiff(t *testing.T) {
	p := Key(1, 2, 3)
	for _, c := range []struct{ off, n int }{{0, 0}, {0, 1}, {3, 5}, {5, 8}, {0, 64}, {7, 100}, {61, 4099}} {
		b := make([]byte, c.n)
		p.Fill(b, c.off)
		for i := range b {
			if b[i] != p.Byte(c.off+i) {
				t.Fatalf("off %d n %d: byte %d is %#x, Byte says %#x", c.off, c.n, i, b[i], p.Byte(c.off+i))
			}
		}
		if d := p.Diff(b, c.off); d != -1 {
			t.Fatalf("off %d n %d: clean window differs at %d", c.off, c.n, d)
		}
		for _, at := range []int{0, c.n / 3, c.n / 2, 2*c.n/3 + 5, c.n - 9, c.n - 1} {
			if at < 0 || at >= c.n {
				continue
			}
			b[at] ^= 0x40
			if d := p.Diff(b, c.off); d != at {
				t.Fatalf("off %d n %d: flip at %d reported at %d", c.off, c.n, at, d)
			}
			b[at] ^= 0x40
		}
	}
	if Key(1, 2, 3) == Key(1, 3, 2) || Key(1, 2) == Key(2, 2) {
		t.Error("keys of different identifiers collide")
	}
}

// TestWriteCheckInMemory: a buffer of several chunks written into
// simulated memory verifies; a corrupted byte is reported with its offset
// and both values.
func TestWriteCheckInMemory(t *testing.T) {
	m := mem.NewMemory("pe0", 0)
	n := 3*chunk + 123
	seg, err := m.Alloc("buf", n, 8)
	if err != nil {
		t.Fatal(err)
	}
	a := seg.Base
	raw := Raw{Mem: m}
	p := Key(9, 4)
	Write(raw, a, n, p, 17)
	if mm, ok := Check(raw, a, n, p, 17); !ok {
		t.Fatalf("clean buffer reported %+v", mm)
	}
	bad := 2*chunk + 5
	b := m.Bytes(a+mem.Addr(bad), 1)
	want := b[0]
	b[0] ^= 0xff
	mm, ok := Check(raw, a, n, p, 17)
	if ok || mm.Offset != bad || mm.Got != want^0xff || mm.Want != want {
		t.Fatalf("corrupted byte %d: got %+v ok=%v", bad, mm, ok)
	}
	if _, ok := Check(raw, a, n, Key(9, 5), 17); ok {
		t.Error("another pattern's check passed")
	}
}

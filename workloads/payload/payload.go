// Package payload writes seeded byte patterns into the buffers workloads
// send and verifies deliveries by regenerating the pattern: byte i of a
// pattern is a pure function of its key and i, so no reference copy of
// what was sent is kept and a check needs no buffer of the message's size
// (it reads the delivery a chunk at a time). A mismatch names the first
// differing offset and both bytes, for the caller's report (rank, message).
//
// Layer: imports sim/mem only; the workloads that send data import it.
package payload

import (
	"encoding/binary"

	"github.com/msgsim/msgsim/sim/mem"
)

// Pattern is a seeded byte stream, identified by its key.
type Pattern uint64

// Key mixes a run's seed and the identifiers of one payload (source,
// message number, destination...) into a pattern: different identifiers
// give unrelated streams. (With two identifiers it is the ping-pong
// workload's original key, so its reports kept their bytes.)
func Key(seed uint64, ids ...uint64) Pattern {
	x := seed
	for i, id := range ids {
		x ^= (id + 1) * idMul[i%len(idMul)]
		if i >= len(idMul) {
			x = mix(x)
		}
	}
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	return Pattern(x ^ x>>29)
}

// idMul are odd constants (the golden ratio's and splitmix64's) that
// spread each identifier over the key's bits.
var idMul = [...]uint64{0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb, 0xd6e8feb86659fd93}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Word is the stream's j-th 8-byte word (bytes 8j to 8j+7, little-endian):
// the key with j spread over its bits, so that every word of a payload
// differs and a payload shifted by whole words does not verify.
func (p Pattern) Word(j int) uint64 { return uint64(p) ^ uint64(j)*wordMul }

// wordMul spreads a word's index over its bits (splitmix64's
// golden-gamma-like odd constant).
const wordMul = 0xd6e8feb86659fd93

// Byte is the stream's byte i.
func (p Pattern) Byte(i int) byte { return byte(p.Word(i/8) >> (8 * (i % 8))) }

// Fill writes the stream's bytes [off, off+len(b)) into b.
func (p Pattern) Fill(b []byte, off int) {
	i := 0
	for ; i < len(b) && (off+i)%8 != 0; i++ {
		b[i] = p.Byte(off + i)
	}
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], p.Word((off+i)/8))
	}
	for ; i < len(b); i++ {
		b[i] = p.Byte(off + i)
	}
}

// Diff is the index in got of the first byte that differs from the
// stream's bytes [off, off+len(got)), or -1 if none does.
func (p Pattern) Diff(got []byte, off int) int {
	i := 0
	for ; i < len(got) && (off+i)%8 != 0; i++ {
		if got[i] != p.Byte(off+i) {
			return i
		}
	}
	// The common case: whole words match, four at a time (Word's
	// multiplier inlined, the differences ORed: one branch per 32 bytes);
	// a difference is located below.
	for j := uint64((off + i) / 8); i+32 <= len(got); i, j = i+32, j+4 {
		b := got[i : i+32]
		x := binary.LittleEndian.Uint64(b) ^ uint64(p) ^ j*wordMul
		x |= binary.LittleEndian.Uint64(b[8:]) ^ uint64(p) ^ (j+1)*wordMul
		x |= binary.LittleEndian.Uint64(b[16:]) ^ uint64(p) ^ (j+2)*wordMul
		x |= binary.LittleEndian.Uint64(b[24:]) ^ uint64(p) ^ (j+3)*wordMul
		if x != 0 {
			break
		}
	}
	for ; i+8 <= len(got); i += 8 {
		if binary.LittleEndian.Uint64(got[i:]) != p.Word((off+i)/8) {
			break
		}
	}
	for ; i < len(got); i++ {
		if got[i] != p.Byte(off+i) {
			return i
		}
	}
	return -1
}

// Mismatch is a verified buffer's first wrong byte.
type Mismatch struct {
	Offset    int  // from the start of the checked range
	Got, Want byte // what the buffer holds, what the pattern says
}

// Peeker reads a buffer as its program sees it (mem.CPU: through its
// cache, untimed) or as memory holds it (Raw).
type Peeker interface {
	Peek(a mem.Addr, b []byte)
}

// Poker writes a buffer as its program does (mem.CPU), or the memory's
// live bytes (Raw).
type Poker interface {
	Poke(a mem.Addr, b []byte)
}

// Raw reads and writes a memory's live bytes without timing, cache or
// notification: for buffers of stacks that expose no CPU.
type Raw struct{ Mem *mem.Memory }

// Peek copies the live bytes at a into b.
func (r Raw) Peek(a mem.Addr, b []byte) { r.Mem.Read(a, b) }

// Poke copies b into the live bytes at a.
func (r Raw) Poke(a mem.Addr, b []byte) { copy(r.Mem.Bytes(a, len(b)), b) }

// chunk is how many bytes Write and Check move at a time.
const chunk = 4096

// CheckBytes is the scratch length CheckWith reads best with: a look
// through a cache at more lines than it holds reads memory at once
// (mem.CPU.Peek), where one of 4 KiB goes line by line.
const CheckBytes = 64 << 10

// scratch is Write's and Check's buffer for n bytes: a chunk, or n bytes
// when fewer. It escapes to the heap (the Peeker and Poker are
// interfaces), so a fixed chunk would cost every check of a one-word
// message 4 KiB of garbage: 4 GiB for a million-PE broadcast.
func scratch(n int) []byte { return make([]byte, max(0, min(chunk, n))) }

// Write fills the n bytes at a with the stream's bytes [off, off+n),
// through w, a chunk at a time.
func Write(w Poker, a mem.Addr, n int, p Pattern, off int) {
	buf := scratch(n)
	for done := 0; done < n; {
		k := min(chunk, n-done)
		p.Fill(buf[:k], off+done)
		w.Poke(a+mem.Addr(done), buf[:k])
		done += k
	}
}

// Check reads the n bytes at a through r, a chunk at a time, and compares
// them with the stream's bytes [off, off+n). It reports the first
// mismatch, if any.
func Check(r Peeker, a mem.Addr, n int, p Pattern, off int) (Mismatch, bool) {
	return CheckWith(r, a, n, p, off, scratch(n))
}

// CheckWith is Check reading len(buf) bytes at a time into buf, a
// caller's scratch buffer (of CheckBytes for long payloads).
func CheckWith(r Peeker, a mem.Addr, n int, p Pattern, off int, buf []byte) (Mismatch, bool) {
	for done := 0; done < n; {
		k := min(len(buf), n-done)
		b := buf[:k]
		r.Peek(a+mem.Addr(done), b)
		if i := p.Diff(b, off+done); i >= 0 {
			return Mismatch{Offset: done + i, Got: b[i], Want: p.Byte(off + done + i)}, false
		}
		done += k
	}
	return Mismatch{}, true
}

// Stream is a pattern's bytes [0, n) held in memory, for payloads that are
// shared rather than written (mem.CPU.PokeShared shares a window of them
// copy-on-write, and puts and copies carry the same bytes on). Filled by
// NewStream and never written afterwards.
type Stream struct {
	p Pattern
	b []byte
}

// NewStream returns the stream's bytes [0, n) of p.
func NewStream(p Pattern, n int) *Stream {
	s := &Stream{p: p, b: make([]byte, n)}
	p.Fill(s.b, 0)
	return s
}

// Bytes is the stream's bytes [off, off+n): never to be written.
func (s *Stream) Bytes(off, n int) []byte { return s.b[off : off+n : off+n] }

// Intact reports whether the stream's bytes are still the pattern's (the
// first that is not, if one): a check that skipped comparing bytes that
// were these bytes themselves (SameSeer) relied on it, so a run that
// shared them checks it once at its end.
func (s *Stream) Intact() (Mismatch, bool) {
	if i := s.p.Diff(s.b, 0); i >= 0 {
		return Mismatch{Offset: i, Got: s.b[i], Want: s.p.Byte(i)}, false
	}
	return Mismatch{}, true
}

// SameSeer is a Peeker that can tell, while it reads, that what its
// program sees is the caller's bytes themselves (mem.CPU.PeekSame): true
// when the bytes at a are want's own storage (shared, not a copy) with
// nothing laid over them, in which case b is left alone; otherwise it
// reads into b as Peek does.
type SameSeer interface {
	PeekSame(a mem.Addr, b, want []byte) bool
}

// CheckWith is CheckWith of the stream's bytes [off, off+n): a read whose
// bytes are, as r sees them, the stream's own bytes at the matching
// offset (r a SameSeer) is equal by construction and not compared; every
// other read is compared byte by byte with the pattern.
func (s *Stream) CheckWith(r Peeker, a mem.Addr, n, off int, buf []byte) (Mismatch, bool) {
	ss, ok := r.(SameSeer)
	if !ok || off < 0 || off+n > len(s.b) {
		return CheckWith(r, a, n, s.p, off, buf)
	}
	for done := 0; done < n; {
		k := min(len(buf), n-done)
		b := buf[:k]
		if !ss.PeekSame(a+mem.Addr(done), b, s.b[off+done:off+done+k]) {
			if i := s.p.Diff(b, off+done); i >= 0 {
				return Mismatch{Offset: done + i, Got: b[i], Want: s.p.Byte(off + done + i)}, false
			}
		}
		done += k
	}
	return Mismatch{}, true
}

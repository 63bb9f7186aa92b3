// Package mem holds the memory building blocks machines share: a node's
// byte-addressed memory with segments, and a CPU's view of it (an optional
// cache, coherent or not; an optional store buffer that drains in order or
// reordered; fences; atomics; bulk copies; spin-waits that honour the cache).
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
type Memory struct {
	name     string
	data     []byte
	capacity int
	segs     []Segment
	watchers []*watcher
}

// NewMemory returns an empty memory that can hold capacity bytes of segments
// (0: unlimited).
func NewMemory(name string, capacity int) *Memory {
	return &Memory{name: name, capacity: capacity}
}

// Name is the memory's name (the node it belongs to).
func (m *Memory) Name() string { return m.name }

// Used is the number of bytes allocated to segments.
func (m *Memory) Used() int { return len(m.data) }

// Segments lists the allocated segments in allocation order.
func (m *Memory) Segments() []Segment { return m.segs }

// Alloc allocates a zeroed segment of size bytes aligned to align (a power of
// two, 0 or 1 for none). It fails when the memory's capacity would be exceeded.
func (m *Memory) Alloc(name string, size, align int) (Segment, error) {
	if size < 0 {
		return Segment{}, fmt.Errorf("memory %s: segment %q: negative size %d", m.name, name, size)
	}
	base := len(m.data)
	if align > 1 {
		base = (base + align - 1) &^ (align - 1)
	}
	if m.capacity > 0 && base+size > m.capacity {
		return Segment{}, fmt.Errorf("memory %s: segment %q of %d bytes does not fit: %d of %d bytes in use", m.name, name, size, len(m.data), m.capacity)
	}
	// Grow in place (the bytes past len are zero: memory never shrinks).
	m.data = slices.Grow(m.data, base+size-len(m.data))[:base+size]
	s := Segment{Name: name, Base: Addr(base), Size: size}
	m.segs = append(m.segs, s)
	return s, nil
}

func (m *Memory) check(a Addr, n int) {
	if n < 0 || uint64(a)+uint64(n) > uint64(len(m.data)) {
		panic(fmt.Sprintf("memory %s: access [%#x, +%d) outside allocated memory (%d bytes)", m.name, a, n, len(m.data)))
	}
}

// Bytes returns the live bytes at [a, a+n) without any timing or
// visibility effect: for workloads filling and verifying buffers, and for
// machine models (DMA engines) that account time themselves.
func (m *Memory) Bytes(a Addr, n int) []byte {
	m.check(a, n)
	return m.data[a : int(a)+n : int(a)+n]
}

// Read copies memory at a into b (no timing).
func (m *Memory) Read(a Addr, b []byte) { copy(b, m.Bytes(a, len(b))) }

// Write makes b globally visible at a and wakes spinners watching any of
// those bytes (no timing: the caller has charged it).
func (m *Memory) Write(a Addr, b []byte) {
	copy(m.Bytes(a, len(b)), b)
	m.notify(a, len(b))
}

// Load64 reads a little-endian 64-bit word (no timing).
func (m *Memory) Load64(a Addr) uint64 { return binary.LittleEndian.Uint64(m.Bytes(a, 8)) }

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

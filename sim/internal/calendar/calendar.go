// Package calendar is the simulation engine's event calendar: pending
// events in (time, sequence) order, each carrying a payload of the
// engine's (what the event does), with cancellation and rescheduling.
package calendar

import (
	"math"
	"math/bits"
)

// laneItem is an event in the lane (the current time): the payload inline.
type laneItem[A any] struct {
	seq uint64
	a   A
}

// Handle names a scheduled event so that it can be cancelled.
type Handle[T ~int64] struct {
	at   T
	seq  uint64
	slot int32 // its slot in the calendar's pool (1 on); -1: in the lane
}

// Valid reports whether h names an event (the zero Handle does not).
func (h Handle[T]) Valid() bool { return h.seq != 0 }

// At is the time the event was scheduled for.
func (h Handle[T]) At() T { return h.at }

// slot is a future event in the calendar's pool: what it does, when, its
// sequence (which also tells a cancelled or reused slot from the one a
// handle names) and the next slot of its bucket's list (or of the free
// list; 0 ends a list: slot 0 is never used).
type slot[T ~int64, A any] struct {
	a    A
	at   T
	seq  uint64
	next int32
	dead bool // cancelled: skipped (not counted) when it reaches the top
}

// Calendar holds pending events in (time, sequence) order: a radix heap of
// future events and a first-in-first-out lane for events at the current
// time (wake-ups, zero-delay hand-offs and callbacks), which never touch
// the radix heap.
//
// The radix heap relies on time never going back: every event it receives
// is later than the current time, which is not earlier than base, the time
// of the last event it gave out. Ts are read as 7 digits of 9 bits. An
// event at time t sits in the bucket of (level, digit): level is the
// highest digit in which t differs from base and digit is t's digit there
// (larger than base's). Buckets in (level, digit) order hold ever later
// events, so the earliest is in the lowest non-empty bucket, which a
// bitmap finds in two trailing-zero counts. Bucket 0 holds the events at
// time base. Taking the earliest event out of a bucket makes its time the
// new base and spreads the bucket over lower levels (a level-0 bucket
// holds a single time: it becomes bucket 0 whole): an event moves down at
// most once per digit of the spread of pending times (never for events
// less than 512 ps ahead, once up to 262,144 ps), and inserting is an
// append, with no comparison. A bucket holding a single event also
// becomes bucket 0 whole, without a spread.
//
// Events live in a pool of slots, and a bucket is a singly linked list of
// slot indices (its head and tail): moving an event from bucket to bucket
// relinks it, nothing is copied and the buckets hold no pointers. Freed
// slots go on a free list: nothing is allocated per event in steady
// state.
//
// A bucket's list is in sequence order, which bucket 0 needs: events are
// appended in the order they are scheduled, and a spread bucket goes to
// empty buckets (every bucket below the lowest non-empty one is empty),
// keeping its order. Only a moved event (move keeps its sequence) or an
// insertion at time base can break the order: an append that does is
// noted, and such a bucket is sorted when it becomes bucket 0.
//
// Cancelling marks the slot dead; the event is dropped when its bucket is
// spread or it would be the earliest, without counting as an event.
type Calendar[T ~int64, A any] struct {
	b0h, b0t int32                 // bucket 0: slots at time base, in sequence order (b0t: its tail if b0h is not 0)
	head     [nbuckets]int32       // bucket k's first slot (0: empty)
	tail     [nbuckets]int32       // and its last
	mask     [nbuckets / 64]uint64 // bit k: bucket k is not empty
	unsorted [nbuckets / 64]uint64 // bit k: bucket k is out of sequence order
	words    uint64                // bit w: mask[w] is not 0
	base     T
	minK     int   // when bucket 0 is empty: the bucket (0: not known) and slot of the earliest event
	minS     int32 //
	lane     ring[A]
	seq      uint64
	slots    []slot[T, A]
	free     int32   // the first free slot (0: none)
	scratch  []int32 // for sorting a bucket
}

// The radix heap's digits: digitBits bits each, levels of them in a time.
const (
	digitBits = 9
	radix     = 1 << digitBits
	levels    = (63 + digitBits - 1) / digitBits
	levelBits = 3                  // levels fit in levelBits bits
	nbuckets  = radix << levelBits // levels*radix rounded up to a power of two: 64 words of 64 bits
)

// levels fit in levelBits bits, and mask in the 64 bits of words (else
// these array lengths are negative).
var _ [1<<levelBits - levels]struct{}
var _ [64 - nbuckets/64]struct{}

// levelOf[n] is the level of a time whose highest bit differing from the
// base is bit n-1, (n-1)/digitBits, for n from 1 to 63.
const levelOf = "\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x03\x03\x03\x03\x03\x03\x03\x03\x03" +
	"\x04\x04\x04\x04\x04\x04\x04\x04\x04" +
	"\x05\x05\x05\x05\x05\x05\x05\x05\x05" +
	"\x06\x06\x06\x06\x06\x06\x06\x06\x06"

// levelOf is written for 9-bit digits and covers bit lengths up to 63
// (times are not negative), padded to 64 entries.
var _ [len(levelOf) - 64]struct{}
var _ [9 - digitBits]struct{}
var _ [digitBits - 9]struct{}

// Schedule adds an event at time at (now: the current time) and returns its
// handle. Events at the current time go to the lane: their sequence is
// larger than that of every event already at the current time, so
// first-in-first-out is (time, sequence) order.
func (c *Calendar[T, A]) Schedule(at, now T, a A) Handle[T] {
	c.seq++
	return c.insert(now, at-now, c.seq, a)
}

// After adds an event d from now (never, if that is past the largest time).
func (c *Calendar[T, A]) After(now, d T, a A) Handle[T] {
	c.seq++
	return c.insert(now, d, c.seq, a)
}

// Ready adds an event at the current time (Schedule at now, without a
// handle).
func (c *Calendar[T, A]) Ready(a A) {
	c.seq++
	c.lane.push(laneItem[A]{seq: c.seq, a: a})
}

// insert adds an event d from now: to the lane if d is not positive (seq is
// then the newest sequence), else to the radix heap. seq is the newest
// sequence (schedule) or an older one (move): only the latter can break a
// bucket's sequence order.
func (c *Calendar[T, A]) insert(now, d T, seq uint64, a A) Handle[T] {
	if d <= 0 {
		r := &c.lane
		if r.n == len(r.buf) {
			return c.insertGrow(now, d, seq, a)
		}
		r.buf[(r.head+r.n)&(len(r.buf)-1)] = laneItem[A]{seq: seq, a: a}
		r.n++
		return Handle[T]{at: now, seq: seq, slot: -1}
	}
	s := c.free
	if s == 0 {
		return c.insertGrow(now, d, seq, a)
	}
	at := now + d
	if at < now { // past the largest time (an After of the largest delay): never
		at = T(math.MaxInt64)
	}
	sl := &c.slots[s]
	c.free = sl.next
	sl.a, sl.at, sl.seq, sl.next = a, at, seq, 0 // free slots are not dead
	k := c.bucketOf(at)
	if k == 0 { // not reached while time only moves forward; kept exact anyway
		c.insertB0(s)
		return Handle[T]{at: at, seq: seq, slot: s}
	}
	if seq == c.seq {
		c.append(k, s) // the newest event: last in any bucket's order
	} else {
		c.push(k, s)
	}
	if c.minK != 0 && c.earlier(s, c.minS) {
		c.minK, c.minS = k, s
	}
	return Handle[T]{at: at, seq: seq, slot: s}
}

// insertGrow is insert when the lane or the pool is full: it grows it and
// inserts.
func (c *Calendar[T, A]) insertGrow(now, d T, seq uint64, a A) Handle[T] {
	if d <= 0 {
		c.lane.grow()
	} else {
		c.grow()
	}
	return c.insert(now, d, seq, a)
}

// grow doubles the pool (none of its slots is free), putting the new slots
// on the free list in index order: slots are handed out in the same order
// as one at a time.
func (c *Calendar[T, A]) grow() {
	n := len(c.slots)
	if n == 0 {
		n = 1 // slot 0 ends lists
	}
	c.slots = append(c.slots, make([]slot[T, A], n+max(n, 64)-len(c.slots))...)
	for s := len(c.slots) - 1; s >= n; s-- {
		c.slots[s].next = c.free
		c.free = int32(s)
	}
}

// insertB0 puts slot s in bucket 0 at its place in sequence order.
func (c *Calendar[T, A]) insertB0(s int32) {
	seq := c.slots[s].seq
	var prev int32
	next := c.b0h
	for next != 0 && c.slots[next].seq < seq {
		prev, next = next, c.slots[next].next
	}
	c.slots[s].next = next
	if prev == 0 {
		c.b0h = s
	} else {
		c.slots[prev].next = s
	}
	if next == 0 {
		c.b0t = s
	}
}

// earlier reports whether slot s's event comes before slot t's.
func (c *Calendar[T, A]) earlier(s, t int32) bool {
	a, b := &c.slots[s], &c.slots[t]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// push appends slot s (its next 0) to bucket k (not 0), noting when that
// breaks the bucket's sequence order.
func (c *Calendar[T, A]) push(k int, s int32) {
	k &= nbuckets - 1 // (it is less already)
	if t := c.tail[k]; t != 0 && c.slots[s].seq < c.slots[t].seq {
		c.unsorted[k>>6] |= 1 << (k & 63)
	}
	c.append(k, s)
}

// append appends slot s (its next 0) to bucket k (not 0), which stays in
// sequence order if it was (s is later than every event in it). It does
// not branch on whether bucket k was empty: the link goes to the tail's
// next, slot 0's if the bucket is empty (nothing reads it: lists end at
// 0), and the head and the bitmaps are set either way.
func (c *Calendar[T, A]) append(k int, s int32) {
	k &= nbuckets - 1 // (it is less already)
	t := c.tail[k]
	c.slots[t].next = s
	h := c.head[k]
	if t == 0 {
		h = s
	}
	c.head[k] = h
	c.tail[k] = s
	c.mask[k>>6] |= 1 << (k & 63)
	c.words |= 1 << (k >> 6)
}

// bucketOf is the bucket of a time not earlier than base (0: base itself).
func (c *Calendar[T, A]) bucketOf(at T) int {
	x := uint64(at ^ c.base)
	if x == 0 {
		return 0
	}
	return bucketAt(uint64(at), x)
}

// bucketAt is the bucket of time at, x being at^base (not 0).
func bucketAt(at, x uint64) int {
	l := uint(levelOf[bits.Len64(x)&63]) // the level
	return int(l*radix | uint(at>>(l*digitBits&63))&(radix-1))
}

// empty reports whether no bucket above 0 holds an event.
func (c *Calendar[T, A]) empty() bool { return c.words == 0 }

// clear empties bucket k, clearing its word's bit in words (without a
// branch) when the word empties with it.
func (c *Calendar[T, A]) clear(k int) {
	k &= nbuckets - 1
	c.head[k], c.tail[k] = 0, 0
	c.unsorted[k>>6] &^= 1 << (k & 63)
	m := c.mask[k>>6] &^ (1 << (k & 63))
	c.mask[k>>6] = m
	var none uint64
	if m == 0 {
		none = 1
	}
	c.words &^= none << (k >> 6)
}

// lowest is the lowest non-empty bucket (not empty).
func (c *Calendar[T, A]) lowest() int {
	w := bits.TrailingZeros64(c.words) & (nbuckets/64 - 1)
	return w<<6 | bits.TrailingZeros64(c.mask[w])
}

// findMin notes the earliest live event of the lowest non-empty bucket
// (bucket 0 empty), dropping the cancelled events it passes; it reports
// false when every bucket is empty.
func (c *Calendar[T, A]) findMin() bool {
	for !c.empty() {
		k := c.lowest()
		if k < radix && c.unsorted[k>>6]&(1<<(k&63)) == 0 {
			// One time, in sequence order: the first live event.
			s := c.head[k]
			for s != 0 && c.slots[s].dead {
				next := c.slots[s].next
				c.freeSlot(s)
				s = next
			}
			if s != 0 {
				c.head[k] = s
				c.minK, c.minS = k, s
				return true
			}
			c.clear(k)
			continue
		}
		var prev, m int32
		for s := c.head[k]; s != 0; {
			sl := &c.slots[s]
			next := sl.next
			if sl.dead { // unlink and free it
				if prev == 0 {
					c.head[k] = next
				} else {
					c.slots[prev].next = next
				}
				if c.tail[k] == s {
					c.tail[k] = prev
				}
				c.freeSlot(s)
			} else {
				if m == 0 || c.earlier(s, m) {
					m = s
				}
				prev = s
			}
			s = next
		}
		if m != 0 {
			c.minK, c.minS = k, m
			return true
		}
		c.clear(k)
	}
	return false
}

// top is the slot of the earliest live future event (0: none), after
// dropping cancelled ones.
func (c *Calendar[T, A]) top() int32 {
	for s := c.b0h; s != 0; s = c.b0h {
		if !c.slots[s].dead {
			return s
		}
		c.dropB0()
	}
	if c.minK != 0 && !c.slots[c.minS].dead {
		return c.minS
	}
	c.minK = 0
	if !c.findMin() {
		return 0
	}
	return c.minS
}

// dropB0 removes bucket 0's head and frees its slot.
func (c *Calendar[T, A]) dropB0() {
	s := c.b0h
	c.b0h = c.slots[s].next
	c.freeSlot(s)
}

// freeSlot puts slot s on the free list, dropping what it referred to (a
// stale handle's sequence no longer matches). A free slot is not dead,
// refers to nothing and has sequence 0 (no handle's); at is left as it
// was.
func (c *Calendar[T, A]) freeSlot(s int32) {
	sl := &c.slots[s]
	sl.a, sl.seq, sl.next, sl.dead = *new(A), 0, c.free, false
	c.free = s
}

// settle spreads the lowest non-empty bucket (bucket 0 empty) over lower
// ones, or makes it bucket 0 if it is a level-0 bucket (one time, which
// becomes the base) or holds one event (its time becomes the base).
// Spreading a bucket of level L makes the new base its earliest time if
// top found it, else the bucket's lower bound (the base's digits above
// level L, the bucket's digit there, zeros below), without a pass to find
// the earliest. Every event in the bucket is at or after the new base and differs from it below L only, so
// each goes down at least one level, and every event in a higher bucket
// keeps its bucket (it differs from the new base in the same digit as
// from the old one). From the lower bound bucket 0 may stay empty
// (nothing at the new base): the caller settles again. Cancelled events a
// spread meets are dropped. settle is called only to take an event out,
// so the new base is not later than the event about to run, and no later
// insertion can be earlier. It reports false when nothing is pending.
func (c *Calendar[T, A]) settle() bool {
	if c.empty() {
		c.base = 0 // nothing pending: any base at or before every later time
		return false
	}
	k := c.lowest()
	s := c.head[k]
	if k < radix || s == c.tail[k] {
		// One time (a level-0 bucket), or one event at any level: the
		// spread from its time makes the bucket bucket 0 whole and
		// moves nothing else. A level-0 bucket or a single event found
		// out of order (findMin dropped others) is sorted.
		c.base = c.slots[s].at
		c.b0h, c.b0t = s, c.tail[k]
		if c.unsorted[k>>6]&(1<<(k&63)) != 0 {
			c.sortB0()
		}
		c.clear(k)
		c.minK = 0
		return true
	}
	unsorted := c.unsorted[k>>6]&(1<<(k&63)) != 0 // else the spread keeps the order
	c.clear(k)
	slots := c.slots
	base := slots[s].at
	if c.minK == k { // top found the earliest
		base = slots[c.minS].at
	} else {
		// The lower bound (sh: digitBits times the level).
		sh := uint(k/radix) * digitBits
		base = T(uint64(c.base)>>(sh+digitBits)<<(sh+digitBits) | uint64(k&(radix-1))<<sh)
	}
	c.base, c.minK = base, 0
	sorted := true
	for s != 0 {
		sl := &slots[s]
		next := sl.next
		sl.next = 0
		if sl.dead {
			c.freeSlot(s)
		} else if x := uint64(sl.at ^ base); x != 0 {
			j := bucketAt(uint64(sl.at), x)
			if unsorted {
				c.push(j, s)
			} else {
				c.append(j, s)
			}
		} else if c.b0h == 0 {
			c.b0h, c.b0t = s, s
		} else {
			sorted = sorted && (!unsorted || slots[c.b0t].seq < sl.seq)
			slots[c.b0t].next = s
			c.b0t = s
		}
		s = next
	}
	if !sorted {
		c.sortB0()
	}
	return true
}

// sortB0 puts bucket 0 (one time) in sequence order.
func (c *Calendar[T, A]) sortB0() {
	b := c.scratch[:0]
	for s := c.b0h; s != 0; s = c.slots[s].next {
		b = append(b, s)
	}
	for i := 1; i < len(b); i++ {
		s := b[i]
		q := c.slots[s].seq
		j := i
		for ; j > 0 && c.slots[b[j-1]].seq > q; j-- {
			b[j] = b[j-1]
		}
		b[j] = s
	}
	for i := 0; i < len(b)-1; i++ {
		c.slots[b[i]].next = b[i+1]
	}
	c.slots[b[len(b)-1]].next = 0
	c.b0h, c.b0t = b[0], b[len(b)-1]
	c.scratch = b
}

// LaneLen is the number of events in the lane (at the current time).
func (c *Calendar[T, A]) LaneLen() int { return c.lane.n }

// NextFuture is the time of the earliest future event (not in the lane).
// It does not settle the radix heap: time may move forward to before that
// event without it being taken (Sleep's fast path), and later insertions
// may come first.
func (c *Calendar[T, A]) NextFuture() (T, bool) {
	if s := c.top(); s != 0 {
		return c.slots[s].at, true
	}
	return 0, false
}

// pop removes the earliest event (now: the current time): Front and Take
// in one.
func (c *Calendar[T, A]) pop(now T) (T, A, bool) {
	s, ok := c.Front(now)
	if !ok {
		var zero A
		return 0, zero, false
	}
	if s == 0 {
		l := c.lane.buf[c.lane.head]
		c.lane.pop()
		return now, l.a, true
	}
	at, a := c.slots[s].at, c.slots[s].a
	c.dropB0()
	return at, a, true
}

// Front finds the earliest event (now: the current time) for a caller
// about to take it (Take, or pop after it: nothing may be inserted in
// between, as it settles the radix heap): s is its place, the head of
// bucket 0, or 0 if it is the lane's head; ok is false when nothing is
// pending. Lane items carry the current time and a larger sequence than
// anything already in the future events at that time, which can only be
// in bucket 0: the lane goes first unless bucket 0's head is at the
// current time and older.
func (c *Calendar[T, A]) Front(now T) (s int32, ok bool) {
	for {
		if s := c.b0h; s != 0 {
			sl := &c.slots[s]
			if sl.dead {
				c.dropB0()
				continue
			}
			if c.lane.n > 0 && (sl.at > now || c.lane.buf[c.lane.head].seq < sl.seq) {
				return 0, true
			}
			return s, true
		}
		if c.lane.n > 0 {
			return 0, true
		}
		if !c.settle() {
			return 0, false
		}
	}
}

// LaneFirst reports whether the lane's head is the earliest event, and so
// where Front would find it (0), without a call: bucket 0 is empty.
func (c *Calendar[T, A]) LaneFirst() bool { return c.lane.n > 0 && c.b0h == 0 }

// Event is the time and payload of the event Front found at s.
func (c *Calendar[T, A]) Event(s int32, now T) (T, A) {
	if s == 0 {
		return now, c.lane.buf[c.lane.head].a
	}
	return c.slots[s].at, c.slots[s].a
}

// Take removes the event Front found at s (bucket 0's head is dropB0
// written out, within the inlining budget).
func (c *Calendar[T, A]) Take(s int32) {
	if s == 0 {
		c.lane.pop()
		return
	}
	sl := &c.slots[s]
	c.b0h = sl.next
	sl.a, sl.seq, sl.next, sl.dead = *new(A), 0, c.free, false
	c.free = s
}

// Pending is an event as PendingAt shows it: its sequence, its handle
// (zero for an event in the lane) and its payload, which the caller may
// change in place until the calendar next changes.
type Pending[T ~int64, A any] struct {
	Seq     uint64
	Handle  Handle[T]
	Payload *A
}

// PendingAt appends the live events at time at (the current time) to dst:
// the lane's, in lane order, then the future events at time at, which are
// all in the bucket of at.
func (c *Calendar[T, A]) PendingAt(at T, dst []Pending[T, A]) []Pending[T, A] {
	r := &c.lane
	for i := 0; i < r.n; i++ {
		it := &r.buf[(r.head+i)&(len(r.buf)-1)]
		dst = append(dst, Pending[T, A]{Seq: it.seq, Payload: &it.a})
	}
	add := func(s int32) {
		if sl := &c.slots[s]; sl.at == at && !sl.dead {
			dst = append(dst, Pending[T, A]{Seq: sl.seq, Handle: Handle[T]{at: at, seq: sl.seq, slot: s}, Payload: &sl.a})
		}
	}
	s := c.b0h
	if k := c.bucketOf(at); k != 0 {
		s = c.head[k]
	}
	for ; s != 0; s = c.slots[s].next {
		add(s)
	}
	return dst
}

// live reports whether the future event h names is still pending.
func (c *Calendar[T, A]) live(h Handle[T]) bool {
	return h.slot > 0 && int(h.slot) < len(c.slots) && c.slots[h.slot].seq == h.seq && !c.slots[h.slot].dead
}

// Cancel removes the event h names, in the future events or in the lane,
// and reports whether it was pending.
func (c *Calendar[T, A]) Cancel(h Handle[T]) bool {
	if h.slot < 0 {
		return c.lane.remove(h.seq)
	}
	if !c.live(h) {
		return false
	}
	c.slots[h.slot].dead = true
	var zero A
	c.slots[h.slot].a = zero
	return true
}

// Move reschedules the future event h names at time at, keeping its
// sequence (a preempted application's wake-up); at must be later than the
// current time.
func (c *Calendar[T, A]) Move(h Handle[T], at T) Handle[T] {
	if !c.live(h) {
		return h
	}
	a := c.slots[h.slot].a
	var zero A
	c.slots[h.slot].dead = true
	c.slots[h.slot].a = zero
	return c.insert(0, at, h.seq, a) // at > 0: not the lane
}

// ring is a growable first-in-first-out ring buffer of lane items.
type ring[A any] struct {
	buf  []laneItem[A] // len is a power of two
	head int
	n    int
}

func (r *ring[A]) push(it laneItem[A]) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = it
	r.n++
}

// grow doubles the ring's capacity.
func (r *ring[A]) grow() {
	nb := make([]laneItem[A], max(16, 2*len(r.buf)))
	for i := 0; i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = nb, 0
}

func (r *ring[A]) pop() {
	r.buf[r.head] = laneItem[A]{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
}

// remove takes the item of sequence seq out of the ring, keeping the order
// of the others.
func (r *ring[A]) remove(seq uint64) bool {
	mask := len(r.buf) - 1
	for i := 0; i < r.n; i++ {
		if r.buf[(r.head+i)&mask].seq != seq {
			continue
		}
		for j := i; j < r.n-1; j++ {
			r.buf[(r.head+j)&mask] = r.buf[(r.head+j+1)&mask]
		}
		r.buf[(r.head+r.n-1)&mask] = laneItem[A]{}
		r.n--
		return true
	}
	return false
}

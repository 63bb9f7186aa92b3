package sim

import "math/bits"

// item is one scheduled event in the calendar's future: its time, its
// sequence number (the tie-break: first scheduled, first run) and the index
// of what to do in the calendar's pool. Items hold no pointers, so moving
// them costs no write barrier and the garbage collector does not scan them.
type item struct {
	at   Time
	seq  uint64
	slot int32
}

func lessItem(a, b item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// action is what an event does: resume a process, or call fn.
type action struct {
	proc *Proc
	fn   func()
}

// laneItem is an event in the lane (the current time): the action inline.
type laneItem struct {
	seq uint64
	action
}

// Handle names a scheduled callback so that it can be cancelled.
type Handle struct {
	at   Time
	seq  uint64
	slot int32 // its slot in the calendar's pool; -1: in the lane
}

// Valid reports whether h names an event (the zero Handle does not).
func (h Handle) Valid() bool { return h.seq != 0 }

// At is the time the event was scheduled for.
func (h Handle) At() Time { return h.at }

// slot is a pooled action of a future item; seq tells a cancelled or reused
// slot from the one a handle names.
type slot struct {
	action
	seq  uint64
	dead bool // cancelled: skipped (not counted) when it reaches the top
}

// calendar holds pending events in (time, sequence) order: a radix heap of
// pointer-free items for the future and a first-in-first-out lane for
// events at the current time (wake-ups, zero-delay hand-offs and
// callbacks), which never touch the radix heap.
//
// The radix heap relies on time never going back: every item it receives
// is later than the current time, which is not earlier than base, the time
// of the last item it gave out. Times are read as 16 hexadecimal digits.
// An item at time t sits in the bucket of (level, digit): level is the
// highest digit in which t differs from base and digit is t's digit there
// (larger than base's). Buckets in (level, digit) order hold ever later
// items, so the earliest item is in the lowest non-empty bucket. Bucket 0
// (items at time base) is kept in sequence order. Taking the earliest item
// out of a bucket makes its time the new base and spreads the bucket over
// lower levels (a level-0 bucket holds a single time: it becomes bucket 0
// whole): an item moves down at most once per hexadecimal digit of the
// spread of pending times (three for a spread of 4,096 ps), and inserting
// is an append, with no comparison.
//
// The actions of future items live in a pool of slots reused through a
// free list: nothing is allocated per event in steady state. Cancelling
// marks the slot dead; the item is dropped when it would be the earliest,
// without counting as an event.
type calendar struct {
	b0     []item // bucket 0: items at time base, in sequence order
	b0head int
	bucket [levels * radix][]item           // bucket level*radix+digit, unordered
	mask   [(levels*radix + 63) / 64]uint64 // bit k: bucket k is not empty
	words  uint64                           // bit w: mask[w] is not 0
	base   Time
	minK   int // when b0 is empty: the bucket and index of the earliest item (minK 0: not known)
	minI   int
	spare  [][]item // emptied buckets' arrays, for buckets that have none
	lane   ring
	seq    uint64
	slots  []slot
	free   []int32
}

// The radix heap's digits: digitBits bits each, levels of them in a time.
const (
	digitBits = 4
	radix     = 1 << digitBits
	levels    = (63 + digitBits - 1) / digitBits
)

func newCalendar() calendar { return calendar{spare: make([][]item, 0, 64)} }

// schedule adds an event at time at (now: the current time) and returns its
// handle. Events at the current time go to the lane: their sequence is
// larger than that of every event already at the current time, so
// first-in-first-out is (time, sequence) order.
func (c *calendar) schedule(at, now Time, a action) Handle {
	c.seq++
	if at == now {
		c.lane.push(laneItem{seq: c.seq, action: a})
		return Handle{at: at, seq: c.seq, slot: -1}
	}
	return c.insert(at, c.seq, a)
}

// insert adds a future item (at later than the current time).
func (c *calendar) insert(at Time, seq uint64, a action) Handle {
	var s int32
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		s = int32(len(c.slots))
		c.slots = append(c.slots, slot{})
	}
	c.slots[s] = slot{action: a, seq: seq}
	it := item{at: at, seq: seq, slot: s}
	k := c.bucketOf(at)
	if k == 0 { // not reached while time only moves forward; kept exact anyway
		c.b0 = append(c.b0, it)
		for i := len(c.b0) - 1; i > c.b0head && c.b0[i].seq < c.b0[i-1].seq; i-- {
			c.b0[i], c.b0[i-1] = c.b0[i-1], c.b0[i]
		}
		return Handle{at: at, seq: seq, slot: s}
	}
	c.push(k, it)
	if c.minK != 0 && lessItem(it, c.bucket[c.minK][c.minI]) {
		c.minK, c.minI = k, len(c.bucket[k])-1
	}
	return Handle{at: at, seq: seq, slot: s}
}

// push appends it to bucket k (not 0). A bucket without an array takes an
// emptied one: arrays go round the buckets, so that once they are as large
// as the run needs nothing is allocated, however far time goes.
func (c *calendar) push(k int, it item) {
	if c.bucket[k] == nil {
		if n := len(c.spare); n > 0 {
			c.bucket[k] = c.spare[n-1]
			c.spare[n-1] = nil
			c.spare = c.spare[:n-1]
		} else {
			c.bucket[k] = make([]item, 0, 16)
		}
	}
	c.bucket[k] = append(c.bucket[k], it)
	c.mask[k>>6] |= 1 << (k & 63)
	c.words |= 1 << (k >> 6)
}

// bucketOf is the bucket of a time not earlier than base (0: base itself).
func (c *calendar) bucketOf(at Time) int {
	x := uint64(at ^ c.base)
	if x == 0 {
		return 0
	}
	level := (bits.Len64(x) - 1) / digitBits
	return level<<digitBits | int(uint64(at)>>(digitBits*level)&(radix-1))
}

// empty reports whether no bucket above 0 holds an item.
func (c *calendar) empty() bool { return c.words == 0 }

// unmark notes that bucket k is empty.
func (c *calendar) unmark(k int) {
	c.mask[k>>6] &^= 1 << (k & 63)
	if c.mask[k>>6] == 0 {
		c.words &^= 1 << (k >> 6)
	}
}

// lowest is the lowest non-empty bucket (not empty).
func (c *calendar) lowest() int {
	w := bits.TrailingZeros64(c.words)
	return w<<6 | bits.TrailingZeros64(c.mask[w])
}

// findMin notes where the earliest item of the lowest non-empty bucket is
// (b0 and not all buckets empty).
func (c *calendar) findMin() {
	k := c.lowest()
	b := c.bucket[k]
	m := 0
	for i := 1; i < len(b); i++ {
		if lessItem(b[i], b[m]) {
			m = i
		}
	}
	c.minK, c.minI = k, m
}

// top is the earliest live item, after dropping cancelled ones.
func (c *calendar) top() (item, bool) {
	for {
		if c.b0head < len(c.b0) {
			t := c.b0[c.b0head]
			if !c.slots[t.slot].dead {
				return t, true
			}
			c.dropB0()
			continue
		}
		if c.empty() {
			return item{}, false
		}
		if c.minK == 0 {
			c.findMin()
		}
		t := c.bucket[c.minK][c.minI]
		if !c.slots[t.slot].dead {
			return t, true
		}
		// A cancelled item: out of its bucket (order there does not matter).
		b := c.bucket[c.minK]
		b[c.minI] = b[len(b)-1]
		c.bucket[c.minK] = b[:len(b)-1]
		if len(b) == 1 {
			c.unmark(c.minK)
			c.bucket[c.minK] = nil
			c.spare = append(c.spare, b[:0])
		}
		c.freeSlot(t.slot)
		c.minK = 0
	}
}

// dropB0 removes bucket 0's head and frees its slot.
func (c *calendar) dropB0() item {
	t := c.b0[c.b0head]
	c.b0head++
	if c.b0head == len(c.b0) {
		c.b0, c.b0head = c.b0[:0], 0
	}
	c.freeSlot(t.slot)
	return t
}

func (c *calendar) freeSlot(s int32) {
	c.slots[s] = slot{}
	c.free = append(c.free, s)
}

// settle makes bucket 0 (empty) the items at the earliest time of the
// lowest non-empty bucket, that time the base, and spreads the rest of the
// bucket below (every item there differs from the new base in a lower
// digit; a level-0 bucket holds one time and becomes bucket 0 whole). It
// is called only to take an item out, so the new base is the time of an
// event about to run (or of cancelled ones before it), and no later
// insertion can be earlier. It reports false when nothing is pending.
func (c *calendar) settle() bool {
	if c.empty() {
		c.base = 0 // nothing pending: any base at or before every later time
		return false
	}
	k := c.lowest()
	b := c.bucket[k]
	if k < radix {
		c.base = b[0].at
		c.bucket[k] = nil
		if c.b0 != nil {
			c.spare = append(c.spare, c.b0[:0])
		}
		c.b0 = b
	} else {
		var m Time
		if c.minK == k { // top found it
			m = b[c.minI].at
		} else {
			m = b[0].at
			for _, it := range b[1:] {
				m = min(m, it.at)
			}
		}
		c.base = m
		for _, it := range b {
			j := c.bucketOf(it.at)
			if j == 0 {
				c.b0 = append(c.b0, it)
				continue
			}
			c.push(j, it)
		}
		c.bucket[k] = nil
		c.spare = append(c.spare, b[:0])
	}
	c.unmark(k)
	c.minK = 0
	sortBySeq(c.b0)
	return true
}

// removeTop takes out the earliest live future item (there is one: top
// found it) and frees its slot.
func (c *calendar) removeTop() (item, action) {
	for {
		if c.b0head == len(c.b0) {
			c.settle()
		}
		t := c.b0[c.b0head]
		a := c.slots[t.slot]
		c.dropB0()
		if !a.dead {
			return t, a.action
		}
	}
}

// sortBySeq puts items of one time in sequence order (they come in
// sequence order but for a moved item or a spread bucket's mix).
func sortBySeq(b []item) {
	for i := 1; i < len(b); i++ {
		if b[i].seq > b[i-1].seq {
			continue
		}
		it := b[i]
		j := i
		for ; j > 0 && b[j-1].seq > it.seq; j-- {
			b[j] = b[j-1]
		}
		b[j] = it
	}
}

// treeMin is the time of the earliest future event.
func (c *calendar) treeMin() (Time, bool) {
	m, ok := c.top()
	return m.at, ok
}

// minProc is the process the earliest event resumes (nil: a callback, or
// no event).
func (c *calendar) minProc() *Proc {
	if c.lane.n > 0 {
		return c.lane.buf[c.lane.head].proc
	}
	if m, ok := c.top(); ok {
		return c.slots[m.slot].proc
	}
	return nil
}

// pop removes the earliest event (now: the current time): peek and take
// in one, without looking for the earliest future item when the lane goes
// first. Future items at the current time are in bucket 0 (the base is
// the current time once one of them ran); every other one is later than
// the lane's items.
func (c *calendar) pop(now Time) (Time, action, bool) {
	for {
		if c.b0head < len(c.b0) {
			h := c.b0[c.b0head]
			s := &c.slots[h.slot]
			if s.dead {
				c.dropB0()
				continue
			}
			if c.lane.n > 0 && (h.at > now || c.lane.buf[c.lane.head].seq < h.seq) {
				break
			}
			a := s.action
			c.dropB0()
			return h.at, a, true
		}
		if c.lane.n > 0 {
			break
		}
		if !c.settle() {
			return 0, action{}, false
		}
	}
	l := c.lane.buf[c.lane.head]
	c.lane.pop()
	return now, l.action, true
}

// peek is the earliest event without removing it, and whether it is the
// lane's head (take removes it). Lane items carry the current time and a
// larger sequence than anything already in the future items at that time,
// so the lane goes first only when the earliest future item is later or
// younger.
func (c *calendar) peek(now Time) (at Time, a action, lane, ok bool) {
	m, ok := c.top()
	if c.lane.n > 0 {
		l := &c.lane.buf[c.lane.head]
		if !ok || m.at > now || (m.at == now && l.seq < m.seq) {
			return now, l.action, true, true
		}
	}
	if !ok {
		return 0, action{}, false, false
	}
	return m.at, c.slots[m.slot].action, false, true
}

// take removes the event peek returned (lane: it was the lane's head).
func (c *calendar) take(lane bool) {
	if lane {
		c.lane.pop()
	} else {
		c.removeTop()
	}
}

// itemsAt appends the live future items at time at to dst (the chooser's
// candidates): they are all in the bucket of at.
func (c *calendar) itemsAt(at Time, dst []item) []item {
	k := c.bucketOf(at)
	b := c.bucket[k]
	if k == 0 {
		b = c.b0[c.b0head:]
	}
	for _, it := range b {
		if it.at == at && !c.slots[it.slot].dead {
			dst = append(dst, it)
		}
	}
	return dst
}

// live reports whether the future event h names is still pending.
func (c *calendar) live(h Handle) bool {
	return h.slot >= 0 && int(h.slot) < len(c.slots) && c.slots[h.slot].seq == h.seq && !c.slots[h.slot].dead
}

// cancel removes the event h names, in the future items or in the lane.
func (c *calendar) cancel(h Handle) bool {
	if h.slot < 0 {
		return c.lane.remove(h.seq)
	}
	if !c.live(h) {
		return false
	}
	c.slots[h.slot].dead = true
	c.slots[h.slot].action = action{}
	return true
}

// move reschedules the future event h names at time at, keeping its
// sequence (a preempted application's wake-up); at must be later than now.
func (c *calendar) move(h Handle, at Time) Handle {
	if !c.live(h) {
		return h
	}
	a := c.slots[h.slot].action
	c.slots[h.slot].dead = true
	c.slots[h.slot].action = action{}
	return c.insert(at, h.seq, a)
}

// ring is a growable first-in-first-out ring buffer of lane items.
type ring struct {
	buf  []laneItem // len is a power of two
	head int
	n    int
}

func (r *ring) push(it laneItem) {
	if r.n == len(r.buf) {
		nb := make([]laneItem, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = it
	r.n++
}

func (r *ring) pop() {
	r.buf[r.head] = laneItem{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
}

// remove takes the item of sequence seq out of the ring, keeping the order
// of the others.
func (r *ring) remove(seq uint64) bool {
	mask := len(r.buf) - 1
	for i := 0; i < r.n; i++ {
		if r.buf[(r.head+i)&mask].seq != seq {
			continue
		}
		for j := i; j < r.n-1; j++ {
			r.buf[(r.head+j)&mask] = r.buf[(r.head+j+1)&mask]
		}
		r.buf[(r.head+r.n-1)&mask] = laneItem{}
		r.n--
		return true
	}
	return false
}

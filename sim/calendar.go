package sim

import "math/bits"

// item is one scheduled event in the calendar's tree: its time, its
// sequence number (the tie-break: first scheduled, first run) and the index
// of what to do in the calendar's pool. Items hold no pointers, so the
// heap moves them without write barriers and the garbage collector does
// not scan them.
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

// before reports whether a comes before b, without a data-dependent branch:
// (time, sequence) compared as one 128-bit number (time's sign bit flipped
// so that it orders as unsigned). Choosing the least of a heap node's
// children is a coin toss for the branch predictor; a borrow chain and
// conditional moves are not.
func before(a, b *item) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at)^1<<63, uint64(b.at)^1<<63, borrow)
	return borrow
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

// slot is a pooled action of a heap item; seq tells a cancelled or reused
// slot from the one a handle names.
type slot struct {
	action
	seq  uint64
	dead bool // cancelled: skipped (not counted) when it reaches the top
}

// calendar holds pending events in (time, sequence) order: a 4-ary min-heap
// of pointer-free items for the future and a first-in-first-out lane for
// events at the current time (wake-ups, zero-delay hand-offs and
// callbacks), which never touch the heap. The actions of heap items live in
// a pool of slots reused through a free list: nothing is allocated per
// event in steady state. Cancelling marks the slot dead; the heap drops it
// when it reaches the top, without counting it as an event.
type calendar struct {
	heap  []item
	lane  ring
	seq   uint64
	slots []slot
	free  []int32
}

func newCalendar() calendar { return calendar{} }

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
	c.heap = append(c.heap, item{at: at, seq: seq, slot: s})
	c.up(len(c.heap) - 1)
	return Handle{at: at, seq: seq, slot: s}
}

func (c *calendar) up(i int) {
	h := c.heap
	it := h[i]
	for i > 0 {
		parent := (i - 1) / 4
		if !lessItem(it, h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = it
}

func (c *calendar) down(i int) {
	h := c.heap
	n := len(h)
	it := h[i]
	for {
		first := 4*i + 1
		if first+3 >= n {
			if first >= n {
				break
			}
			m := first
			for k := first + 1; k < n; k++ {
				if lessItem(h[k], h[m]) {
					m = k
				}
			}
			if lessItem(h[m], it) {
				h[i] = h[m]
				i = m
			}
			break
		}
		// The least of four children: two pairs, then their winners.
		a := first + int(before(&h[first+1], &h[first]))
		b := first + 2 + int(before(&h[first+3], &h[first+2]))
		if before(&h[b], &h[a]) != 0 {
			a = b
		}
		if !lessItem(h[a], it) {
			break
		}
		h[i] = h[a]
		i = a
	}
	h[i] = it
}

// removeTop takes the heap's minimum out and frees its slot.
func (c *calendar) removeTop() (item, action) {
	top := c.heap[0]
	n := len(c.heap) - 1
	c.heap[0] = c.heap[n]
	c.heap = c.heap[:n]
	if n > 0 {
		c.down(0)
	}
	a := c.slots[top.slot].action
	c.slots[top.slot] = slot{}
	c.free = append(c.free, top.slot)
	return top, a
}

// top is the heap's earliest live item, after dropping cancelled ones.
func (c *calendar) top() (item, bool) {
	for len(c.heap) > 0 {
		t := c.heap[0]
		if !c.slots[t.slot].dead {
			return t, true
		}
		c.removeTop()
	}
	return item{}, false
}

// treeMin is the time of the heap's earliest event.
func (c *calendar) treeMin() (Time, bool) {
	m, ok := c.top()
	return m.at, ok
}

// pop removes the earliest event (now: the current time): peek and take
// in one.
func (c *calendar) pop(now Time) (Time, action, bool) {
	m, ok := c.top()
	if c.lane.n > 0 {
		l := c.lane.buf[c.lane.head]
		if !ok || m.at > now || (m.at == now && l.seq < m.seq) {
			c.lane.pop()
			return now, l.action, true
		}
	}
	if !ok {
		return 0, action{}, false
	}
	it, a := c.removeTop()
	return it.at, a, true
}

// peek is the earliest event without removing it, and whether it is the
// lane's head (take removes it). Lane items carry the current time and a
// larger sequence than anything already in the heap at that time, so the
// lane goes first only when the heap's minimum is later or younger.
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

// live reports whether the heap event h names is still pending.
func (c *calendar) live(h Handle) bool {
	return h.slot >= 0 && int(h.slot) < len(c.slots) && c.slots[h.slot].seq == h.seq && !c.slots[h.slot].dead
}

// cancel removes the event h names, in the heap or in the lane.
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

// move reschedules the heap event h names at time at, keeping its sequence
// (a preempted application's wake-up); at must be later than now.
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

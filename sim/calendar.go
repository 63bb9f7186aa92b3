package sim

import "github.com/google/btree"

// item is one scheduled event in the calendar's tree: its time, its
// sequence number (the tie-break: first scheduled, first run) and the index
// of what to do in the calendar's pool. Items hold no pointers, so the
// btree moves them without write barriers and the garbage collector does
// not scan its nodes.
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
	at  Time
	seq uint64
}

// Valid reports whether h names an event (the zero Handle does not).
func (h Handle) Valid() bool { return h.seq != 0 }

// At is the time the event was scheduled for.
func (h Handle) At() Time { return h.at }

// calendar holds pending events in (time, sequence) order: a btree for the
// future and a first-in-first-out lane for events at the current time
// (wake-ups, zero-delay hand-offs and callbacks), which never touch the
// tree. The actions of tree items live in a pool of slots reused through a
// free list: nothing is allocated per event in steady state.
type calendar struct {
	tree  *btree.BTreeG[item]
	lane  ring
	seq   uint64
	slots []action
	free  []int32
}

func newCalendar() calendar {
	return calendar{tree: btree.NewG[item](32, lessItem)}
}

// schedule adds an event at time at (now: the current time) and returns its
// handle. Events at the current time go to the lane: their sequence is
// larger than that of every event already at the current time, so
// first-in-first-out is (time, sequence) order.
func (c *calendar) schedule(at, now Time, a action) Handle {
	c.seq++
	if at == now {
		c.lane.push(laneItem{seq: c.seq, action: a})
		return Handle{at: at, seq: c.seq}
	}
	var s int32
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		s = int32(len(c.slots))
		c.slots = append(c.slots, action{})
	}
	c.slots[s] = a
	c.tree.ReplaceOrInsert(item{at: at, seq: c.seq, slot: s})
	return Handle{at: at, seq: c.seq}
}

func (c *calendar) len() int { return c.tree.Len() + c.lane.n }

// treeMin is the time of the tree's earliest event.
func (c *calendar) treeMin() (Time, bool) {
	m, ok := c.tree.Min()
	return m.at, ok
}

// release frees the slot of a tree item and returns its action.
func (c *calendar) release(it item) action {
	a := c.slots[it.slot]
	c.slots[it.slot] = action{}
	c.free = append(c.free, it.slot)
	return a
}

// pop removes the earliest event (now: the current time). Lane items carry
// the current time and a larger sequence than anything already in the tree
// at that time, so the lane goes first only when the tree's minimum is later
// or younger.
func (c *calendar) pop(now Time) (Time, action, bool) {
	if c.lane.n > 0 {
		l := c.lane.buf[c.lane.head]
		if m, ok := c.tree.Min(); !ok || m.at > now || (m.at == now && l.seq < m.seq) {
			c.lane.pop()
			return now, l.action, true
		}
	}
	it, ok := c.tree.DeleteMin()
	if !ok {
		return 0, action{}, false
	}
	return it.at, c.release(it), true
}

// cancel removes the event h names, in the tree or in the lane.
func (c *calendar) cancel(h Handle) bool {
	if it, ok := c.tree.Delete(item{at: h.at, seq: h.seq}); ok {
		c.release(it)
		return true
	}
	return c.lane.remove(h.seq)
}

// move reschedules the tree event h names at time at, keeping its sequence
// (a preempted application's wake-up); at must be later than now.
func (c *calendar) move(h Handle, at Time) Handle {
	it, ok := c.tree.Delete(item{at: h.at, seq: h.seq})
	if !ok {
		return h
	}
	it.at = at
	c.tree.ReplaceOrInsert(it)
	return Handle{at: at, seq: h.seq}
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

package sim

import "github.com/google/btree"

// item is one scheduled event: either the resumption of a process or a
// callback. Items are values in the calendar; none is allocated per event.
type item struct {
	at   Time
	seq  uint64
	proc *Proc  // resume this process, or
	fn   func() // call this
}

func lessItem(a, b item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
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
// (wake-ups and zero-delay hand-offs), which never touch the tree.
type calendar struct {
	tree *btree.BTreeG[item]
	lane ring
	seq  uint64
}

func newCalendar() calendar {
	return calendar{tree: btree.NewG[item](32, lessItem)}
}

func (c *calendar) next() uint64 { c.seq++; return c.seq }

// push schedules it; items at the current time go to the lane.
func (c *calendar) push(it item, now Time) {
	if it.at == now && it.fn == nil {
		c.lane.push(it)
		return
	}
	c.tree.ReplaceOrInsert(it)
}

func (c *calendar) len() int { return c.tree.Len() + c.lane.n }

// pop removes the earliest event. Lane items carry the current time and a
// larger sequence than anything already in the tree at that time, so the
// lane goes first only when the tree's minimum is later or younger.
func (c *calendar) pop() (item, bool) {
	if c.lane.n > 0 {
		l := c.lane.buf[c.lane.head]
		if m, ok := c.tree.Min(); !ok || lessItem(l, m) {
			c.lane.pop()
			return l, true
		}
	}
	return c.tree.DeleteMin()
}

func (c *calendar) cancel(h Handle) bool {
	_, ok := c.tree.Delete(item{at: h.at, seq: h.seq})
	return ok
}

// ring is a growable first-in-first-out ring buffer of items.
type ring struct {
	buf  []item // len is a power of two
	head int
	n    int
}

func (r *ring) push(it item) {
	if r.n == len(r.buf) {
		nb := make([]item, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = it
	r.n++
}

func (r *ring) pop() {
	r.buf[r.head] = item{}
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
}

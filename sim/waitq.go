package sim

// WaitQueue is a first-in-first-out queue of blocked processes: the
// building block of semaphores, locks, mailboxes and completion flags.
type WaitQueue struct {
	procs []*Proc
	head  int
}

// Wait blocks p at the tail of the queue until WakeOne or WakeAll reaches it.
func (q *WaitQueue) Wait(p *Proc, reason string) {
	q.procs = append(q.procs, p)
	p.Block(reason)
}

// Len is the number of processes waiting.
func (q *WaitQueue) Len() int { return len(q.procs) - q.head }

// WakeOne wakes the longest-waiting process; it reports whether there was one.
func (q *WaitQueue) WakeOne() bool {
	for q.head < len(q.procs) {
		p := q.procs[q.head]
		q.procs[q.head] = nil
		q.head++
		if q.head == len(q.procs) {
			q.procs = q.procs[:0]
			q.head = 0
		}
		if p.Wake() {
			return true
		}
	}
	return false
}

// WakeAll wakes every waiting process, in arrival order, and returns how many.
func (q *WaitQueue) WakeAll() int {
	n := 0
	for q.WakeOne() {
		n++
	}
	return n
}

// Flag is a one-shot or resettable condition processes wait for: a request
// completing, a message arriving.
type Flag struct {
	set bool
	q   WaitQueue
}

// Set raises the flag and wakes every waiter.
func (f *Flag) Set() { f.set = true; f.q.WakeAll() }

// Reset lowers the flag.
func (f *Flag) Reset() { f.set = false }

// IsSet reports whether the flag is raised.
func (f *Flag) IsSet() bool { return f.set }

// Wait blocks p until the flag is raised (returns at once if it is).
func (f *Flag) Wait(p *Proc, reason string) {
	for !f.set {
		f.q.Wait(p, reason)
	}
}

package sim

import "fmt"

// Mutex is a lock between simulated processes (the threads of one rank):
// the bookkeeping of a pthread mutex without its costs, which the machine
// layer adds (a test-and-set on the lock word, a fence on release; see
// stacks/mpich's threadMutex). Unlock hands the lock to the
// longest-waiting process (FIFO), so no waiter starves. A process blocked
// on a Mutex names the mutex and its holder in deadlock reports: the
// "deadly embrace" of papers/mpich2-threads.txt section 4.5 shows up as
// "t1 blocked: mutex A held by t0".
type Mutex struct {
	name    string
	key     uint64 // footprint key (exploring)
	holder  *Proc
	waiters []*Proc
	reasons []string
}

// NewMutex returns an unlocked mutex called name.
func NewMutex(name string) *Mutex { return &Mutex{name: name, key: Key(name)} }

// Name is the mutex's name.
func (m *Mutex) Name() string { return m.name }

// Holder is the process holding the mutex, or nil.
func (m *Mutex) Holder() *Proc { return m.holder }

// TryLock takes the mutex for p if it is free.
func (m *Mutex) TryLock(p *Proc) bool {
	p.eng.touch(m.key)
	if m.holder != nil {
		return false
	}
	m.holder = p
	return true
}

// Lock takes the mutex for p, blocking p while another process holds it.
// Locking a mutex p already holds is a model bug (it would self-deadlock
// in pthreads): Lock fails the run naming both.
func (m *Mutex) Lock(p *Proc) {
	p.eng.touch(m.key)
	if m.holder == p {
		p.eng.Fail(fmt.Errorf("sim: %s locks mutex %s it already holds (self-deadlock)", p.name, m.name))
		p.Block("relocking mutex " + m.name)
		return
	}
	if m.holder == nil {
		m.holder = p
		return
	}
	m.waiters = append(m.waiters, p)
	x := p.rare()
	x.mutex = m
	p.Block(fmt.Sprintf("mutex %s held by %s", m.name, m.holder.name))
	x.mutex = nil
}

// Unlock releases the mutex held by p and hands it to the next waiter.
func (m *Mutex) Unlock(p *Proc) {
	p.eng.touch(m.key)
	if m.holder != p {
		holder := "nobody"
		if m.holder != nil {
			holder = m.holder.name
		}
		p.eng.Fail(fmt.Errorf("sim: %s unlocks mutex %s held by %s", p.name, m.name, holder))
		return
	}
	m.holder = nil
	if len(m.waiters) > 0 {
		next := m.waiters[0]
		copy(m.waiters, m.waiters[1:])
		m.waiters = m.waiters[:len(m.waiters)-1]
		m.holder = next
		next.Wake()
	}
}

// Cond is a condition variable over a Mutex (pthread_cond_t): Wait
// releases the mutex and blocks until Signal or Broadcast, then takes the
// mutex again.
type Cond struct {
	name string
	q    WaitQueue
}

// NewCond returns a condition variable called name.
func NewCond(name string) *Cond { return &Cond{name: name} }

// Wait releases m (held by p), waits for a signal and retakes m. As with
// pthreads, the caller re-checks its predicate in a loop.
func (c *Cond) Wait(p *Proc, m *Mutex) {
	m.Unlock(p)
	x := p.rare()
	x.cond = true
	c.q.Wait(p, "condition "+c.name)
	x.cond = false
	m.Lock(p)
}

// Signal wakes one waiter; it reports whether there was one.
func (c *Cond) Signal() bool { return c.q.WakeOne() }

// Broadcast wakes every waiter and returns how many.
func (c *Cond) Broadcast() int { return c.q.WakeAll() }

// Waiting is the number of processes waiting on c.
func (c *Cond) Waiting() int { return c.q.Len() }

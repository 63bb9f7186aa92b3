package sx4

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// semaphore is one System V semaphore.
type semaphore struct {
	name  string
	value int
	q     sim.WaitQueue
}

// Semget creates a System V semaphore (semget + semctl SETVAL) with an
// initial value and returns its id.
func (m *Machine) Semget(name string, initial int) int {
	m.sems = append(m.sems, &semaphore{name: name, value: initial})
	return len(m.sems) - 1
}

// Semop is the semop system call on semaphore id by process rank: delta -1
// waits until the value is positive and decrements it (P); +1 increments it
// and wakes a waiter (V). Each call costs semop_us and, being a system
// call, drains the caller's stores. A process that must wait sleeps in the
// kernel until a V.
func (m *Machine) Semop(p *sim.Proc, rank, id, delta int) error {
	if id < 0 || id >= len(m.sems) {
		return fmt.Errorf("sx4: semop by rank %d: no semaphore %d", rank, id)
	}
	s := m.sems[id]
	m.cpus[rank].Fence(p)
	p.Sleep(m.semop)
	switch {
	case delta < 0:
		for s.value < -delta {
			s.q.Wait(p, fmt.Sprintf("semop(%d) on System V semaphore %s", delta, s.name))
		}
		s.value += delta
	case delta > 0:
		s.value += delta
		s.q.WakeAll()
	}
	return nil
}

// SemValue is semaphore id's current value (semctl GETVAL, no timing).
func (m *Machine) SemValue(id int) int { return m.sems[id].value }

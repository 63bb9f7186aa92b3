// Package sysv holds System V semaphores as a machine's kernel keeps them:
// semget creates one with a value, semop waits (asleep in the kernel)
// until the value allows a decrement, or adds to it and wakes the
// waiters, each call at the machine's cost of one system call. Machines
// with System V IPC (the SX-4, the Power Challenge) offer their
// machines.Semaphores verb through a Set. It imports only sim.
package sysv

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

// Set is a machine's semaphores.
type Set struct {
	machine string   // for error messages
	semop   sim.Time // one semop system call
	sems    []*semaphore
}

// NewSet returns the empty set of machine's semaphores, each semop
// costing semop.
func NewSet(machine string, semop sim.Time) *Set {
	return &Set{machine: machine, semop: semop}
}

// Semget creates a semaphore (semget + semctl SETVAL) with an initial
// value and returns its id.
func (s *Set) Semget(name string, initial int) int {
	s.sems = append(s.sems, &semaphore{name: name, value: initial})
	return len(s.sems) - 1
}

// Semop is the semop system call on semaphore id by process rank: delta
// < 0 waits until the value is at least -delta and subtracts it (P);
// delta > 0 adds to it and wakes the waiters (V). Each call costs one
// system call; a process that must wait sleeps in the kernel.
func (s *Set) Semop(p *sim.Proc, rank, id, delta int) error {
	if id < 0 || id >= len(s.sems) {
		return fmt.Errorf("%s: semop by rank %d: no semaphore %d", s.machine, rank, id)
	}
	sem := s.sems[id]
	p.Sleep(s.semop)
	switch {
	case delta < 0:
		for sem.value < -delta {
			sem.q.Wait(p, fmt.Sprintf("semop(%d) on System V semaphore %s", delta, sem.name))
		}
		sem.value += delta
	case delta > 0:
		sem.value += delta
		sem.q.WakeAll()
	}
	return nil
}

// Value is semaphore id's current value (semctl GETVAL, no timing).
func (s *Set) Value(id int) int { return s.sems[id].value }

package sx4

import "github.com/msgsim/msgsim/sim"

// Semget creates a System V semaphore (semget + semctl SETVAL) with an
// initial value and returns its id.
func (m *Machine) Semget(name string, initial int) int { return m.sems.Semget(name, initial) }

// Semop is the semop system call on semaphore id by process rank (see
// sysv.Set.Semop): it costs semop_us and, being a system call, drains the
// caller's stores first.
func (m *Machine) Semop(p *sim.Proc, rank, id, delta int) error {
	m.cpus[rank].Fence(p)
	return m.sems.Semop(p, rank, id, delta)
}

// SemValue is semaphore id's current value (semctl GETVAL, no timing).
func (m *Machine) SemValue(id int) int { return m.sems.Value(id) }

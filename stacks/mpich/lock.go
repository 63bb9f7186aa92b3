package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// lock is a general-purpose lock on shared memory. Acquiring it flushes
// the whole scalar cache so that the protected data is not read stale: "A
// general purpose lock must ensure that the memory satisfies the user's
// expectations of sequential consistency and cache coherence ... on the
// SX-4, because of the cost of flushing the cache, a general lock
// operation will always be relatively expensive" (section 5).
type lock interface {
	acquire(p *sim.Proc, s *shm) error
	release(p *sim.Proc, s *shm) error
}

// newLock creates a lock of kind sysv (a semaphore of sem) or tas (the
// word at a).
func newLock(sem machines.Semaphores, kind, name string, a mem.Addr) lock {
	if kind == LockSysV {
		return &sysvLock{sem: sem, id: sem.Semget(name, 1)}
	}
	return &tasLock{word: a}
}

// sysvLock is a System V semaphore used as a lock (section 4).
type sysvLock struct {
	sem machines.Semaphores
	id  int
}

func (l *sysvLock) acquire(p *sim.Proc, s *shm) error {
	if err := l.sem.Semop(p, s.rank, l.id, -1); err != nil {
		return fmt.Errorf("mpich: lock: %w", err)
	}
	s.flush(p)
	return nil
}

func (l *sysvLock) release(p *sim.Proc, s *shm) error {
	if err := l.sem.Semop(p, s.rank, l.id, +1); err != nil {
		return fmt.Errorf("mpich: unlock: %w", err)
	}
	return nil
}

// tasLock is the NEC assembler-language lock built on test-and-set
// (section 6): the CPU's test-and-set of the word; while it was held, spin
// reading the word from memory until it looks free, then test-and-set it
// again.
type tasLock struct{ word mem.Addr }

func (l *tasLock) acquire(p *sim.Proc, s *shm) error {
	for s.cpu.TestAndSet(p, l.word) != 0 {
		s.cpu.SpinUntil(p, sim.Reason("test-and-set lock held by another process"), func() bool {
			return s.syncLoad(p, l.word) == 0
		}, l.word)
	}
	s.flush(p)
	return nil
}

func (l *tasLock) release(p *sim.Proc, s *shm) error {
	s.readySet(p, l.word, 0) // earlier stores visible before the lock is free
	return nil
}

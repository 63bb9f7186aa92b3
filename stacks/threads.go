package stacks

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// ThreadLevel is an MPI thread level (papers/mpich2-threads.txt section
// 2), in increasing order of what the program may do.
type ThreadLevel int

// The four levels of MPI_Init_thread.
const (
	ThreadSingle     ThreadLevel = iota // MPI_THREAD_SINGLE: one thread
	ThreadFunneled                      // MPI_THREAD_FUNNELED: only the thread that initialized MPI calls it
	ThreadSerialized                    // MPI_THREAD_SERIALIZED: one thread at a time calls MPI
	ThreadMultiple                      // MPI_THREAD_MULTIPLE: any thread, concurrently
)

var threadLevelNames = [...]string{"single", "funneled", "serialized", "multiple"}

func (l ThreadLevel) String() string {
	if l < 0 || int(l) >= len(threadLevelNames) {
		return fmt.Sprintf("level(%d)", int(l))
	}
	return threadLevelNames[l]
}

// Communicator is an MPI communicator of one process: point-to-point
// message passing on its own context, duplication (MPI_Comm_dup,
// collective over its processes) and freeing.
type Communicator interface {
	Rank() int
	Size() int
	// ContextID is the communicator's context id (equal on every process).
	ContextID() int
	Send(p *sim.Proc, buf mem.Region, dest, tag int) error
	Recv(p *sim.Proc, buf mem.Region, src, tag int) (Status, error)
	Dup(p *sim.Proc) (Communicator, error)
	Free(p *sim.Proc) error
}

// Schedulable is a rank of a stack whose thread code offers scheduling
// points (sim.Proc.Point) to a schedule explorer (sim/explore, simrun
// explore): at each, every thread ready at the same simulated time is an
// alternative. SchedulingPoints describes them, for listings.
type Schedulable interface {
	SchedulingPoints() []string
}

// Threaded is a rank of a stack with MPI-2 thread support: MPI_Init_thread,
// more threads of the process sharing its state, and MPI_COMM_WORLD as a
// Communicator.
type Threaded interface {
	Rank
	// InitThread is MPI_Init_thread, called by the thread that becomes the
	// main thread: it returns the level provided.
	InitThread(p *sim.Proc, required ThreadLevel) (ThreadLevel, error)
	// SpawnThread starts another thread of the process from its thread
	// p.
	SpawnThread(p *sim.Proc, name string, fn func(p *sim.Proc)) *sim.Proc
	// World is MPI_COMM_WORLD of the process.
	World() Communicator
}

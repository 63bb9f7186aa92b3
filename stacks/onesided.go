package stacks

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// OneSided is one rank's one-sided communication, beside Comm: what raw
// SHMEM offers a program and what ARMCI will. Addresses at another rank
// are addresses in that rank's memory; a program learns them from
// Symmetric (the same allocations in the same order give the same address
// on every rank, as shmalloc does) or from its own protocol.
type OneSided interface {
	Rank
	// Symmetric allocates n bytes of remotely accessible memory.
	Symmetric(n int) (mem.Region, error)
	// Put copies n bytes at src in this rank's memory to dst in rank to's
	// memory; it returns when src may be reused. The bytes become visible
	// at the target later; Quiet waits for them.
	Put(p *sim.Proc, to int, dst, src mem.Addr, n int)
	// PutWord puts one 8-byte value from a register.
	PutWord(p *sim.Proc, to int, dst mem.Addr, v uint64)
	// Get copies n bytes at src in rank from's memory to dst in this
	// rank's memory and returns when they are there.
	Get(p *sim.Proc, from int, dst, src mem.Addr, n int)
	// Quiet blocks until every put this rank issued is delivered (the
	// fence of SHMEM and ARMCI's all-fence, on a machine that delivers a
	// pair's puts in order).
	Quiet(p *sim.Proc)
	// FetchInc atomically increments rank target's counter and returns
	// its previous value.
	FetchInc(p *sim.Proc, target int) uint64
}

// Swapper is the optional remote atomic swap: it stores v at a in rank
// target's memory and returns the word that was there.
type Swapper interface {
	Swap(p *sim.Proc, target int, a mem.Addr, v uint64) uint64
}

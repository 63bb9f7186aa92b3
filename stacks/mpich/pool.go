package mpich

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// pool is the single shared pool of shared memory from which eager and
// rendezvous data are allocated, guarded by one lock ("there is a single
// shared pool of shared memory in the ch_shmem implementation", section 5).
//
// It is a first-fit list of blocks laid out in the shared segment itself:
// each block starts with a one-line header holding its size (header
// included) and state. Allocation happens under the lock. A receiver gives
// a block back by storing "released" into its header, without the lock;
// the next allocation turns released blocks into free ones and merges
// neighbours.
type pool struct {
	mem  *mem.Memory // the shared segment's
	base mem.Addr
	size int
	lk   lock
}

// Block header words and states.
const (
	blockHdr      = 128 // one cache line
	blockFree     = 0
	blockUsed     = 1
	blockReleased = 2
	blockAlign    = 128
)

// newPool formats [base, base+size) of the shared segment seg as one free
// block: its initial contents, set up through c (process 0's processor)
// before the run.
func newPool(c machines.Processor, seg mem.Region, base mem.Addr, size int, lk lock) (*pool, error) {
	size &^= blockAlign - 1
	if size < 2*blockHdr {
		return nil, fmt.Errorf("mpich: shared data pool of %d bytes is too small", size)
	}
	c.Update(nil, base, 16, 0, func(b []byte) {
		binary.LittleEndian.PutUint64(b, uint64(size))
		binary.LittleEndian.PutUint64(b[8:], blockFree)
	})
	return &pool{mem: seg.Mem, base: base, size: size, lk: lk}, nil
}

// Capacity is the largest block the pool can ever hand out.
func (pl *pool) capacity() int { return pl.size - blockHdr }

// alloc returns up to n bytes (at least min) of pool memory, under the lock.
func (pl *pool) alloc(p *sim.Proc, s *shm, min, n int) (mem.Region, bool, error) {
	if err := pl.lk.acquire(p, s); err != nil {
		return mem.Region{}, false, err
	}
	r, ok := pl.firstFit(p, s, min, n)
	if err := pl.lk.release(p, s); err != nil {
		return mem.Region{}, false, err
	}
	return r, ok, nil
}

func roundUp(n int) int { return (n + blockAlign - 1) &^ (blockAlign - 1) }

// firstFit walks the blocks (their headers were flushed from the cache by
// the lock), reclaims and merges, and takes the first block holding n
// bytes, or else the largest holding at least min.
func (pl *pool) firstFit(p *sim.Proc, s *shm, min, n int) (mem.Region, bool) {
	c := s.cpu
	end := pl.base + mem.Addr(pl.size)
	var best mem.Addr
	bestPayload := -1
	for a := pl.base; a < end; {
		size := int(c.Load(p, a, 8))
		state := c.Load(p, a+8, 8)
		if state == blockUsed {
			a += mem.Addr(size)
			continue
		}
		// Merge the free or released blocks that follow.
		merged := size
		for a+mem.Addr(merged) < end {
			nx := a + mem.Addr(merged)
			if c.Load(p, nx+8, 8) == blockUsed {
				break
			}
			merged += int(c.Load(p, nx, 8))
		}
		if merged != size || state != blockFree {
			c.Store(p, a, 8, uint64(merged))
			c.Store(p, a+8, 8, blockFree)
		}
		payload := merged - blockHdr
		if payload >= n {
			return pl.take(p, s, a, merged, n), true
		}
		if payload > bestPayload {
			best, bestPayload = a, payload
		}
		a += mem.Addr(merged)
	}
	if bestPayload >= min && bestPayload > 0 {
		size := int(c.Load(p, best, 8))
		return pl.take(p, s, best, size, bestPayload), true
	}
	return mem.Region{}, false
}

// take marks n bytes of the free block at a (of size bytes) used, splitting
// off the rest when it is worth a block.
func (pl *pool) take(p *sim.Proc, s *shm, a mem.Addr, size, n int) mem.Region {
	c := s.cpu
	need := blockHdr + roundUp(n)
	if size-need >= 2*blockHdr {
		rest := a + mem.Addr(need)
		c.Store(p, rest, 8, uint64(size-need))
		c.Store(p, rest+8, 8, blockFree)
		c.Store(p, a, 8, uint64(need))
	}
	c.Store(p, a+8, 8, blockUsed)
	return mem.Region{Mem: pl.mem, Addr: a + blockHdr, Len: n}
}

// free releases the block holding data (no lock: only its state word).
func (pl *pool) free(p *sim.Proc, s *shm, data mem.Region) error {
	a := data.Addr - blockHdr
	if a < pl.base || a >= pl.base+mem.Addr(pl.size) {
		return fmt.Errorf("mpich: rank %d frees %#x, outside the shared data pool", s.rank, data.Addr)
	}
	s.fence(p)
	s.cpu.Store(p, a+8, 8, blockReleased)
	return nil
}

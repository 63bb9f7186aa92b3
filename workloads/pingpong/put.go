package pingpong

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// oneSidedCapability is what the ping-pong's put mode needs of a stack.
const oneSidedCapability = "one-sided communication (stacks.OneSided) or ARMCI (stacks.RemoteCopy)"

// Putter is what the put mode's ranks do: allocate a buffer every rank
// has (collectively; the peer's address is returned), put bytes and a word
// into the peer's memory and wait until they are delivered.
type Putter interface {
	stacks.Rank
	// Alloc allocates n bytes on every rank; it returns this rank's and
	// the peer's address.
	Alloc(p *sim.Proc, n, peer int) (mine, theirs mem.Addr, err error)
	Put(p *sim.Proc, to int, dst, src mem.Addr, n int)
	PutWord(p *sim.Proc, to int, dst mem.Addr, v uint64)
	Quiet(p *sim.Proc, to int)
}

// OpenPutters is Open for mode put: each rank's one-sided interface
// (stacks.OneSided), or its ARMCI (stacks.RemoteCopy) used the same way.
func OpenPutters(eng *sim.Engine, s workloads.Spec, procs int) ([]Putter, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	user := "workload " + Name + " (mode " + ModePut + ")"
	out := make([]Putter, w.Size())
	if ones, err := stacks.As[stacks.OneSided](w, user, oneSidedCapability); err == nil {
		for i, x := range ones {
			out[i] = shmemPutter{x}
		}
		return out, nil
	}
	rcs, err := stacks.As[stacks.RemoteCopy](w, user, oneSidedCapability)
	var mc *machines.MissingCapability
	if errors.As(err, &mc) {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	for i, x := range rcs {
		out[i] = &armciPutter{RemoteCopy: x}
	}
	return out, err
}

// shmemPutter is a SHMEM rank: symmetric memory, puts, quiet.
type shmemPutter struct{ stacks.OneSided }

func (x shmemPutter) Alloc(_ *sim.Proc, n, _ int) (mem.Addr, mem.Addr, error) {
	r, err := x.Symmetric(n)
	return r.Addr, r.Addr, err
}

func (x shmemPutter) Put(p *sim.Proc, to int, dst, src mem.Addr, n int) {
	x.OneSided.Put(p, to, dst, src, n)
}

func (x shmemPutter) PutWord(p *sim.Proc, to int, dst mem.Addr, v uint64) {
	x.OneSided.PutWord(p, to, dst, v)
}

func (x shmemPutter) Quiet(p *sim.Proc, _ int) { x.OneSided.Quiet(p) }

// armciPutter is an ARMCI rank: ARMCI_Malloc, contiguous ARMCI_PutS (a
// word is stored into a local buffer, fenced and put from there),
// ARMCI_Fence.
type armciPutter struct {
	stacks.RemoteCopy
	word mem.Region
}

func (x *armciPutter) Alloc(p *sim.Proc, n, peer int) (mem.Addr, mem.Addr, error) {
	addrs, err := x.Malloc(p, n)
	if err != nil {
		return 0, 0, err
	}
	return addrs[x.Rank()], addrs[peer], nil
}

func (x *armciPutter) Put(p *sim.Proc, to int, dst, src mem.Addr, n int) {
	if err := x.PutS(p, stacks.Strided{Src: src, Dst: dst, Count: []int{n}}, to); err != nil {
		p.Engine().Fail(fmt.Errorf("rank %d: ARMCI_PutS of %d bytes to rank %d: %w", x.Rank(), n, to, err))
	}
}

func (x *armciPutter) PutWord(p *sim.Proc, to int, dst mem.Addr, v uint64) {
	if x.word.Len == 0 {
		var err error
		if x.word, err = x.Buffer(8); err != nil {
			p.Engine().Fail(fmt.Errorf("rank %d: a word's buffer: %w", x.Rank(), err))
			return
		}
	}
	// Stored, then fenced: a copy that reads memory itself (the SX-4's
	// vector move) does not see a store still in the store buffer.
	x.CPU().Store(p, x.word.Addr, 8, v)
	x.CPU().Fence(p)
	x.Put(p, to, dst, x.word.Addr, 8)
}

func (x *armciPutter) Quiet(p *sim.Proc, to int) { x.Fence(p, to) }

// MeasurePut is Measure for a one-sided stack (raw SHMEM, ARMCI): the
// sender puts the message into the peer's buffer, waits until it
// is delivered (quiet) and puts the message's number into the peer's flag
// word; the peer spins on its flag with uncached loads (remote writes
// leave the cache stale), drops the buffer's lines from its cache before
// its program reads the bytes, checks them and answers the same way. The
// latency is half the mean round trip.
func MeasurePut(eng *sim.Engine, ones []Putter, n, reps, warmup int, seed uint64) (sim.Time, []workloads.Failure, error) {
	var fails []workloads.Failure
	var start, end sim.Time
	for rank := 0; rank < 2; rank++ {
		x := ones[rank]
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			peer := 1 - rank
			buf, peerBuf, err := x.Alloc(p, max(n, 8), peer)
			if err != nil {
				eng.Fail(fmt.Errorf("rank %d: %d-byte buffer: %w", rank, n, err))
				return
			}
			flag, peerFlag, err := x.Alloc(p, 8, peer)
			if err != nil {
				eng.Fail(fmt.Errorf("rank %d: flag word: %w", rank, err))
				return
			}
			cpu := x.CPU()
			for k := 0; k < warmup+reps; k++ {
				if rank == 0 && k == warmup {
					start = p.Now()
				}
				for turn := 0; turn < 2; turn++ {
					msg := uint64(2*k + turn)
					if turn == rank {
						payload.Write(cpu, buf, n, pattern(seed, rank, msg), 0)
						if n > 0 {
							x.Put(p, peer, peerBuf, buf, n)
							x.Quiet(p, peer)
						}
						x.PutWord(p, peer, peerFlag, msg+1)
						continue
					}
					cpu.SpinUntil(p, sim.Reason(fmt.Sprintf("rank %d: waiting for message %d's flag", rank, msg)), func() bool {
						return cpu.LoadUncached(p, flag, 8) == msg+1
					}, flag)
					cpu.InvalidateRange(p, buf, n)
					if m, ok := payload.Check(cpu, buf, n, pattern(seed, peer, msg), 0); !ok {
						fails = append(fails, workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
							"rank %d at %v: message %d (%d bytes put by rank %d): byte offset %d is %#02x, want %#02x",
							rank, p.Now(), msg, n, peer, m.Offset, m.Got, m.Want)})
						eng.Stop()
						return
					}
				}
			}
			if rank == 0 {
				end = p.Now()
			}
		})
	}
	if err := eng.Run(); err != nil {
		return 0, fails, err
	}
	if len(fails) > 0 {
		return 0, fails, nil
	}
	return (end - start) / sim.Time(2*reps), nil, nil
}

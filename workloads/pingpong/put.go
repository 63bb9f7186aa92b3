package pingpong

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// oneSidedCapability is what the ping-pong's put mode needs of a stack.
const oneSidedCapability = "one-sided communication (stacks.OneSided)"

// OpenOneSided is Open for mode put: each rank's one-sided interface.
func OpenOneSided(eng *sim.Engine, s workloads.Spec, procs int) ([]stacks.OneSided, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	ones, err := stacks.As[stacks.OneSided](w, "workload "+Name+" (mode "+ModePut+")", oneSidedCapability)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return ones, nil
}

// MeasurePut is Measure for a one-sided stack (raw SHMEM): the sender puts
// the message into the peer's copy of a symmetric buffer, waits until it
// is delivered (quiet) and puts the message's number into the peer's flag
// word; the peer spins on its flag with uncached loads (remote writes
// leave the cache stale), drops the buffer's lines from its cache before
// its program reads the bytes, checks them and answers the same way. The
// latency is half the mean round trip.
func MeasurePut(eng *sim.Engine, ones []stacks.OneSided, n, reps, warmup int, seed uint64) (sim.Time, []workloads.Failure, error) {
	var fails []workloads.Failure
	var start, end sim.Time
	for rank := 0; rank < 2; rank++ {
		x := ones[rank]
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			buf, err := x.Symmetric(max(n, 8))
			if err != nil {
				eng.Fail(fmt.Errorf("rank %d: %d-byte symmetric buffer: %w", rank, n, err))
				return
			}
			flag, err := x.Symmetric(8)
			if err != nil {
				eng.Fail(fmt.Errorf("rank %d: flag word: %w", rank, err))
				return
			}
			buf.Len = n
			cpu := x.CPU()
			peer := 1 - rank
			for k := 0; k < warmup+reps; k++ {
				if rank == 0 && k == warmup {
					start = p.Now()
				}
				for turn := 0; turn < 2; turn++ {
					msg := uint64(2*k + turn)
					if turn == rank {
						payload.Write(cpu, buf.Addr, n, pattern(seed, rank, msg), 0)
						if n > 0 {
							x.Put(p, peer, buf.Addr, buf.Addr, n)
							x.Quiet(p)
						}
						x.PutWord(p, peer, flag.Addr, msg+1)
						continue
					}
					cpu.SpinUntil(p, fmt.Sprintf("rank %d: waiting for message %d's flag", rank, msg), func() bool {
						return cpu.LoadUncached(p, flag.Addr, 8) == msg+1
					}, flag.Addr)
					cpu.InvalidateRange(p, buf.Addr, n)
					if m, ok := payload.Check(cpu, buf.Addr, n, pattern(seed, peer, msg), 0); !ok {
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

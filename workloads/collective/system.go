package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// system is one messaging system on one partition, as the benchmarks use
// it: the stack's ranks as message passing (comms) when they offer
// stacks.Comm, else as raw one-sided communication (ones), and the
// harness's barrier.
type system struct {
	w     *stacks.World
	mode  string
	comms []stacks.Comm     // message passing: set when the stack offers it
	ones  []stacks.OneSided // raw one-sided: set when comms is nil
	alg   string            // reduction algorithm
	// barrier is the harness's barrier: the machine's barrier network
	// when it has one (machines.Barrier, the T3D's), else idealBarrier.
	barrier func(p *sim.Proc, pe int)
	// delivered counts the bytes puts delivered (machines.Delivered), for
	// detecting lost raw puts; nil when the machine has no such count.
	delivered machines.Delivered
}

// ranksCapability is what the benchmark needs of a stack.
const ranksCapability = "message passing (stacks.Comm) or one-sided communication (stacks.OneSided)"

// newSystem sees the world's ranks as the benchmark uses them.
func newSystem(w *stacks.World, user, mode, alg string) (*system, error) {
	y := &system{w: w, mode: mode, alg: alg}
	var err error
	if y.comms, err = stacks.As[stacks.Comm](w, user, ranksCapability); err != nil {
		if y.ones, err = stacks.As[stacks.OneSided](w, user, ranksCapability); err != nil {
			return nil, err
		}
	}
	if b, ok := w.Machine.(machines.Barrier); ok {
		y.barrier = b.Barrier
	} else {
		y.barrier = idealBarrier(w.Size())
	}
	y.delivered, _ = w.Machine.(machines.Delivered)
	return y, nil
}

// idealBarrier is the harness's barrier on a machine without a barrier
// network (the SX-4): it releases every PE at the time the last one
// arrives, at no cost. It is the benchmark's timer bracket, not part of
// the measured system: the time between two barriers is the pattern's
// alone (with a barrier of its own, a stack's barrier cost would be
// measured too).
func idealBarrier(pes int) func(p *sim.Proc, pe int) {
	var waiting sim.WaitQueue
	arrived := 0
	// Formatted once, not per arrival: the report lists those waiting.
	reason := fmt.Sprintf("harness barrier (waiting for all %d PEs to arrive; those waiting are listed)", pes)
	return func(p *sim.Proc, pe int) {
		arrived++
		if arrived < pes {
			waiting.Wait(p, reason)
			return
		}
		arrived = 0
		waiting.WakeAll()
	}
}

// oneSided reports whether the system is raw one-sided communication.
func (y *system) oneSided() bool { return y.comms == nil }

// rank is PE pe's rank, whatever the system.
func (y *system) rank(pe int) stacks.Rank {
	if y.comms != nil {
		return y.comms[pe]
	}
	return y.ones[pe]
}

func (y *system) cpu(pe int) *mem.CPU { return y.rank(pe).CPU() }

func (y *system) buffer(pe, n int) (mem.Region, error) { return y.rank(pe).Buffer(n) }

// send is a blocking send (sync) or a nonblocking send and its wait (async:
// a tree step that the next one depends on).
func (y *system) send(p *sim.Proc, pe int, buf mem.Region, dst int) error {
	c := y.comms[pe]
	if y.mode == ModeSync {
		return c.Send(p, buf, dst, 0)
	}
	r, err := c.Isend(p, buf, dst, 0)
	if err != nil {
		return err
	}
	_, err = r.Wait(p)
	return err
}

// recv is a blocking receive (sync) or a nonblocking one and its wait.
func (y *system) recv(p *sim.Proc, pe int, buf mem.Region, src int) (stacks.Status, error) {
	c := y.comms[pe]
	if y.mode == ModeSync {
		return c.Recv(p, buf, src, 0)
	}
	r, err := c.Irecv(p, buf, src, 0)
	if err != nil {
		return stacks.Status{}, err
	}
	return r.Wait(p)
}

// exchange is one pairwise step of the synchronous all-to-all: it sends
// sbuf to dst and receives rbuf from src, with the stack's
// send-and-receive (ACLMPL's, stacks.SendRecver) or as MPI_Sendrecv does
// (a receive posted before a blocking send). The asynchronous all-to-all
// posts all its receives and sends at once instead (allToAllAsync).
func (y *system) exchange(p *sim.Proc, pe int, sbuf mem.Region, dst int, rbuf mem.Region, src int) (stacks.Status, error) {
	c := y.comms[pe]
	if sr, ok := c.(stacks.SendRecver); ok {
		return sr.SendRecv(p, sbuf, dst, rbuf, src)
	}
	rr, err := c.Irecv(p, rbuf, src, 0)
	if err != nil {
		return stacks.Status{}, err
	}
	if err := c.Send(p, sbuf, dst, 0); err != nil {
		return stacks.Status{}, err
	}
	return rr.Wait(p)
}

// waitAll waits for every request in turn (MPI_Waitall: a request that
// completed while an earlier one was waited for returns at once).
func waitAll(p *sim.Proc, reqs []stacks.Request) error {
	for _, r := range reqs {
		if _, err := r.Wait(p); err != nil {
			return err
		}
	}
	return nil
}

// ownCollectives reports whether the program in this mode calls the
// stack's own collectives: with blocking calls, or with nonblocking ones
// when the library has no others (stacks.SoleCollectives: MPI's
// MPI_Bcast and MPI_Reduce).
func (y *system) ownCollectives(pe int) bool {
	_, sole := y.comms[pe].(stacks.SoleCollectives)
	return y.mode == ModeSync || sole
}

// ownBcast is the stack's own broadcast, used with blocking calls (or
// always, stacks.SoleCollectives), or nil.
func (y *system) ownBcast(pe int) stacks.Bcaster {
	if b, ok := y.comms[pe].(stacks.Bcaster); ok && y.ownCollectives(pe) {
		return b
	}
	return nil
}

// bcast broadcasts buf from PE 0: the stack's own broadcast (ACLMPL's
// tree) with blocking calls, or the same binomial tree (stacks.TreeBcast)
// over the system's send and receive. Nonblocking too, a PE sends to its
// children one after the other, each send waited for: posting them
// together makes the transfers share the PE's injection bandwidth, which
// delays the child with the largest subtree (on 128 PEs with MPI, 1 MB
// broadcasts took 0.136 s that way instead of 0.060 s), so the efficient
// program does not.
func (y *system) bcast(p *sim.Proc, pe int, buf mem.Region) error {
	if b := y.ownBcast(pe); b != nil {
		return b.Bcast(p, buf, 0)
	}
	return stacks.TreeBcast(pe, len(y.comms), 0,
		func(to int) error { return y.send(p, pe, buf, to) },
		func(from int) error { _, err := y.recv(p, pe, buf, from); return err })
}

// ownReduce is the stack's own reduction of algorithm alg, used with
// blocking calls (or always, stacks.SoleCollectives), or nil.
func (y *system) ownReduce(pe int) func(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	if !y.ownCollectives(pe) {
		return nil
	}
	c := y.comms[pe]
	if y.alg == ReduceBinarySwap {
		if r, ok := c.(stacks.BinarySwapReducer); ok {
			return r.BinarySwapReduce
		}
		return nil
	}
	if r, ok := c.(stacks.Reducer); ok {
		return r.Reduce
	}
	return nil
}

// reduce sums buf (int64 elements) into PE 0: the stack's own tree or
// binary-swap reduce with blocking calls (ACLMPL's), or the same tree
// (stacks.TreeReduce) over the system's send and receive, with the same
// operator and its cost.
func (y *system) reduce(p *sim.Proc, pe int, buf, scratch mem.Region) error {
	op := stacks.SumInt64
	if r := y.ownReduce(pe); r != nil {
		return r(p, buf, op, 0)
	}
	return stacks.TreeReduce(pe, len(y.comms), 0,
		func(to int) error { return y.send(p, pe, buf, to) },
		func(from int) error {
			if _, err := y.recv(p, pe, scratch, from); err != nil {
				return err
			}
			stacks.Combine(p, y.cpu(pe), op, buf, scratch)
			return nil
		})
}

// user names the workload in capability errors.
func user(s workloads.Spec) string { return "workload " + s.Workload.Name }

package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/stacks/aclmpl"
	"github.com/msgsim/msgsim/stacks/mpich"
	"github.com/msgsim/msgsim/workloads"
)

// Stack names a series may use besides aclmpl and mpich.
const StackShmem = "shmem"

// system is one messaging system on one partition, as the benchmarks use
// it. comms is nil for raw SHMEM.
type system struct {
	m     *t3d.Machine
	mode  string
	acl   *aclmpl.Lib   // set for aclmpl
	comms []stacks.Comm // set for message passing systems
	alg   string        // reduction algorithm
}

// openSystem builds the machine of spec s with pes PEs and the stack on it,
// from params configure has checked.
func openSystem(eng *sim.Engine, s workloads.Spec, cfg config, pes int) (*system, error) {
	m, err := t3d.New(eng, pes, cfg.machine)
	if err != nil {
		return nil, fmt.Errorf("machine: %w", err)
	}
	sys := &system{m: m, mode: cfg.params.Mode, alg: cfg.params.Reduce}
	switch s.Stack.Name {
	case aclmpl.Name:
		if sys.acl, err = aclmpl.New(m, cfg.acl); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		for i := 0; i < pes; i++ {
			sys.comms = append(sys.comms, sys.acl.PE(i))
		}
	case mpich.Name:
		w, err := mpich.NewWorld(m, cfg.mpi)
		if err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		sys.comms = w.Comms()
	}
	return sys, nil
}

func (y *system) shmem() bool { return y.comms == nil }

func (y *system) buffer(pe, n int) (mem.Region, error) {
	return y.m.Alloc(pe, "bench", n)
}

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
// sbuf to dst and receives rbuf from src, with ACLMPL's send-and-receive or
// MPI_Sendrecv (a receive posted before a blocking send). The asynchronous
// all-to-all posts all its receives and sends at once instead (allToAllAsync).
func (y *system) exchange(p *sim.Proc, pe int, sbuf mem.Region, dst int, rbuf mem.Region, src int) (stacks.Status, error) {
	if y.acl != nil {
		return y.acl.PE(pe).SendRecv(p, sbuf, dst, rbuf, src)
	}
	c := y.comms[pe]
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

// bcast broadcasts buf from PE 0: ACLMPL's own tree, or the same binomial
// tree (stacks.TreeBcast) over the system's send and receive. Nonblocking
// too, a PE sends to its children one after the other, each send waited
// for: posting them together makes the transfers share the PE's injection
// bandwidth, which delays the child with the largest subtree (on 128 PEs
// with MPI, 1 MB broadcasts took 0.136 s that way instead of 0.060 s), so
// the efficient program does not.
func (y *system) bcast(p *sim.Proc, pe int, buf mem.Region) error {
	if y.acl != nil && y.mode == ModeSync {
		return y.acl.PE(pe).Bcast(p, buf, 0)
	}
	return stacks.TreeBcast(pe, len(y.comms), 0,
		func(to int) error { return y.send(p, pe, buf, to) },
		func(from int) error { _, err := y.recv(p, pe, buf, from); return err })
}

// reduce sums buf (int64 elements) into PE 0: ACLMPL's tree or binary-swap
// reduce, or the same tree (stacks.TreeReduce) over the system's send and
// receive, with the same operator and its cost.
func (y *system) reduce(p *sim.Proc, pe int, buf, scratch mem.Region) error {
	op := stacks.SumInt64
	if y.acl != nil && y.mode == ModeSync {
		if y.alg == ReduceBinarySwap {
			return y.acl.PE(pe).BinarySwapReduce(p, buf, op, 0)
		}
		return y.acl.PE(pe).Reduce(p, buf, op, 0)
	}
	return stacks.TreeReduce(pe, len(y.comms), 0,
		func(to int) error { return y.send(p, pe, buf, to) },
		func(from int) error {
			if _, err := y.recv(p, pe, scratch, from); err != nil {
				return err
			}
			stacks.Combine(p, y.m.CPU(pe), op, buf, scratch)
			return nil
		})
}

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

// openSystem builds the machine of spec s with pes PEs and the stack on it.
func openSystem(eng *sim.Engine, s workloads.Spec, params Params, pes int) (*system, error) {
	if s.Machine.Name != t3d.Name {
		return nil, fmt.Errorf("%s: workload %s runs on machine %q, not %q", s.File, s.Workload.Name, t3d.Name, s.Machine.Name)
	}
	mp, err := t3d.ParseParams(s.File, s.Machine.ParamsField("machine"), s.Machine.Params)
	if err != nil {
		return nil, err
	}
	m, err := t3d.New(eng, pes, mp)
	if err != nil {
		return nil, fmt.Errorf("%s: machine: %w", s.File, err)
	}
	sys := &system{m: m, mode: params.Mode, alg: params.Reduce}
	stackField := s.Stack.ParamsField("stack")
	switch s.Stack.Name {
	case aclmpl.Name:
		ap, err := aclmpl.ParseParams(s.File, stackField, s.Stack.Params)
		if err != nil {
			return nil, err
		}
		if sys.acl, err = aclmpl.New(m, ap); err != nil {
			return nil, fmt.Errorf("%s: stack: %w", s.File, err)
		}
		for i := 0; i < pes; i++ {
			sys.comms = append(sys.comms, sys.acl.PE(i))
		}
	case StackShmem:
		if err := checkNoParams(s, stackField); err != nil {
			return nil, err
		}
	case mpich.Name:
		comms, err := openMPI(m, s)
		if err != nil {
			return nil, err
		}
		sys.comms = comms
	default:
		return nil, fmt.Errorf("%s: stack %q: workload %s runs over %q, %q or %q", s.File, s.Stack.Name, s.Workload.Name, aclmpl.Name, StackShmem, mpich.Name)
	}
	if params.Reduce == ReduceBinarySwap && (sys.acl == nil || params.Mode != ModeSync) {
		return nil, fmt.Errorf("%s: %s: reduce binary-swap is an ACLMPL synchronous algorithm (stack aclmpl, mode sync)", s.File, s.Workload.ParamsField("workload"))
	}
	return sys, nil
}

func checkNoParams(s workloads.Spec, field string) error {
	if s.Stack.Params != nil && s.Stack.Params.Kind != 0 && len(s.Stack.Params.Content) > 0 {
		return fmt.Errorf("%s: %s: raw SHMEM takes no params", s.File, field)
	}
	return nil
}

func (y *system) shmem() bool { return y.comms == nil }

func (y *system) buffer(pe, n int) (mem.Region, error) {
	return y.m.Alloc(pe, "bench", n)
}

// send is a blocking send (sync) or a nonblocking send and its wait (async).
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

// exchange sends sbuf to dst and receives rbuf from src: ACLMPL's
// send-and-receive, MPI_Sendrecv (a receive posted before a blocking send),
// or a nonblocking pair and its waits.
func (y *system) exchange(p *sim.Proc, pe int, sbuf mem.Region, dst int, rbuf mem.Region, src int) (stacks.Status, error) {
	if y.acl != nil && y.mode == ModeSync {
		return y.acl.PE(pe).SendRecv(p, sbuf, dst, rbuf, src)
	}
	c := y.comms[pe]
	rr, err := c.Irecv(p, rbuf, src, 0)
	if err != nil {
		return stacks.Status{}, err
	}
	if y.mode == ModeSync {
		if err := c.Send(p, sbuf, dst, 0); err != nil {
			return stacks.Status{}, err
		}
	} else {
		sr, err := c.Isend(p, sbuf, dst, 0)
		if err != nil {
			return stacks.Status{}, err
		}
		if _, err := sr.Wait(p); err != nil {
			return stacks.Status{}, err
		}
	}
	return rr.Wait(p)
}

func highBit(n int) int {
	b := 1
	for b*2 <= n {
		b *= 2
	}
	return b
}

// bcast broadcasts buf from PE 0: ACLMPL's own tree, or the same binomial
// tree over the system's send and receive.
func (y *system) bcast(p *sim.Proc, pe int, buf mem.Region) error {
	if y.acl != nil && y.mode == ModeSync {
		return y.acl.PE(pe).Bcast(p, buf, 0)
	}
	size := len(y.comms)
	for mask := highBit(max(size-1, 1)); mask >= 1; mask /= 2 {
		switch {
		case pe%(2*mask) == 0 && pe+mask < size:
			if err := y.send(p, pe, buf, pe+mask); err != nil {
				return err
			}
		case pe%(2*mask) == mask:
			if _, err := y.recv(p, pe, buf, pe-mask); err != nil {
				return err
			}
		}
	}
	return nil
}

// reduce sums buf (int64 elements) into PE 0: ACLMPL's tree or binary-swap
// reduce, or the same tree over the system's send and receive, with the
// same operator cost.
func (y *system) reduce(p *sim.Proc, pe int, buf, scratch mem.Region) error {
	op := aclmpl.SumInt64
	if y.acl != nil && y.mode == ModeSync {
		if y.alg == ReduceBinarySwap {
			return y.acl.PE(pe).BinarySwapReduce(p, buf, op, 0)
		}
		return y.acl.PE(pe).Reduce(p, buf, op, 0)
	}
	size := len(y.comms)
	for bit := 1; bit < size; bit *= 2 {
		if pe&bit != 0 {
			return y.send(p, pe, buf, pe-bit)
		}
		if pe+bit < size {
			if _, err := y.recv(p, pe, scratch, pe+bit); err != nil {
				return err
			}
			y.m.CPU(pe).Compute(p, op.CyclesPerElem*float64(buf.Len/op.ElemBytes))
			op.Combine(buf.Bytes(), scratch.Bytes())
		}
	}
	return nil
}

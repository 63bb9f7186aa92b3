package pvm

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// The group library's operations as PVM 3.3 does them, with every task of
// the partition one member of the group, instance number = task number.

// Bcast is pvm_bcast from root: the root sends buf to every other member
// in turn, as pvm_mcast does on an MPP whose tasks are reached directly
// (one psend per member, in instance order: a linear broadcast, not a
// tree); every other member receives it from root with precv.
func (x *Task) Bcast(p *sim.Proc, buf mem.Region, root int) error {
	if err := x.checkPeer("bcast", root); err != nil {
		return err
	}
	if x.rank != root {
		_, err := x.precv(p, buf, root, tagBcast)
		return err
	}
	for i := 1; i < x.size; i++ {
		if err := x.psend(p, buf, (root+i)%x.size, tagBcast); err != nil {
			return err
		}
	}
	return nil
}

// Reduce is pvm_reduce into root: "the current algorithm is very simple
// and robust" (pvm_reduce(3); hardware.yaml t3d_pvm.reduce_algorithm):
// every other member sends its contribution to the root and returns
// without waiting (pvm_reduce does not block the non-root members); the
// root receives the contributions in the order they arrive (from any
// member) and folds each into buf with op.
func (x *Task) Reduce(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	if err := x.checkPeer("reduce", root); err != nil {
		return err
	}
	if x.rank != root {
		return x.psend(p, buf, root, tagReduce)
	}
	if x.size == 1 {
		return nil
	}
	in, err := x.scratchOf(buf.Len)
	if err != nil {
		return err
	}
	for i := 1; i < x.size; i++ {
		if _, err := x.precv(p, in, stacks.AnySource, tagReduce); err != nil {
			return err
		}
		stacks.Combine(p, x.cpu, op, buf, in)
	}
	return nil
}

// Barrier is pvm_barrier over the whole group: every member reports to
// one place, which releases them all once the count is reached. In PVM
// 3.3 that place is the group server; on an MPP with no daemon the group's
// instance 0 counts: every other member sends it an empty message and
// waits for its release, and instance 0 receives the count's messages
// (from any member) and then sends each member its release.
func (x *Task) Barrier(p *sim.Proc) error {
	var none mem.Region
	if x.rank != 0 {
		if err := x.psend(p, none, 0, tagBarrier); err != nil {
			return err
		}
		_, err := x.precv(p, none, 0, tagRelease)
		return err
	}
	for i := 1; i < x.size; i++ {
		if _, err := x.precv(p, none, stacks.AnySource, tagBarrier); err != nil {
			return err
		}
	}
	for i := 1; i < x.size; i++ {
		if err := x.psend(p, none, i, tagRelease); err != nil {
			return err
		}
	}
	return nil
}

// scratchOf is the root's receive space for contributions: n bytes of its
// memory, kept for later reductions.
func (x *Task) scratchOf(n int) (mem.Region, error) {
	if x.scratch == nil || x.scratch.Len < n {
		b, err := x.lib.m.Alloc(x.rank, "pvm.reduce", n)
		if err != nil {
			return mem.Region{}, err
		}
		x.scratch = &b
	}
	return x.scratch.Slice(0, n), nil
}

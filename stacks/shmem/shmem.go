// Package shmem is raw SHMEM as a stack: no protocol of its own, each
// call one machine primitive (shmem_put, shmem_put of a word, shmem_get,
// shmem_quiet, shmem_int_finc, shmalloc). It is the paper's shared-memory
// reference in papers/aclmpl-t3d.txt (section 5: "SHMEM"), what the
// collective benchmarks compare the message-passing libraries with.
//
// It runs on any machine with the one-sided capabilities of package
// machines: OneSided (per-PE memory, put, quiet), Get and FetchInc; a
// machine without one gives a *machines.MissingCapability at Open. Its
// ranks implement stacks.OneSided (not stacks.Comm: raw SHMEM has no
// messages), and stacks.Swapper when the machine offers machines.Swap.
//
// It charges no CPU time of its own: the machine charges every call.
package shmem

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Name is the stack's name in scenarios.
const Name = "shmem"

// Params are the stack's params: raw SHMEM has none (a scenario that gives
// any gets an unknown-field error naming it).
type Params struct{}

// DefaultParams is the empty Params.
func DefaultParams() Params { return Params{} }

// Machine is what raw SHMEM needs of a machine.
type Machine interface {
	machines.RemoteWrite
	machines.RemoteRead
	machines.FetchIncRegister
}

const capability = "per-PE memory, one-sided put with quiet, get and fetch-and-increment (machines.RemoteWrite, machines.RemoteRead, machines.FetchIncRegister)"

// Needs are the machine capabilities raw SHMEM uses.
func Needs() []machines.Capability {
	return []machines.Capability{
		machines.Cap[machines.RemoteWrite]("one-sided", "per-PE memory, one-sided put and quiet (machines.RemoteWrite)"),
		machines.Cap[machines.RemoteRead]("get", "one-sided get (machines.RemoteRead)"),
		machines.Cap[machines.FetchIncRegister]("fetch-inc", "fetch-and-increment registers (machines.FetchIncRegister)"),
	}
}

// Open returns raw SHMEM on m: one PE per processor.
func Open(m machines.Machine, _ Params) (*stacks.World, error) {
	mm, err := machines.Require[Machine](m, "raw SHMEM (stack shmem)", capability)
	if err != nil {
		return nil, err
	}
	sw, _ := m.(machines.Swap)
	w := &stacks.World{Stack: Name, Title: "raw SHMEM", Machine: m}
	for i := 0; i < m.Procs(); i++ {
		pe := &PE{m: mm, rank: i}
		if sw != nil {
			w.Ranks = append(w.Ranks, swapPE{pe, sw})
			continue
		}
		w.Ranks = append(w.Ranks, pe)
	}
	return w, nil
}

// PE is one processing element's SHMEM: its methods are called from that
// PE's process.
type PE struct {
	m    Machine
	rank int
}

// Rank is the PE number.
func (x *PE) Rank() int { return x.rank }

// Size is the number of PEs.
func (x *PE) Size() int { return x.m.Procs() }

// CPU is the PE's processor.
func (x *PE) CPU() *mem.CPU { return x.m.CPU(x.rank) }

// Buffer allocates n bytes of the PE's memory for user data.
func (x *PE) Buffer(n int) (mem.Region, error) { return x.m.Alloc(x.rank, "user", n) }

// Symmetric allocates n bytes of the PE's memory (shmalloc): PEs that make
// the same allocations in the same order get the same addresses.
func (x *PE) Symmetric(n int) (mem.Region, error) { return x.m.Alloc(x.rank, "symmetric", n) }

// Put is shmem_put.
func (x *PE) Put(p *sim.Proc, to int, dst, src mem.Addr, n int) {
	x.m.Put(p, x.rank, to, dst, src, n)
}

// PutWord is shmem_put of one 8-byte word from a register.
func (x *PE) PutWord(p *sim.Proc, to int, dst mem.Addr, v uint64) {
	x.m.PutWord(p, x.rank, to, dst, v)
}

// Get is shmem_get.
func (x *PE) Get(p *sim.Proc, from int, dst, src mem.Addr, n int) {
	x.m.Get(p, x.rank, from, dst, src, n)
}

// Quiet is shmem_quiet.
func (x *PE) Quiet(p *sim.Proc) { x.m.Quiet(p, x.rank) }

// FetchInc is shmem_int_finc on PE target's fetch-and-increment register.
func (x *PE) FetchInc(p *sim.Proc, target int) uint64 { return x.m.FetchInc(p, x.rank, target) }

// swapPE is a PE on a machine with a remote swap (stacks.Swapper).
type swapPE struct {
	*PE
	sw machines.Swap
}

// Swap is shmem_swap.
func (x swapPE) Swap(p *sim.Proc, target int, a mem.Addr, v uint64) uint64 {
	return x.sw.Swap(p, x.rank, target, a, v)
}

// Package shmem is raw SHMEM as a stack: no protocol of its own, each
// call one machine verb (shmem_put, shmem_put of a word, shmem_get,
// shmem_quiet, shmem_int_finc, shmem_swap, shmalloc). It is the paper's
// shared-memory reference in papers/aclmpl-t3d.txt (section 5: "SHMEM"),
// what the collective benchmarks compare the message-passing libraries
// with.
//
// It runs on any machine with remote writes and reads (machines.RemoteWrite,
// machines.RemoteRead) and a fetch-and-increment: the machine's register
// per PE (machines.FetchIncRegister, the T3D's), or, where there is none, a
// counter word in each PE's memory that shmem_int_finc increments with the
// machine's remote fetch-and-increment (machines.RemoteFetchInc: the
// PCI-SCI adapter's, LAPI_Rmw's). A machine without one of them gives a
// *machines.MissingCapability at Open naming the verb. Its ranks implement
// stacks.OneSided (not stacks.Comm: raw SHMEM has no messages), and
// stacks.Swapper where the machine has a remote swap (machines.Swap).
//
// Symmetric memory is each PE's own memory, allocated in the same order on
// every PE: on a machine whose nodes hold several processes in one memory
// it could not be at the same address on each, and Open refuses it, unless
// the machine's remote verbs address the same offset of each process's
// symmetric heap (machines.SymmetricHeap: the SX-4's, in System V shared
// segments, as SGI's SMP SHMEM).
//
// It charges no CPU time of its own: the machine charges every call.
//
// Layer: a stack: imports stacks, machines, sim and sim/mem; never a
// concrete machine (it requires verbs), a workload or the registry.
package shmem

import (
	"fmt"

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

// Machine is what raw SHMEM needs of a machine besides a fetch-and-increment.
type Machine interface {
	machines.RemoteWrite
	machines.RemoteRead
}

// user names raw SHMEM in missing-verb errors.
const user = "raw SHMEM (stack shmem)"

// Needs are the verbs raw SHMEM uses: remote writes and reads, and the
// fetch-and-increment register or, without one, a remote
// fetch-and-increment of a counter word.
func Needs() []machines.Capability {
	inc := machines.VerbRemoteFetchInc
	inc.What += ", where there is no register (shmem_int_finc on a counter word in each PE's memory)"
	swap := machines.VerbSwap
	swap.What += " (shmem_swap, offered where the machine has it)"
	reg := machines.VerbFetchIncReg
	reg.What += " (shmem_int_finc)"
	return []machines.Capability{machines.VerbRemoteWrite, machines.VerbRemoteRead, reg, inc, swap}
}

// Open returns raw SHMEM on m: one PE per processor.
func Open(m machines.Machine, _ Params) (*stacks.World, error) {
	if _, err := machines.Need[machines.RemoteWrite](m, user, machines.VerbRemoteWrite); err != nil {
		return nil, err
	}
	if _, err := machines.Need[machines.RemoteRead](m, user, machines.VerbRemoteRead); err != nil {
		return nil, err
	}
	mm := m.(Machine)
	_, symmetric := m.(machines.SymmetricHeap)
	for pe := 1; pe < m.Procs() && !symmetric; pe++ {
		if n := machines.NodeOf(m, pe); n == machines.NodeOf(m, pe-1) {
			return nil, fmt.Errorf("shmem: PEs %d and %d share node %d's memory: symmetric memory needs a memory per PE (one process per node)", pe-1, pe, n)
		}
	}
	inc, err := fetchIncOf(mm)
	if err != nil {
		return nil, err
	}
	sw, _ := m.(machines.Swap)
	w := &stacks.World{Stack: Name, Title: "raw SHMEM", Machine: m}
	for i := 0; i < m.Procs(); i++ {
		pe := &PE{m: mm, inc: inc, rank: i}
		if sw != nil {
			w.Ranks = append(w.Ranks, swapPE{pe, sw})
			continue
		}
		w.Ranks = append(w.Ranks, pe)
	}
	return w, nil
}

// fetchInc is shmem_int_finc: PE pe increments PE target's counter.
type fetchInc func(p *sim.Proc, pe, target int) uint64

// fetchIncOf is the machine's fetch-and-increment register, or a counter
// word allocated in every PE's memory (at the same address on each: the
// first allocation of each) incremented with its remote
// fetch-and-increment.
func fetchIncOf(m Machine) (fetchInc, error) {
	if r, ok := m.(machines.FetchIncRegister); ok {
		return r.FetchInc, nil
	}
	r, ok := m.(machines.RemoteFetchInc)
	if !ok {
		return nil, &machines.MissingCapability{Machine: m.Name(), User: user,
			Capability: machines.VerbFetchIncReg.Name + " or " + machines.VerbRemoteFetchInc.Name + ": " +
				machines.VerbFetchIncReg.What + ", or " + machines.VerbRemoteFetchInc.What + " of a counter word"}
	}
	words := make([]mem.Addr, m.Procs())
	for pe := range words {
		w, err := machines.MapRemote(m, nil, pe, pe, "shmem.counter", 8)
		if err != nil {
			return nil, fmt.Errorf("shmem: PE %d: fetch-and-increment counter: %w", pe, err)
		}
		words[pe] = w.Addr
	}
	return func(p *sim.Proc, pe, target int) uint64 { return r.FetchIncAt(p, pe, target, words[target]) }, nil
}

// PE is one processing element's SHMEM: its methods are called from that
// PE's process.
type PE struct {
	m    Machine
	inc  fetchInc
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

// Symmetric allocates n bytes of the PE's memory that other PEs reach
// remotely (shmalloc): PEs that make the same allocations in the same order
// get the same addresses.
func (x *PE) Symmetric(n int) (mem.Region, error) {
	return machines.MapRemote(x.m, nil, x.rank, x.rank, "symmetric", n)
}

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

// FetchInc is shmem_int_finc on PE target's fetch-and-increment register
// or counter word.
func (x *PE) FetchInc(p *sim.Proc, target int) uint64 { return x.inc(p, x.rank, target) }

// swapPE is a PE on a machine with a remote swap (stacks.Swapper).
type swapPE struct {
	*PE
	sw machines.Swap
}

// Swap is shmem_swap.
func (x swapPE) Swap(p *sim.Proc, target int, a mem.Addr, v uint64) uint64 {
	return x.sw.Swap(p, x.rank, target, a, v)
}

package aclmpl

import (
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// register is the fetch-and-increment register per PE of the asynchronous
// protocol (section 4.2): a sender reads a receiver's register, which
// increments it, to take a buffer of the receiver's pool; the owner reads
// it to learn how many buffers were handed out, and resets it to zero once
// its pool has overflowed and been emptied.
type register interface {
	// fetchInc is PE x's read (and increment) of PE target's register.
	fetchInc(p *sim.Proc, x, target *PE) uint64
	// read is PE x's read of its own register.
	read(p *sim.Proc, x *PE) uint64
	// reset sets PE x's own register to zero.
	reset(p *sim.Proc, x *PE)
	// place sets PE x's register up when its pool is (set-up: no time),
	// returning the address of its word in x's memory, if it has one.
	place(x *PE) (mem.Addr, error)
	// bytes is the memory the register takes in each PE's memory.
	bytes() int
}

// newRegister is the register of the asynchronous protocol on m: the
// machine's own (machines.FetchIncRegister) where it has one, else one
// built from a word in each PE's memory where it has a remote
// fetch-and-increment (machines.RemoteFetchInc), else nil: no
// asynchronous protocol.
func newRegister(m machines.Machine) register {
	if r, ok := m.(machines.FetchIncRegister); ok {
		return hwRegister{r}
	}
	if r, ok := m.(machines.RemoteFetchInc); ok {
		return wordRegister{r}
	}
	return nil
}

// hwRegister is the machine's fetch-and-increment register (the T3D's).
type hwRegister struct{ m machines.FetchIncRegister }

func (r hwRegister) fetchInc(p *sim.Proc, x, target *PE) uint64 {
	return r.m.FetchInc(p, x.rank, target.rank)
}

func (r hwRegister) read(p *sim.Proc, x *PE) uint64 { return r.m.ReadFetchInc(p, x.rank) }

func (r hwRegister) reset(p *sim.Proc, x *PE) { r.m.SetFetchInc(p, x.rank, 0) }

func (r hwRegister) place(*PE) (mem.Addr, error) { return 0, nil }

func (r hwRegister) bytes() int { return 0 }

// wordRegister is the register built from a word in each PE's memory (its
// asyncState's word) on a machine whose remote atomic is a
// fetch-and-increment of a word (the PCI-SCI adapter's, LAPI_Rmw's): a
// sender increments the receiver's word with it; the owner reads its word
// with an uncached load (the remote atomic does not update its cache) and
// resets it with a store, after a fence, so that the stores that emptied
// its pool are in memory before a sender can take a buffer again.
type wordRegister struct{ m machines.RemoteFetchInc }

func (r wordRegister) fetchInc(p *sim.Proc, x, target *PE) uint64 {
	return r.m.FetchIncAt(p, x.rank, target.rank, target.async.word)
}

func (r wordRegister) read(p *sim.Proc, x *PE) uint64 {
	return x.cpu.LoadUncached(p, x.async.word, 8)
}

func (r wordRegister) reset(p *sim.Proc, x *PE) {
	x.cpu.Fence(p)
	x.cpu.Store(p, x.async.word, 8, 0)
}

// place allocates x's word, in memory other PEs reach remotely, zero.
func (r wordRegister) place(x *PE) (mem.Addr, error) {
	w, err := machines.MapRemote(r.m, nil, x.rank, x.rank, "aclmpl.register", 8)
	return w.Addr, err
}

func (r wordRegister) bytes() int { return 64 } // a line of its own

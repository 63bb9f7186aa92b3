package stacks

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// RemoteCopy is one rank's ARMCI (papers/armci-sp.txt, Table 1): put, get
// and accumulate in contiguous, vector and strided forms, fences,
// read-modify-write and collective allocation. Remote addresses are in
// the remote rank's memory, as Malloc returns them. Puts and accumulates
// return at local completion (the source may be reused); Fence and
// AllFence wait for remote completion. Operations to one rank complete in
// the order issued; to different ranks in any order (2.3).
type RemoteCopy interface {
	Rank
	// Malloc allocates n bytes of remotely accessible memory on every rank
	// (collective: every rank calls it) and returns each rank's address.
	Malloc(p *sim.Proc, n int) ([]mem.Addr, error)
	// Free frees memory Malloc returned (collective).
	Free(p *sim.Proc, addrs []mem.Addr) error
	// PutS, GetS and AccS move a strided section (Figure 2); proc is the
	// remote rank. For GetS the source is remote, otherwise the
	// destination is.
	PutS(p *sim.Proc, s Strided, proc int) error
	GetS(p *sim.Proc, s Strided, proc int) error
	AccS(p *sim.Proc, t AccType, scale complex128, s Strided, proc int) error
	// PutV, GetV and AccV move generalized I/O vectors (Figure 1).
	PutV(p *sim.Proc, v []GIOV, proc int) error
	GetV(p *sim.Proc, v []GIOV, proc int) error
	AccV(p *sim.Proc, t AccType, scale complex128, v []GIOV, proc int) error
	// Fence waits until every put and accumulate to proc is complete
	// there; AllFence does it for every rank.
	Fence(p *sim.Proc, proc int)
	AllFence(p *sim.Proc)
	// Rmw atomically updates the 8-byte integer at a on proc and returns
	// its previous value: fetch-and-increment adds v, swap stores v.
	Rmw(p *sim.Proc, op RmwOp, proc int, a mem.Addr, v int64) (int64, error)
	// Barrier synchronizes every rank (not an ARMCI operation: what the
	// programs of the paper do with their message-passing library).
	Barrier(p *sim.Proc)
}

// Strided is a strided section (armci-sp.txt Figure 2): Count[0] bytes
// contiguous, Count[i] blocks at level i; SrcStride[i-1] and
// DstStride[i-1] are the byte strides of level i. Stride levels are
// len(Count)-1.
type Strided struct {
	Src       mem.Addr
	SrcStride []int
	Dst       mem.Addr
	DstStride []int
	Count     []int
}

// GIOV is one element of a generalized I/O vector (Figure 1): len(Src)
// blocks of Bytes each, Src[i] copied to Dst[i].
type GIOV struct {
	Src, Dst []mem.Addr
	Bytes    int
}

// AccType is an accumulate's element type.
type AccType uint8

// The element types of ARMCI's accumulate (2.2).
const (
	AccInt  AccType = iota + 1 // 4-byte int
	AccDbl                     // double
	AccCplx                    // complex: two 4-byte floats
	AccDcpl                    // double complex
)

// Size is the element's size in bytes.
func (t AccType) Size() int {
	switch t {
	case AccInt:
		return 4
	case AccDbl, AccCplx:
		return 8
	case AccDcpl:
		return 16
	}
	return 0
}

// RmwOp is a read-modify-write operator.
type RmwOp uint8

// The operators of ARMCI_Rmw (2.2).
const (
	FetchAndAdd RmwOp = iota + 1
	Swap
)

// Contiguous is the strided form of n contiguous bytes (ARMCI's
// contiguous put, get and accumulate are macros on their strided
// counterparts, 2.1).
func Contiguous(src, dst mem.Addr, n int) Strided {
	return Strided{Src: src, Dst: dst, Count: []int{n}}
}

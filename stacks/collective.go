package stacks

import (
	"encoding/binary"
	"math"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// Optional collectives of a stack's rank: a workload type-asserts them
// and falls back to its own algorithm over Comm (TreeBcast, TreeReduce)
// when a stack does not offer them. ACLMPL's synchronous library offers
// them all (papers/aclmpl-t3d.txt 4.3).

// SendRecver is a send-and-receive: sbuf to dst while rbuf is received
// from src.
type SendRecver interface {
	SendRecv(p *sim.Proc, sbuf mem.Region, dst int, rbuf mem.Region, src int) (Status, error)
}

// Bcaster is a broadcast of buf from root; every rank passes a buffer of
// the same length.
type Bcaster interface {
	Bcast(p *sim.Proc, buf mem.Region, root int) error
}

// Reducer combines every rank's buf with op into root's buf.
type Reducer interface {
	Reduce(p *sim.Proc, buf mem.Region, op Op, root int) error
}

// SoleCollectives marks a rank whose library has one broadcast and one
// reduce for blocking and nonblocking programs alike: MPI-1 has no
// nonblocking collectives, so an MPI program calls MPI_Bcast and
// MPI_Reduce whether its point-to-point calls block or not. A workload's
// nonblocking program uses its Bcaster and Reducer too.
type SoleCollectives interface {
	SoleCollectives()
}

// BinarySwapReducer is Reduce by the binary-swap algorithm.
type BinarySwapReducer interface {
	BinarySwapReduce(p *sim.Proc, buf mem.Region, op Op, root int) error
}

// Op is a user-supplied reduction operator ("the reduce primitive is
// extensible in that the user can write a reduction operator", 4.3).
type Op struct {
	Name      string
	ElemBytes int
	// Combine folds in into acc element by element (acc[i] = acc[i] op
	// in[i]); both hold a whole number of elements.
	Combine func(acc, in []byte)
	// CyclesPerElem is the CPU time of the operator per element: the
	// user's code, charged to the PE that combines.
	CyclesPerElem float64
}

// combineCycles is the software cost per element of the built-in
// operators (ACLMPL's and the workloads' own trees), charged on every machine: the loop body of two 8-byte loads, an
// add and a store. Estimated from the T3D's local memory rates (320 MB/s
// read, 462 MB/s write, hardware.yaml t3d.local_mem_read_MBps) as about 67
// ns, 10 cycles at 150 MHz, plus the arithmetic: 12 cycles. Not calibrated.
const combineCycles = 12

// SumFloat64 adds arrays of little-endian float64.
var SumFloat64 = Op{Name: "sum_float64", ElemBytes: 8, CyclesPerElem: combineCycles,
	Combine: func(acc, in []byte) {
		for i := 0; i+8 <= len(acc); i += 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(acc[i:])) + math.Float64frombits(binary.LittleEndian.Uint64(in[i:]))
			binary.LittleEndian.PutUint64(acc[i:], math.Float64bits(v))
		}
	}}

// SumInt64 adds arrays of little-endian int64 (wrapping).
var SumInt64 = Op{Name: "sum_int64", ElemBytes: 8, CyclesPerElem: combineCycles,
	Combine: func(acc, in []byte) {
		n := len(acc) &^ 7
		acc, in = acc[:n], in[:n]
		for i := 0; i < n; i += 8 {
			binary.LittleEndian.PutUint64(acc[i:i+8], binary.LittleEndian.Uint64(acc[i:i+8])+binary.LittleEndian.Uint64(in[i:i+8]))
		}
	}}

// Combine applies op to acc and in (regions of PE cpu's memory) as that
// PE's program does: it reads both through the CPU (its cache, stale lines
// included), writes the result through it, and is charged op's cycles per
// element.
func Combine(p *sim.Proc, cpu machines.Processor, op Op, acc, in mem.Region) {
	cpu.Reduce(p, acc.Addr, in.Addr, acc.Len, op.ElemBytes, op.CyclesPerElem*float64(acc.Len/op.ElemBytes), op.Combine)
}

// HighBit is the largest power of two not above n (1 for n < 2).
func HighBit(n int) int {
	b := 1
	for b*2 <= n {
		b *= 2
	}
	return b
}

// TreeBcast is the broadcast tree of 4.3 for PE rank of size, from root,
// over the caller's send and receive: in each of log(P) phases the PEs that
// have the data send it to the PE whose number (relative to root) differs in
// the next lower bit.
func TreeBcast(rank, size, root int, send, recv func(pe int) error) error {
	v := (rank - root + size) % size
	real := func(w int) int { return (w + root) % size }
	for mask := HighBit(max(size-1, 1)); mask >= 1; mask /= 2 {
		switch {
		case v%(2*mask) == 0 && v+mask < size:
			if err := send(real(v + mask)); err != nil {
				return err
			}
		case v%(2*mask) == mask:
			if err := recv(real(v - mask)); err != nil {
				return err
			}
		}
	}
	return nil
}

// TreeReduce is the broadcast tree in reverse (4.3) for PE rank: in phase i
// the PEs with a 1 in bit i of their number (relative to root) send to the
// PE with that bit 0, which receives and combines (recvCombine) and goes
// on.
func TreeReduce(rank, size, root int, send, recvCombine func(pe int) error) error {
	v := (rank - root + size) % size
	real := func(w int) int { return (w + root) % size }
	for bit := 1; bit < size; bit *= 2 {
		if v&bit != 0 {
			return send(real(v - bit))
		}
		if v+bit < size {
			if err := recvCombine(real(v + bit)); err != nil {
				return err
			}
		}
	}
	return nil
}

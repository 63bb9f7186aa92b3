package aclmpl

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

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
// operators, charged on every machine: the loop body of two 8-byte loads, an
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
		for i := 0; i+8 <= len(acc); i += 8 {
			binary.LittleEndian.PutUint64(acc[i:], binary.LittleEndian.Uint64(acc[i:])+binary.LittleEndian.Uint64(in[i:]))
		}
	}}

// Combine applies op to acc and in (regions of PE cpu's memory) as that
// PE's program does: it reads both through the CPU (its cache, stale lines
// included), writes the result through it, and is charged op's cycles per
// element.
func Combine(p *sim.Proc, cpu *mem.CPU, op Op, acc, in mem.Region) {
	cpu.Compute(p, op.CyclesPerElem*float64(acc.Len/op.ElemBytes))
	a, b := make([]byte, acc.Len), make([]byte, acc.Len)
	cpu.Peek(acc.Addr, a)
	cpu.Peek(in.Addr, b)
	op.Combine(a, b)
	cpu.Poke(acc.Addr, a)
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

// scratchOf returns n bytes of receive space for the reductions.
func (x *PE) scratchOf(n int) (mem.Region, error) {
	if x.scratch.Len < n {
		r, err := x.m.Alloc(x.rank, "aclmpl.scratch", n)
		if err != nil {
			return mem.Region{}, fmt.Errorf("aclmpl: PE %d: reduction scratch: %w", x.rank, err)
		}
		x.scratch = r
	}
	return x.scratch.Slice(0, n), nil
}

// virt and real translate between PE numbers and numbers relative to root.
func (x *PE) virt(root int) int    { return (x.rank - root + x.size) % x.size }
func (x *PE) real(v, root int) int { return (v + root) % x.size }

// Bcast broadcasts buf from root to every PE along TreeBcast's tree with
// the synchronous send and receive. Every PE passes a buffer of the same
// length.
func (x *PE) Bcast(p *sim.Proc, buf mem.Region, root int) error {
	if err := x.checkPeer("broadcast root", root); err != nil {
		return err
	}
	err := TreeBcast(x.rank, x.size, root,
		func(pe int) error { return x.Send(p, buf, pe, 0) },
		func(pe int) error { _, err := x.Recv(p, buf, pe, 0); return err })
	if err != nil {
		return fmt.Errorf("broadcast: %w", err)
	}
	return nil
}

func checkOp(op Op, n int) error {
	if op.Combine == nil || op.ElemBytes <= 0 {
		return fmt.Errorf("aclmpl: reduce: operator %q has no Combine function or element size", op.Name)
	}
	if n%op.ElemBytes != 0 {
		return fmt.Errorf("aclmpl: reduce: buffer of %d bytes is not a whole number of %d-byte elements", n, op.ElemBytes)
	}
	return nil
}

// reduceArgs checks a reduction's arguments and returns its receive space.
func (x *PE) reduceArgs(buf mem.Region, op Op, root int) (mem.Region, error) {
	if err := x.checkPeer("reduce root", root); err != nil {
		return mem.Region{}, err
	}
	if err := checkOp(op, buf.Len); err != nil {
		return mem.Region{}, err
	}
	return x.scratchOf(buf.Len)
}

// Reduce combines every PE's buf with op into root's buf along TreeReduce's
// tree with the synchronous send and receive. Non-root buffers are
// overwritten with partial results.
func (x *PE) Reduce(p *sim.Proc, buf mem.Region, op Op, root int) error {
	in, err := x.reduceArgs(buf, op, root)
	if err != nil {
		return err
	}
	err = TreeReduce(x.rank, x.size, root,
		func(pe int) error { return x.Send(p, buf, pe, 0) },
		func(pe int) error {
			if _, err := x.Recv(p, in, pe, 0); err != nil {
				return err
			}
			Combine(p, x.cpu, op, buf, in)
			return nil
		})
	if err != nil {
		return fmt.Errorf("reduce: %w", err)
	}
	return nil
}

// swapRange is the part [lo, hi) of an array of n elements PE v (of a
// power-of-two group of size p2) holds after every binary-swap phase: in
// the phase of bit b it keeps the lower half if bit b of v is 0, the upper
// half otherwise.
func swapRange(v, p2, n int) (lo, hi int) {
	lo, hi = 0, n
	for b := 1; b < p2; b *= 2 {
		mid := lo + (hi-lo)/2
		if v&b == 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi
}

// BinarySwapReduce combines every PE's buf with op into root's buf with the
// binary-swap algorithm (4.3): in phase i two PEs whose numbers differ only
// in bit i split their current array in halves, one keeps the lower half
// and the other the upper, they exchange the halves they give away, and
// each combines what it receives with its own; a final gather brings the
// distributed result to root. With a partition that is not a power of two,
// the PEs beyond the largest power of two first fold their arrays into
// their partners (an extra phase). Non-root buffers are overwritten.
func (x *PE) BinarySwapReduce(p *sim.Proc, buf mem.Region, op Op, root int) error {
	in, err := x.reduceArgs(buf, op, root)
	if err != nil {
		return err
	}
	eb := op.ElemBytes
	n := buf.Len / eb
	v := x.virt(root)
	p2 := HighBit(x.size)
	// Fold the PEs beyond the power of two into their partners.
	if v >= p2 {
		if err := x.Send(p, buf, x.real(v-p2, root), 0); err != nil {
			return fmt.Errorf("binary-swap reduce: %w", err)
		}
		return nil
	}
	if v+p2 < x.size {
		if _, err := x.Recv(p, in, x.real(v+p2, root), 0); err != nil {
			return fmt.Errorf("binary-swap reduce: %w", err)
		}
		Combine(p, x.cpu, op, buf, in)
	}
	// The swap phases.
	lo, hi := 0, n
	for b := 1; b < p2; b *= 2 {
		mid := lo + (hi-lo)/2
		keepLo, keepHi, giveLo, giveHi := lo, mid, mid, hi
		if v&b != 0 {
			keepLo, keepHi, giveLo, giveHi = mid, hi, lo, mid
		}
		partner := x.real(v^b, root)
		keep := buf.Slice(keepLo*eb, (keepHi-keepLo)*eb)
		give := buf.Slice(giveLo*eb, (giveHi-giveLo)*eb)
		rin := in.Slice(keepLo*eb, keep.Len)
		if _, err := x.SendRecv(p, give, partner, rin, partner); err != nil {
			return fmt.Errorf("binary-swap reduce: %w", err)
		}
		Combine(p, x.cpu, op, keep, rin)
		lo, hi = keepLo, keepHi
	}
	// The final gather into root.
	if v != 0 {
		if err := x.Send(p, buf.Slice(lo*eb, (hi-lo)*eb), root, 0); err != nil {
			return fmt.Errorf("binary-swap reduce: gather: %w", err)
		}
		return nil
	}
	for w := 1; w < p2; w++ {
		wlo, whi := swapRange(w, p2, n)
		if _, err := x.Recv(p, buf.Slice(wlo*eb, (whi-wlo)*eb), x.real(w, root), 0); err != nil {
			return fmt.Errorf("binary-swap reduce: gather: %w", err)
		}
	}
	return nil
}

package aclmpl

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// scratchOf returns n bytes of receive space for the reductions.
func (x *PE) scratchOf(n int) (mem.Region, error) {
	if x.scratch == nil || x.scratch.Len < n {
		r, err := x.lib.m.Alloc(x.rank, "aclmpl.scratch", n)
		if err != nil {
			return mem.Region{}, fmt.Errorf("aclmpl: PE %d: reduction scratch: %w", x.rank, err)
		}
		x.scratch = &r
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
	err := stacks.TreeBcast(x.rank, x.size, root,
		func(pe int) error { return x.Send(p, buf, pe, 0) },
		func(pe int) error { _, err := x.Recv(p, buf, pe, 0); return err })
	if err != nil {
		return fmt.Errorf("broadcast: %w", err)
	}
	return nil
}

func checkOp(op stacks.Op, n int) error {
	if op.Combine == nil || op.ElemBytes <= 0 {
		return fmt.Errorf("aclmpl: reduce: operator %q has no Combine function or element size", op.Name)
	}
	if n%op.ElemBytes != 0 {
		return fmt.Errorf("aclmpl: reduce: buffer of %d bytes is not a whole number of %d-byte elements", n, op.ElemBytes)
	}
	return nil
}

// reduceArgs checks a reduction's arguments and returns its receive space.
func (x *PE) reduceArgs(buf mem.Region, op stacks.Op, root int) (mem.Region, error) {
	if err := x.checkPeer("reduce root", root); err != nil {
		return mem.Region{}, err
	}
	if err := checkOp(op, buf.Len); err != nil {
		return mem.Region{}, err
	}
	return x.scratchOf(buf.Len)
}

// Reduce is ACLMPL's reduce primitive (4.3): the binary-swap algorithm
// (BinarySwapReduce) for arrays of binary_swap_from_elems elements or more,
// where the paper found it faster on the T3D, and the tree otherwise
// (TreeReduce).
func (x *PE) Reduce(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	if from := x.lib.params.BinarySwapFromElems; from > 0 && op.ElemBytes > 0 && buf.Len/op.ElemBytes >= from {
		return x.BinarySwapReduce(p, buf, op, root)
	}
	return x.TreeReduce(p, buf, op, root)
}

// TreeReduce combines every PE's buf with op into root's buf along
// stacks.TreeReduce's tree with the synchronous send and receive (4.3: the
// broadcast's tree "in reverse"). Non-root buffers are overwritten with
// partial results.
func (x *PE) TreeReduce(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	in, err := x.reduceArgs(buf, op, root)
	if err != nil {
		return err
	}
	err = stacks.TreeReduce(x.rank, x.size, root,
		func(pe int) error { return x.Send(p, buf, pe, 0) },
		func(pe int) error {
			if _, err := x.Recv(p, in, pe, 0); err != nil {
				return err
			}
			stacks.Combine(p, x.cpu, op, buf, in)
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
func (x *PE) BinarySwapReduce(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	in, err := x.reduceArgs(buf, op, root)
	if err != nil {
		return err
	}
	eb := op.ElemBytes
	n := buf.Len / eb
	v := x.virt(root)
	p2 := stacks.HighBit(x.size)
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
		stacks.Combine(p, x.cpu, op, buf, in)
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
		stacks.Combine(p, x.cpu, op, keep, rin)
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

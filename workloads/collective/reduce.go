package collective

import (
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// reduce: every PE's buffer (int64 elements of its own window) is summed
// into PE 0, which checks the sum.
func (pt *point) reduce(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	var scratch mem.Region
	// Receive space for the tree's combines, on the PEs that receive in it
	// (even PEs with a successor; the odd ones are leaves: they only send).
	// A stack's own reduce (synchronous ACLMPL's) has its own.
	if pt.sys.ownReduce(pe) == nil && pe%2 == 0 && pe+1 < pt.pes {
		if scratch, err = pt.sys.buffer(pe, pt.n); err != nil {
			return err
		}
	}
	pt.fill(pe, buf, pe)
	pt.barrier(p, pe, true)
	if err := pt.sys.reduce(p, pe, buf, scratch); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	if pe == 0 {
		pt.compare(p, 0, pt.view(0, buf), pt.sum(), "reduction result")
	}
	return nil
}

// sumBlock is the bytes of the expected sum that sum adds every window
// into at a time (they stay in the host's cache meanwhile).
const sumBlock = 16 << 10

// sum is what the reduce must leave at PE 0: every PE's window added
// element by element, computed here from the stream, not by the stack.
func (pt *point) sum() []byte {
	want := make([]byte, pt.n)
	for lo := 0; lo < pt.n; lo += sumBlock {
		hi := min(pt.n, lo+sumBlock)
		for q := 0; q < pt.pes; q++ {
			stacks.SumInt64.Combine(want[lo:hi], pt.window(q)[lo:hi])
		}
	}
	return want
}

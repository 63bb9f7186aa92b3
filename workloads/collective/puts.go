package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/workloads"
)

// symmetricRecv allocates PE pe's receive region of n bytes for raw
// one-sided puts and records its address, which the putting PEs use: a
// symmetric buffer (stacks.OneSided.Symmetric: the same allocations in the
// same order give it the same address on every PE that receives; the
// senders only need its address, so PEs that only send do not hold one).
// It is the first allocation of a PE.
func (pt *point) symmetricRecv(pe, n int) (mem.Region, error) {
	r, err := pt.sys.ones[pe].Symmetric(n)
	if err != nil {
		return r, err
	}
	if pt.symSet && pt.sym != r.Addr {
		return r, fmt.Errorf("symmetric receive buffer at %#x, other PEs have it at %#x", r.Addr, pt.sym)
	}
	pt.sym, pt.symSet = r.Addr, true
	return r, nil
}

// symRegion is the symmetric receive region of n bytes as a PE that puts
// into it names it (at another PE).
func (pt *point) symRegion(n int) mem.Region { return mem.Region{Addr: pt.sym, Len: n} }

// checkReceived detects lost raw puts, on a machine that counts the bytes
// puts deliver (machines.Delivered): every PE must have received the bytes
// its pattern sends it.
func (pt *point) checkReceived(kind string) {
	for pe := 0; pe < pt.pes; pe++ {
		want := 0
		switch {
		case kind == "alltoall":
			want = (pt.pes - 1) * pt.n
		case kind == "alltoone" && pe == 0, kind == "onetoall" && pe != 0:
			want = (pt.pes - 1) * pt.n
			if kind == "onetoall" {
				want = pt.n
			}
		}
		if got := int(pt.sys.delivered.Received(pe)); got != want {
			pt.fail(workloads.Loss, fmt.Sprintf("PE %d: received %d bytes by put, want %d, at %v", pe, got, want, pt.eng.Now()))
		}
	}
}

// shmemSlotBytes bounds the receive space raw SHMEM gives each sender a
// slot of its own in: with (P-1) x bytes up to this, every put lands in its
// sender's slot and is verified there. Beyond it (a 128-PE all-to-all of
// 1 MB would need 127 MB per PE) the senders share one region: each still
// sends its own window, the puts overwrite each other, and the one that
// arrives last is what stays; the receiver checks that the region holds
// exactly one of its senders' windows, byte for byte (verifyLastPut: a
// corrupted, torn or stale region fails), and the byte count that every
// put arrived whole (checkReceived: a lost put fails). The contents of the
// puts that were overwritten cannot be checked: the benchmark overwrote
// them.
const shmemSlotBytes = 2 << 20

// slotted reports whether raw SHMEM senders get receive slots of their own.
func (pt *point) slotted() bool { return (pt.pes-1)*pt.n <= shmemSlotBytes }

// shmemRecvBytes is the receive space of a raw SHMEM receiver of senders
// messages.
func (pt *point) shmemRecvBytes(senders int) int {
	if pt.slotted() {
		return senders * pt.n
	}
	return pt.n
}

// shmemSlot is where src's put lands among a receiver's slots, skipping
// the receiver's own number (the shared region when not slotted).
func (pt *point) shmemSlot(recv mem.Region, src, dst int) mem.Region {
	if !pt.slotted() {
		return recv.Slice(0, pt.n)
	}
	k := src
	if src > dst {
		k--
	}
	return recv.Slice(k*pt.n, pt.n)
}

// verifyPuts checks the raw SHMEM puts PE pe received from senders: each
// in its own slot, or the last one to arrive in the shared region.
func (pt *point) verifyPuts(p *sim.Proc, pe int, recv mem.Region, senders []int) {
	if !pt.slotted() {
		pt.verifyLastPut(p, pe, recv.Slice(0, pt.n), senders)
		return
	}
	for _, s := range senders {
		pt.verify(p, pe, pt.shmemSlot(recv, s, pe), s, "put")
	}
}

// verifyLastPut checks a region every sender put its own window into: it
// must hold one of them exactly. The candidate is the sender whose window
// agrees longest with the region; a mismatch is reported against it.
func (pt *point) verifyLastPut(p *sim.Proc, pe int, region mem.Region, senders []int) {
	got := pt.view(pe, region)
	best, bestLen := senders[0], -1
	for _, s := range senders {
		k := pt.stream().Diff(got, pt.off(s))
		if k < 0 {
			return
		}
		if k > bestLen {
			best, bestLen = s, k
		}
	}
	pt.compare(p, pe, got, pt.window(best), fmt.Sprintf("shared put region (nearest: PE %d's window)", best))
}

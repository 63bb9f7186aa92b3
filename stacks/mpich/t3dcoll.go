package mpich

import (
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// Collectives of ch_t3d built on SHMEM (Params.Collectives "shmem"):
// MPI_Bcast and MPI_Reduce move data with puts into a system buffer each
// PE keeps for them, along the binomial trees of stacks.TreeBcast and
// stacks.TreeReduce, instead of going through the point-to-point path
// (packets, matching, eager buffers; Params.Collectives "p2p").
//
// Why (papers/aclmpl-t3d.txt, section 5): at Table 2's point ACLMPL's
// point-to-point functions are "4 to 7 times faster than the other message
// passing systems" while its "broadcast and reduce are roughly 10 to 80
// percent faster", and ACLMPL's own broadcast and reduce are its
// synchronous sends and receives along the same tree (4.3). A tree of the
// other systems' own point-to-point messages would keep their 4-7x; the
// paper's MPI (EPCC's, footnote 5, whose code we do not have) must have
// reached the data another way. We take the way the T3D offered any
// library beside its messages: SHMEM (Cray shipped broadcasts and
// reductions in its SHMEM library; an assumption, not in the paper). What
// MPI still pays that ACLMPL's collectives do not:
//
//   - the software of an MPI call (communicator, datatype and argument
//     handling): packet_cycles once per call on each PE, the size of the
//     point-to-point software (assumed), run as the collective path's
//     code through the instruction cache (code.go);
//   - a system buffer between the tree's PEs: MPI_Bcast's caller names
//     only its own buffer, so the parent cannot put into the child's user
//     buffer (ACLMPL's receiver sends its address in a request block,
//     4.1); data lands in the child's system buffer and is copied out at
//     memcpy speed (170 MB/s, 4.2), in chunks of the buffer's size
//     (eager_bytes) for longer messages;
//   - flow control on that buffer: a PE tells its parent (a put of the
//     chunk's number into the parent's memory) that its system buffer is
//     free before the parent may put into it;
//   - MPI_Reduce leaves the send buffer unchanged: a PE that combines
//     first copies its contribution into a temporary accumulator (the
//     root accumulates in place, as with MPI_IN_PLACE).
//
// Every PE calls the collectives in the same order (MPI's rule), so each
// chunk of each call has the same number everywhere: the flags carry it,
// and a flag from an earlier chunk cannot be mistaken for a new one.

// collLayout is where every PE's collective state lies: its system buffer
// and two word arrays indexed by the writing PE, ready (that PE's system
// buffer is free for chunk k) and flag (that PE's put of chunk k into
// this PE's system buffer is delivered). Allocated for every PE at the
// first collective call, in the PEs' memories, at no simulated cost (as
// if reserved at MPI_Init), so runs without collectives hold none.
type collLayout struct {
	m            machines.RemoteWrite
	chunk        int
	sys          []mem.Region // each PE's system buffer
	ready, flags []mem.Addr
}

func (l *collLayout) alloc(procs int) error {
	if l.sys != nil {
		return nil
	}
	for i := 0; i < procs; i++ {
		s, err := machines.MapRemote(l.m, nil, i, i, "mpich.collective", l.chunk)
		if err != nil {
			return fmt.Errorf("mpich %s: PE %d: collective system buffer (eager_bytes %d): %w", DeviceT3D, i, l.chunk, err)
		}
		w, err := machines.MapRemote(l.m, nil, i, i, "mpich.collective.flags", 2*8*procs)
		if err != nil {
			return fmt.Errorf("mpich %s: PE %d: collective flags: %w", DeviceT3D, i, err)
		}
		l.sys = append(l.sys, s)
		l.ready = append(l.ready, w.Addr)
		l.flags = append(l.flags, w.Addr+mem.Addr(8*procs))
	}
	return nil
}

// rankOf is Rank under a name that does not hide its method Rank when
// embedded.
type rankOf = Rank

// collRank is a ch_t3d rank with the SHMEM collectives: stacks.Bcaster
// and stacks.Reducer, for blocking and nonblocking programs alike
// (stacks.SoleCollectives: MPI-1 has no nonblocking collectives).
type collRank struct {
	*rankOf
	l   *collLayout
	seq uint64     // chunks handled so far, the same on every PE
	acc mem.Region // MPI_Reduce's accumulator
}

// SoleCollectives: an MPI program calls MPI_Bcast and MPI_Reduce whether
// its point-to-point calls block or not.
func (c *collRank) SoleCollectives() {}

// signal puts chunk k's number into this PE's word of PE to's array arr.
func (c *collRank) signal(p *sim.Proc, to int, arr []mem.Addr, k uint64) {
	c.l.m.PutWord(p, c.rank, to, arr[to]+mem.Addr(8*c.rank), k)
}

// await spins until word from of this PE's array holds chunk k's number.
func (c *collRank) await(p *sim.Proc, arr []mem.Addr, from int, k uint64, what string) {
	a := arr[c.rank] + mem.Addr(8*from)
	c.cpu.SpinUntil(p, sim.Reason(fmt.Sprintf("rank %d: %s from rank %d (chunk %d, %s collectives)", c.rank, what, from, k, DeviceT3D)),
		func() bool { return c.cpu.LoadUncached(p, a, 8) >= k }, a)
}

// putChunk waits until PE to's system buffer is free for chunk k, puts
// src into it, waits for delivery and raises to's flag.
func (c *collRank) putChunk(p *sim.Proc, to int, src mem.Region, k uint64) {
	c.await(p, c.l.ready, to, k, "waiting for a free system buffer")
	if src.Len > 0 {
		c.l.m.Put(p, c.rank, to, c.l.sys[to].Addr, src.Addr, src.Len)
		c.l.m.Quiet(p, c.rank)
	}
	c.signal(p, to, c.l.flags, k)
}

// getChunk tells PE from that this PE's system buffer is free for chunk
// k, waits for the chunk and drops the stale cache lines the put left
// (see t3dDevice.invalidate); the data is then at sysBuf(n).
func (c *collRank) getChunk(p *sim.Proc, from int, n int, k uint64) {
	c.signal(p, from, c.l.ready, k)
	c.await(p, c.l.flags, from, k, "waiting for collective data")
	if n > 0 {
		c.cpu.InvalidateRange(p, c.l.sys[c.rank].Addr, n)
	}
}

func (c *collRank) sysBuf(n int) mem.Region {
	return c.l.sys[c.rank].Slice(0, n)
}

// begin is the entry of a collective call: MPI's software path, the
// layout, a valid root.
func (c *collRank) begin(p *sim.Proc, call string, root int) error {
	if root < 0 || root >= c.Size() {
		return fmt.Errorf("mpich: rank %d: %s with invalid root %d", c.rank, call, root)
	}
	c.cpu.Execute(p, c.w.params.collCode(), c.w.params.PacketCycles)
	return c.l.alloc(c.Size())
}

// Bcast is MPI_Bcast: chunk by chunk, each PE but the root receives the
// chunk into its system buffer from its parent in the tree, forwards it
// from there to its children, then copies it into buf.
func (c *collRank) Bcast(p *sim.Proc, buf mem.Region, root int) error {
	if err := c.begin(p, "MPI_Bcast", root); err != nil {
		return err
	}
	for off := 0; off < buf.Len || off == 0; off += c.l.chunk {
		part := buf.Slice(off, min(c.l.chunk, buf.Len-off))
		c.seq++
		k, src := c.seq, part
		if c.rank != root {
			src = c.sysBuf(part.Len)
		}
		err := stacks.TreeBcast(c.rank, c.Size(), root,
			func(to int) error { c.putChunk(p, to, src, k); return nil },
			func(from int) error { c.getChunk(p, from, part.Len, k); return nil })
		if err != nil {
			return err
		}
		if c.rank != root && part.Len > 0 {
			machines.Memcpy(c.l.m, p, c.rank, part.Addr, src.Addr, part.Len)
		}
		if buf.Len == 0 {
			break
		}
	}
	return nil
}

// Reduce is MPI_Reduce with buf as the send buffer and, at the root, the
// receive buffer too (MPI_IN_PLACE): chunk by chunk along the reverse
// tree, a PE combines each child's chunk, read from its system buffer,
// into its accumulator and puts the result into its parent's system
// buffer. buf is left unchanged except at the root.
func (c *collRank) Reduce(p *sim.Proc, buf mem.Region, op stacks.Op, root int) error {
	if err := c.begin(p, "MPI_Reduce", root); err != nil {
		return err
	}
	if op.Combine == nil || op.ElemBytes <= 0 || buf.Len%op.ElemBytes != 0 {
		return fmt.Errorf("mpich: rank %d: MPI_Reduce: operator %q cannot combine a buffer of %d bytes", c.rank, op.Name, buf.Len)
	}
	chunk := c.l.chunk - c.l.chunk%op.ElemBytes
	if chunk <= 0 {
		return fmt.Errorf("mpich: rank %d: MPI_Reduce: the %d-byte system buffer holds no %d-byte element", c.rank, c.l.chunk, op.ElemBytes)
	}
	acc := buf
	if c.rank != root {
		if c.acc.Len < buf.Len {
			r, err := c.w.host.Alloc(c.rank, "mpich reduce accumulator", buf.Len)
			if err != nil {
				return fmt.Errorf("mpich: rank %d: MPI_Reduce accumulator: %w", c.rank, err)
			}
			c.acc = r
		}
		acc = c.acc.Slice(0, buf.Len)
	}
	for off := 0; off < buf.Len; off += chunk {
		n := min(chunk, buf.Len-off)
		c.seq++
		k, a := c.seq, acc.Slice(off, n)
		copied := c.rank == root
		err := stacks.TreeReduce(c.rank, c.Size(), root,
			func(to int) error {
				if !copied { // a leaf sends its own contribution
					a = buf.Slice(off, n)
				}
				c.putChunk(p, to, a, k)
				return nil
			},
			func(from int) error {
				if !copied {
					machines.Memcpy(c.l.m, p, c.rank, a.Addr, buf.Addr+mem.Addr(off), n)
					copied = true
				}
				c.getChunk(p, from, n, k)
				stacks.Combine(p, c.cpu, op, a, c.sysBuf(n))
				return nil
			})
		if err != nil {
			return err
		}
	}
	return nil
}

package trace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// collTag is the tag of the shared collective layer's messages, above
// every tag a trace may use (a trace's receive with any tag could still
// match one: a time-independent trace does not record communicators).
const collTag = 1<<30 + 1

// own are the collectives a stack offers itself.
type own struct {
	bcast    []stacks.Bcaster
	reduce   []stacks.Reducer
	barrier  []Barrierer
	alltoall []Alltoaller
	sendrecv []stacks.SendRecver
}

// Algorithms of the shared layer, as the outputs name them.
const (
	algoTreeBcast  = "shared layer: binomial tree over point-to-point (stacks.TreeBcast)"
	algoTreeReduce = "shared layer: binomial tree over point-to-point, int64 sums (stacks.TreeReduce)"
	algoAllreduce  = "reduce to rank 0, then broadcast from it (each as listed)"
	algoDissem     = "shared layer: dissemination, zero-byte messages to rank+2^k"
	algoPairwise   = "shared layer: pairwise exchange, step k to rank+k and from rank-k"
	algoLinear     = "shared layer: linear, the root and each rank in turn"
	algoRing       = "shared layer: ring, n-1 steps to rank+1 and from rank-1"
	algoRedScat    = "reduce to rank 0 (as listed), then linear scatter"
	algoChain      = "shared layer: linear chain, rank r from r-1 to r+1"
	algoSendRecv   = "shared layer: receive posted, send, wait"
)

// chooseAlgorithms picks, per collective, the stack's own algorithm when
// its ranks offer one (and the replay's collectives param allows it).
func (x *replayer) chooseAlgorithms(w *stacks.World, shared bool) {
	if !shared {
		x.own.bcast, _ = stacks.As[stacks.Bcaster](w, "", "")
		x.own.reduce, _ = stacks.As[stacks.Reducer](w, "", "")
		x.own.barrier, _ = stacks.As[Barrierer](w, "", "")
		x.own.alltoall, _ = stacks.As[Alltoaller](w, "", "")
		x.own.sendrecv, _ = stacks.As[stacks.SendRecver](w, "", "")
	}
	ownName := func(what string) string { return "the stack's own " + what }
	used := map[Kind]bool{}
	for _, ops := range x.prog.Ranks {
		for _, o := range ops {
			used[o.Kind] = true
		}
	}
	pick := func(k Kind, has bool, mine, shared string) {
		if !used[k] {
			return
		}
		if has {
			x.out.Algorithms[k] = ownName(mine)
		} else {
			x.out.Algorithms[k] = shared
		}
	}
	pick(Bcast, x.own.bcast != nil, "broadcast (stacks.Bcaster)", algoTreeBcast)
	pick(Reduce, x.own.reduce != nil, "reduce (stacks.Reducer), int64 sums", algoTreeReduce)
	pick(Allreduce, false, "", algoAllreduce)
	pick(Barrier, x.own.barrier != nil, "barrier", algoDissem)
	pick(Alltoall, x.own.alltoall != nil, "all-to-all", algoPairwise)
	pick(Alltoallv, false, "", algoPairwise)
	for _, k := range []Kind{Gather, Gatherv, Scatter, Scatterv} {
		pick(k, false, "", algoLinear)
	}
	pick(Allgather, false, "", algoRing)
	pick(Allgatherv, false, "", algoRing)
	pick(ReduceScatter, false, "", algoRedScat)
	pick(Scan, false, "", algoChain)
	pick(Exscan, false, "", algoChain)
	pick(SendRecv, x.own.sendrecv != nil, "send-and-receive (stacks.SendRecver)", algoSendRecv)
	// Allreduce and reduce-scatter run a reduce, allreduce a broadcast
	// too: name the algorithms they run on.
	if used[Allreduce] || used[ReduceScatter] {
		used[Reduce] = true
		pick(Reduce, x.own.reduce != nil, "reduce (stacks.Reducer), int64 sums", algoTreeReduce)
	}
	if used[Allreduce] {
		used[Bcast] = true
		pick(Bcast, x.own.bcast != nil, "broadcast (stacks.Bcaster)", algoTreeBcast)
	}
}

// collPattern is the pattern of a collective's block ids.
func (x *replayer) collPattern(c int, ids ...int) payload.Pattern {
	k := []uint64{2, uint64(c)}
	for _, i := range ids {
		k = append(k, uint64(i))
	}
	return payload.Key(x.seed, k...)
}

// csend and crecv are the shared layer's point-to-point: blocking calls,
// or on a stack whose blocking and nonblocking calls never match
// (stacks.Progress.Split) nonblocking ones and their wait, as every
// message of the layer is.
func (rs *rankState) csend(p *sim.Proc, to int, buf mem.Region) error {
	rs.x.out.Matrix[rs.r][to] += int64(buf.Len)
	if !rs.x.split {
		return rs.c.Send(p, buf, to, collTag)
	}
	q, err := rs.c.Isend(p, buf, to, collTag)
	if err != nil {
		return err
	}
	_, err = q.Wait(p)
	return err
}

func (rs *rankState) crecv(p *sim.Proc, from int, buf mem.Region) error {
	var st stacks.Status
	var err error
	if !rs.x.split {
		st, err = rs.c.Recv(p, buf, from, collTag)
	} else {
		var q stacks.Request
		if q, err = rs.c.Irecv(p, buf, from, collTag); err == nil {
			st, err = q.Wait(p)
		}
	}
	if err == nil && (st.Source != from || st.Len != buf.Len) {
		err = fmt.Errorf("collective message from rank %d of %d bytes has envelope (source %d, %d bytes)", from, buf.Len, st.Source, st.Len)
	}
	return err
}

// exchange receives rbuf from `from` while sending sbuf to `to`: the
// receive is posted first, so the exchange completes under either rule.
func (rs *rankState) exchange(p *sim.Proc, to int, sbuf mem.Region, from int, rbuf mem.Region) error {
	q, err := rs.c.Irecv(p, rbuf, from, collTag)
	if err != nil {
		return err
	}
	if err := rs.csend(p, to, sbuf); err != nil {
		return err
	}
	st, err := q.Wait(p)
	if err == nil && (st.Source != from || st.Len != rbuf.Len) {
		err = fmt.Errorf("collective message from rank %d of %d bytes has envelope (source %d, %d bytes)", from, rbuf.Len, st.Source, st.Len)
	}
	return err
}

// fill writes a pattern into b (untimed: the program's data).
func (rs *rankState) fill(b mem.Region, pat payload.Pattern) {
	payload.Write(rs.access(b), b.Addr, b.Len, pat, 0)
}

// check compares b with a pattern; false ends the run with a corruption.
func (rs *rankState) check(p *sim.Proc, o Op, b mem.Region, pat payload.Pattern, what string) bool {
	if m, ok := payload.Check(rs.access(b), b.Addr, b.Len, pat, 0); !ok {
		rs.x.fail(workloads.Corruption, "rank %d at %v, %s (%s): %s: byte %d is %#02x, want %#02x", rs.r, p.Now(), o.Kind, o.At, what, m.Offset, m.Got, m.Want)
		return false
	}
	return true
}

// words is n rounded up to whole 8-byte words: a reduction adds int64s.
func words(n int) int { return (n + 7) &^ 7 }

// sums are the first n expected bytes of the int64 sum of the patterns of
// ranks 0 .. upto of collective c. The ranks that check a reduction check
// the same sums: they are computed once and kept until the last of its
// readers has read them.
func (x *replayer) sums(c, upto, n, readers int) []byte {
	key := [2]int{c, upto}
	e, ok := x.sumCache[key]
	if !ok || n > len(e.b) {
		words := (n + 7) / 8
		b := make([]byte, 8*words)
		for j := range words {
			var s uint64
			for r := 0; r <= upto; r++ {
				s += x.collPattern(c, r).Word(j)
			}
			binary.LittleEndian.PutUint64(b[8*j:], s)
		}
		e = &sumEntry{b: b, left: readers}
		x.sumCache[key] = e
	}
	if e.left--; e.left <= 0 {
		delete(x.sumCache, key)
	}
	return e.b[:n]
}

// sumEntry is a collective's expected sums and the ranks yet to read them.
type sumEntry struct {
	b    []byte
	left int
}

// checkBytes compares b with want.
func (rs *rankState) checkBytes(p *sim.Proc, o Op, b mem.Region, want []byte, what string) bool {
	got := make([]byte, len(want))
	rs.access(b).Peek(b.Addr, got)
	for i := range want {
		if got[i] != want[i] {
			rs.x.fail(workloads.Corruption, "rank %d at %v, %s (%s): %s: byte %d is %#02x, want %#02x", rs.r, p.Now(), o.Kind, o.At, what, i, got[i], want[i])
			return false
		}
	}
	return true
}

// compute charges flops to the rank's CPU.
func (rs *rankState) compute(p *sim.Proc, flops float64) {
	if flops <= 0 {
		return
	}
	secs := flops * rs.x.scale
	if rs.cpu != nil {
		rs.cpu.Compute(p, secs*1e12/float64(rs.cpu.Clock().Period))
	} else {
		p.Sleep(sim.Time(secs * 1e12))
	}
}

// collective replays a collective op or a sendRecv.
func (rs *rankState) collective(p *sim.Proc, o Op) bool {
	x := rs.x
	c := rs.coll
	if o.Kind != SendRecv {
		rs.coll++
	}
	var bufs []mem.Region
	get := func(n int) mem.Region {
		if x.stopped {
			return mem.Region{}
		}
		b, err := rs.buffer(n)
		if err != nil {
			x.abort(err)
			return mem.Region{}
		}
		bufs = append(bufs, b)
		return b
	}
	defer func() {
		for _, b := range bufs {
			rs.release(b)
		}
	}()
	if err := rs.collectiveErr(p, o, c, get); err != nil {
		if !errors.Is(err, errStop) {
			rs.stackError(p, o, err)
		}
		return false
	}
	return !x.stopped
}

// errStop is a collective that ended the run (a corruption, a buffer that
// does not fit).
var errStop = fmt.Errorf("stopped")

func (rs *rankState) collectiveErr(p *sim.Proc, o Op, c int, get func(int) mem.Region) error {
	x := rs.x
	n, r := x.prog.Size(), rs.r
	stop := func() error {
		if x.stopped {
			return errStop
		}
		return nil
	}
	switch o.Kind {
	case SendRecv:
		return rs.sendRecv(p, o, get)
	case Barrier:
		if x.own.barrier != nil {
			return x.own.barrier[r].Barrier(p)
		}
		b := get(0)
		for k := 1; k < n; k *= 2 {
			if err := rs.exchange(p, (r+k)%n, b, (r-k%n+n)%n, b); err != nil {
				return err
			}
		}
		return nil
	case Bcast:
		b := get(o.Bytes)
		if err := stop(); err != nil {
			return err
		}
		if r == o.Peer {
			rs.fill(b, x.collPattern(c, 0))
		}
		if err := rs.bcast(p, b, o.Peer); err != nil {
			return err
		}
		if r != o.Peer && !rs.check(p, o, b, x.collPattern(c, 0), "broadcast data") {
			return errStop
		}
		return nil
	case Reduce, Allreduce:
		b := get(words(o.Bytes))
		if err := stop(); err != nil {
			return err
		}
		rs.fill(b, x.collPattern(c, r))
		root := o.Peer
		if o.Kind == Allreduce {
			root = 0
		}
		if err := rs.reduce(p, b, root, get); err != nil {
			return err
		}
		rs.compute(p, o.Flops)
		if o.Kind == Allreduce {
			if err := rs.bcast(p, b, 0); err != nil {
				return err
			}
		}
		readers := 1
		if o.Kind == Allreduce {
			readers = n
		}
		if (o.Kind == Allreduce || r == root) && !rs.checkBytes(p, o, b, x.sums(c, n-1, b.Len, readers), "reduced data") {
			return errStop
		}
		return nil
	case Scan, Exscan:
		return rs.scan(p, o, c, get)
	case ReduceScatter:
		total := 0
		for _, k := range o.RecvCounts {
			total += k
		}
		b := get(words(total))
		mine := get(o.RecvCounts[r])
		if err := stop(); err != nil {
			return err
		}
		rs.fill(b, x.collPattern(c, r))
		if err := rs.reduce(p, b, 0, get); err != nil {
			return err
		}
		rs.compute(p, o.Flops)
		off := 0
		for i, k := range o.RecvCounts {
			if r == 0 && i != 0 {
				if err := rs.csend(p, i, b.Slice(off, k)); err != nil {
					return err
				}
			}
			if i == r {
				if r == 0 {
					mine = b.Slice(off, k)
				} else if err := rs.crecv(p, 0, mine); err != nil {
					return err
				}
				if !rs.checkBytes(p, o, mine, x.sums(c, n-1, total, n)[off:off+k], "reduce-scatter block") {
					return errStop
				}
			}
			off += k
		}
		return nil
	case Alltoall, Alltoallv:
		return rs.alltoall(p, o, c, get)
	case Gather, Gatherv, Scatter, Scatterv:
		return rs.rooted(p, o, c, get)
	case Allgather, Allgatherv:
		return rs.allgather(p, o, c, get)
	}
	return fmt.Errorf("no replay of %s", o.Kind)
}

func (rs *rankState) bcast(p *sim.Proc, b mem.Region, root int) error {
	x := rs.x
	if x.own.bcast != nil {
		return x.own.bcast[rs.r].Bcast(p, b, root)
	}
	return stacks.TreeBcast(rs.r, x.prog.Size(), root,
		func(pe int) error { return rs.csend(p, pe, b) },
		func(pe int) error { return rs.crecv(p, pe, b) })
}

func (rs *rankState) reduce(p *sim.Proc, b mem.Region, root int, get func(int) mem.Region) error {
	x := rs.x
	if x.own.reduce != nil {
		return x.own.reduce[rs.r].Reduce(p, b, stacks.SumInt64, root)
	}
	tmp := get(b.Len)
	if x.stopped {
		return errStop
	}
	return stacks.TreeReduce(rs.r, x.prog.Size(), root,
		func(pe int) error { return rs.csend(p, pe, b) },
		func(pe int) error {
			if err := rs.crecv(p, pe, tmp); err != nil {
				return err
			}
			rs.combine(p, b, tmp)
			return nil
		})
}

// combine adds in's int64 words into acc as the rank's program does.
func (rs *rankState) combine(p *sim.Proc, acc, in mem.Region) {
	if rs.cpu != nil {
		stacks.Combine(p, rs.cpu, stacks.SumInt64, acc, in)
		return
	}
	a, b := make([]byte, acc.Len), make([]byte, in.Len)
	acc.Mem.Read(acc.Addr, a)
	in.Mem.Read(in.Addr, b)
	stacks.SumInt64.Combine(a, b)
	copy(acc.Mem.Bytes(acc.Addr, len(a)), a)
}

func (rs *rankState) sendRecv(p *sim.Proc, o Op, get func(int) mem.Region) error {
	x := rs.x
	sb, rb := get(o.Bytes), get(o.RecvBytes)
	if x.stopped {
		return errStop
	}
	key := [2]int{o.Peer, 0}
	k := rs.sent[key]
	rs.sent[key]++
	rs.fill(sb, x.p2pPattern(rs.r, o.Peer, 0, k))
	x.out.Matrix[rs.r][o.Peer] += int64(o.Bytes)
	q := &pending{buf: rb, recv: true, src: o.Src, tag: 0, n: o.RecvBytes, at: o.At}
	if o.Src != AnySource {
		rk := [2]int{o.Src, 0}
		q.k = rs.recvd[rk]
		rs.recvd[rk]++
	}
	var st stacks.Status
	var err error
	if x.own.sendrecv != nil && o.Src != AnySource {
		st, err = x.own.sendrecv[rs.r].SendRecv(p, sb, o.Peer, rb, o.Src)
		st.Tag = 0
	} else {
		var rq, sq stacks.Request
		if rq, err = rs.c.Irecv(p, rb, stackSrc(o.Src), 0); err != nil {
			return err
		}
		if x.split {
			if sq, err = rs.c.Isend(p, sb, o.Peer, 0); err == nil {
				_, err = sq.Wait(p)
			}
		} else {
			err = rs.c.Send(p, sb, o.Peer, 0)
		}
		if err != nil {
			return err
		}
		st, err = rq.Wait(p)
	}
	if err != nil {
		return err
	}
	if !rs.complete(p, q, st) {
		return errStop
	}
	return nil
}

func (rs *rankState) scan(p *sim.Proc, o Op, c int, get func(int) mem.Region) error {
	x := rs.x
	n, r := x.prog.Size(), rs.r
	mine, part := get(words(o.Bytes)), get(words(o.Bytes))
	if x.stopped {
		return errStop
	}
	rs.fill(mine, x.collPattern(c, r))
	if r > 0 {
		if err := rs.crecv(p, r-1, part); err != nil {
			return err
		}
		rs.compute(p, o.Flops)
		rs.combine(p, mine, part) // mine = prefix through r
	}
	if r < n-1 {
		if err := rs.csend(p, r+1, mine); err != nil {
			return err
		}
	}
	upto := r
	res := mine
	if o.Kind == Exscan {
		if r == 0 {
			return nil
		}
		upto, res = r-1, part
	}
	if !rs.checkBytes(p, o, res, x.sums(c, upto, res.Len, 1), "scan prefix") {
		return errStop
	}
	return nil
}

// blocks are the offsets of per-rank blocks of the given sizes.
func offsets(sizes []int) ([]int, int) {
	off := make([]int, len(sizes))
	t := 0
	for i, s := range sizes {
		off[i] = t
		t += s
	}
	return off, t
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func (rs *rankState) alltoall(p *sim.Proc, o Op, c int, get func(int) mem.Region) error {
	x := rs.x
	n, r := x.prog.Size(), rs.r
	sc, rc := o.Counts, o.RecvCounts
	if o.Kind == Alltoall {
		sc, rc = repeat(o.Bytes, n), repeat(o.RecvBytes, n)
	}
	soff, stot := offsets(sc)
	roff, rtot := offsets(rc)
	sb, rb := get(stot), get(rtot)
	if x.stopped {
		return errStop
	}
	for j := range n {
		rs.fill(sb.Slice(soff[j], sc[j]), x.collPattern(c, r, j))
	}
	if o.Kind == Alltoall && x.own.alltoall != nil {
		if err := x.own.alltoall[r].Alltoall(p, sb, rb, o.Bytes); err != nil {
			return err
		}
	} else {
		rs.fill(rb.Slice(roff[r], rc[r]), x.collPattern(c, r, r))
		for k := 1; k < n; k++ {
			to, from := (r+k)%n, (r-k+n)%n
			if err := rs.exchange(p, to, sb.Slice(soff[to], sc[to]), from, rb.Slice(roff[from], rc[from])); err != nil {
				return err
			}
		}
	}
	for j := range n {
		if !rs.check(p, o, rb.Slice(roff[j], rc[j]), x.collPattern(c, j, r), fmt.Sprintf("block from rank %d", j)) {
			return errStop
		}
	}
	return nil
}

func (rs *rankState) rooted(p *sim.Proc, o Op, c int, get func(int) mem.Region) error {
	x := rs.x
	n, r, root := x.prog.Size(), rs.r, o.Peer
	var sizes []int
	switch o.Kind {
	case Gather:
		sizes = repeat(o.RecvBytes, n)
	case Gatherv:
		sizes = o.RecvCounts
	case Scatter:
		sizes = repeat(o.Bytes, n)
	case Scatterv:
		sizes = o.Counts
	}
	gather := o.Kind == Gather || o.Kind == Gatherv
	if r != root {
		mine := o.Bytes
		if !gather {
			mine = o.RecvBytes
		}
		b := get(mine)
		if x.stopped {
			return errStop
		}
		if gather {
			rs.fill(b, x.collPattern(c, r))
			return rs.csend(p, root, b)
		}
		if err := rs.crecv(p, root, b); err != nil {
			return err
		}
		if !rs.check(p, o, b, x.collPattern(c, r), "scattered block") {
			return errStop
		}
		return nil
	}
	off, tot := offsets(sizes)
	b := get(tot)
	if x.stopped {
		return errStop
	}
	for i := range n {
		blk := b.Slice(off[i], sizes[i])
		switch {
		case i == root:
			rs.fill(blk, x.collPattern(c, i))
		case gather:
			if err := rs.crecv(p, i, blk); err != nil {
				return err
			}
		default:
			rs.fill(blk, x.collPattern(c, i))
			if err := rs.csend(p, i, blk); err != nil {
				return err
			}
		}
	}
	if gather {
		for i := range n {
			if !rs.check(p, o, b.Slice(off[i], sizes[i]), x.collPattern(c, i), fmt.Sprintf("block from rank %d", i)) {
				return errStop
			}
		}
	}
	return nil
}

func (rs *rankState) allgather(p *sim.Proc, o Op, c int, get func(int) mem.Region) error {
	x := rs.x
	n, r := x.prog.Size(), rs.r
	sizes := o.RecvCounts
	if o.Kind == Allgather {
		sizes = repeat(o.RecvBytes, n)
	}
	off, tot := offsets(sizes)
	b := get(tot)
	if x.stopped {
		return errStop
	}
	blk := func(i int) mem.Region { i = (i%n + n) % n; return b.Slice(off[i], sizes[i]) }
	rs.fill(blk(r), x.collPattern(c, r))
	right, left := (r+1)%n, (r-1+n)%n
	for s := 0; s < n-1; s++ {
		if err := rs.exchange(p, right, blk(r-s), left, blk(r-s-1)); err != nil {
			return err
		}
	}
	for i := range n {
		if !rs.check(p, o, blk(i), x.collPattern(c, i), fmt.Sprintf("block of rank %d", i)) {
			return errStop
		}
	}
	return nil
}

package trace

import "slices"

// reqKey names a nonblocking request as wait and test do.
type reqKey struct{ src, dst, tag int }

// checkProgram checks what no single line shows: a wait or test names a
// request the rank posted before, and the ranks call the same
// collectives in the same order with matching roots and sizes.
func checkProgram(l *errList, p *Program) {
	n := p.Size()
	colls := make([][]Op, n)
	for r, ops := range p.Ranks {
		posted := map[reqKey]bool{}
		for _, o := range ops {
			switch o.Kind {
			case Isend:
				posted[reqKey{r, o.Peer, o.Tag}] = true
			case Irecv:
				posted[reqKey{o.Peer, r, o.Tag}] = true
			case Wait, Test:
				if !posted[reqKey{o.Src, o.Peer, o.Tag}] {
					l.add(o.At, o.Kind.String(), "rank %d posted no isend or irecv with source %d, destination %d and tag %d before", r, o.Src, o.Peer, o.Tag)
				}
			}
			if o.Kind.Collective() {
				colls[r] = append(colls[r], o)
			}
		}
	}
	for r := 1; r < n; r++ {
		if len(colls[r]) != len(colls[0]) {
			at := Pos{File: p.Source}
			if len(colls[r]) > len(colls[0]) {
				at = colls[r][len(colls[0])].At
			} else if len(colls[r]) > 0 {
				at = colls[r][len(colls[r])-1].At
			}
			l.add(at, "", "rank %d calls %d collectives, rank 0 calls %d: every rank must call the same collectives in the same order", r, len(colls[r]), len(colls[0]))
		}
	}
	m := len(colls[0])
	for r := range colls {
		m = min(m, len(colls[r]))
	}
	for i := range m {
		if l.full() {
			return
		}
		checkCollective(l, colls, i)
	}
}

// checkCollective checks the i-th collective of every rank.
func checkCollective(l *errList, colls [][]Op, i int) {
	n := len(colls)
	first := colls[0][i]
	for r := 1; r < n; r++ {
		o := colls[r][i]
		switch {
		case o.Kind != first.Kind:
			l.add(o.At, o.Kind.String(), "rank %d's collective number %d is %s, rank 0's is %s (%s)", r, i+1, o.Kind, first.Kind, first.At)
			return
		case o.Kind.Rooted() && o.Peer != first.Peer:
			l.add(o.At, o.Kind.String(), "rank %d's root is %d, rank 0's is %d (%s)", r, o.Peer, first.Peer, first.At)
			return
		}
	}
	bad := func(o Op, format string, a ...any) { l.add(o.At, o.Kind.String(), format, a...) }
	root := colls[first.Peer][i]
	for r := range n {
		o := colls[r][i]
		switch o.Kind {
		case Bcast, Reduce, Allreduce, Scan, Exscan:
			if o.Bytes != first.Bytes {
				bad(o, "rank %d's %d bytes differ from rank 0's %d bytes", r, o.Bytes, first.Bytes)
			}
		case Alltoall, Allgather:
			if o.Bytes != o.RecvBytes || o.Bytes != first.Bytes {
				bad(o, "rank %d sends %d and receives %d bytes per rank, rank 0 %d: the blocks must match", r, o.Bytes, o.RecvBytes, first.Bytes)
			}
		case Gather:
			if o.Bytes != root.RecvBytes {
				bad(o, "rank %d sends %d bytes, the root (rank %d) receives %d from each rank", r, o.Bytes, first.Peer, root.RecvBytes)
			}
		case Scatter:
			if o.RecvBytes != root.Bytes {
				bad(o, "rank %d receives %d bytes, the root (rank %d) sends %d to each rank", r, o.RecvBytes, first.Peer, root.Bytes)
			}
		case Alltoallv:
			for j := range n {
				if o.Counts[j] != colls[j][i].RecvCounts[r] {
					bad(o, "rank %d sends %d bytes to rank %d, which receives %d from it (%s)", r, o.Counts[j], j, colls[j][i].RecvCounts[r], colls[j][i].At)
					break
				}
			}
		case Gatherv:
			if o.Bytes != root.RecvCounts[r] {
				bad(o, "rank %d sends %d bytes, the root (rank %d) receives %d from it (%s)", r, o.Bytes, first.Peer, root.RecvCounts[r], root.At)
			}
		case Scatterv:
			if o.RecvBytes != root.Counts[r] {
				bad(o, "rank %d receives %d bytes, the root (rank %d) sends it %d (%s)", r, o.RecvBytes, first.Peer, root.Counts[r], root.At)
			}
		case Allgatherv:
			if !slices.Equal(o.RecvCounts, first.RecvCounts) || o.Bytes != first.RecvCounts[r] {
				bad(o, "rank %d sends %d bytes and receives %v, rank 0 receives %v: the counts must agree", r, o.Bytes, o.RecvCounts, first.RecvCounts)
			}
		case ReduceScatter:
			if !slices.Equal(o.RecvCounts, first.RecvCounts) {
				bad(o, "rank %d's counts %v differ from rank 0's %v", r, o.RecvCounts, first.RecvCounts)
			}
		}
	}
}

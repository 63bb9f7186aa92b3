package trace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Barrierer is a rank whose stack has its own barrier (ScaMPI's fan-in
// tree).
type Barrierer interface {
	Barrier(p *sim.Proc) error
}

// Alltoaller is a rank whose stack has its own MPI_Alltoall of
// block-byte blocks (ScaMPI's algorithm switch).
type Alltoaller interface {
	Alltoall(p *sim.Proc, sbuf, rbuf mem.Region, block int) error
}

// commCapability is what a replay needs of a stack.
const commCapability = "message passing (stacks.Comm): the trace's send, recv, isend and irecv call it; " +
	"a one-sided stack (puts and gets) has no receive to match them"

// Categories of a rank's time.
const (
	catCompute = iota // compute and sleep
	catComm           // inside a communication call
	catWait           // inside wait, waitall and test
)

func category(k Kind) int {
	switch k {
	case Compute, Sleep:
		return catCompute
	case Wait, WaitAll, Test:
		return catWait
	}
	return catComm
}

// outcome is what a replay measured.
type outcome struct {
	// End is each rank's end; Predicted the last one.
	End       []sim.Time
	Predicted sim.Time
	// Time is each rank's time per category (catCompute, catComm,
	// catWait).
	Time [][3]sim.Time
	// Count and KindTime are per action: ops replayed and their time
	// summed over the ranks.
	Count    [numKinds]int64
	KindTime [numKinds]sim.Time
	// Matrix is the bytes each rank sent each other (point-to-point and
	// the shared collective layer's messages).
	Matrix [][]int64
	// Algorithms name how each collective ran ("bcast: the stack's own").
	Algorithms map[Kind]string
	Failures   []workloads.Failure
}

// commsOf is w's ranks as communicators, or the capability a one-sided
// stack lacks.
func commsOf(w *stacks.World) ([]stacks.Comm, error) {
	return stacks.As[stacks.Comm](w, "workload "+Name, commCapability)
}

// replayer runs a program on a world.
type replayer struct {
	eng     *sim.Engine
	prog    *Program
	seed    uint64
	scale   float64 // simulated seconds per flop
	split   bool    // blocking calls run as nonblocking call + wait
	ranks   []*rankState
	out     *outcome
	current []*Op // the op each rank is in (nil: done), for a deadlock's report
	stopped bool
	own     own
	// sumCache holds the expected sums of reductions (sums).
	sumCache map[[2]int]*sumEntry
}

type rankState struct {
	x       *replayer
	r       int
	c       stacks.Comm
	cpu     *mem.CPU
	free    map[int][]mem.Region
	pending []*pending
	sent    map[[2]int]uint64 // (dst, tag): messages sent
	recvd   map[[2]int]uint64 // (src, tag): messages received
	coll    int               // collectives called
}

type pending struct {
	key  reqKey
	req  stacks.Request
	buf  mem.Region
	recv bool
	src  int // specific source, or AnySource
	tag  int
	k    uint64 // message number when src and tag are specific
	n    int
	at   Pos
}

// replay runs prog on world w in eng (spawned and run here).
func replay(eng *sim.Engine, w *stacks.World, prog *Program, seed uint64, secondsPerFlop float64, sharedColl bool) (*outcome, error) {
	n := prog.Size()
	comms, err := commsOf(w)
	if err != nil {
		return nil, err
	}
	x := &replayer{eng: eng, prog: prog, seed: seed, scale: secondsPerFlop, split: stacks.ProgressOf(w).Split,
		out:     &outcome{End: make([]sim.Time, n), Time: make([][3]sim.Time, n), Matrix: make([][]int64, n), Algorithms: map[Kind]string{}},
		current: make([]*Op, n), sumCache: map[[2]int]*sumEntry{}}
	for r := range n {
		x.out.Matrix[r] = make([]int64, n)
		x.ranks = append(x.ranks, &rankState{x: x, r: r, c: comms[r], cpu: comms[r].CPU(), free: map[int][]mem.Region{},
			sent: map[[2]int]uint64{}, recvd: map[[2]int]uint64{}})
	}
	x.chooseAlgorithms(w, sharedColl)
	for r := range n {
		rs := x.ranks[r]
		eng.Spawn(fmt.Sprintf("rank%d", r), func(p *sim.Proc) { rs.run(p) })
	}
	runErr := eng.Run()
	if runErr != nil {
		kind, stuck := workloads.StuckKind(runErr)
		if !stuck {
			return x.out, runErr
		}
		x.out.Failures = append(x.out.Failures, workloads.Failure{Kind: kind, Detail: runErr.Error() + x.waiting()})
	}
	for _, e := range x.out.End {
		x.out.Predicted = max(x.out.Predicted, e)
	}
	return x.out, nil
}

// waiting lists what each unfinished rank waits on, in the trace's terms.
func (x *replayer) waiting() string {
	var b strings.Builder
	for r, o := range x.current {
		if o != nil {
			fmt.Fprintf(&b, "\n  rank %d waits in %s (%s)", r, o, o.At)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\nthe trace's ranks that cannot finish:" + b.String()
}

// abort ends the run with an error (a configuration that cannot run).
func (x *replayer) abort(err error) {
	x.stopped = true
	x.eng.Fail(err)
}

func (x *replayer) fail(kind, format string, a ...any) {
	x.out.Failures = append(x.out.Failures, workloads.Failure{Kind: kind, Detail: fmt.Sprintf(format, a...)})
	x.stopped = true
	x.eng.Stop()
}

// stackError ends the run on a stack's error: a missing capability is a
// configuration error, anything else a failure.
func (rs *rankState) stackError(p *sim.Proc, o Op, err error) {
	var mc *machines.MissingCapability
	if errors.As(err, &mc) {
		rs.x.abort(fmt.Errorf("rank %d at %v, %s (%s): %w", rs.r, p.Now(), o.Kind, o.At, err))
		return
	}
	kind := "error"
	var ce interface{ Corruption() bool }
	if errors.As(err, &ce) && ce.Corruption() {
		kind = workloads.Corruption
	}
	rs.x.fail(kind, "rank %d at %v, %s (%s): %v", rs.r, p.Now(), o.Kind, o.At, err)
}

func (rs *rankState) buffer(n int) (mem.Region, error) {
	if l := rs.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		rs.free[n] = l[:len(l)-1]
		return b, nil
	}
	b, err := rs.c.Buffer(n)
	if err != nil {
		return mem.Region{}, fmt.Errorf("rank %d: a %d-byte buffer: %w", rs.r, n, err)
	}
	return b, nil
}

func (rs *rankState) release(b mem.Region) { rs.free[b.Len] = append(rs.free[b.Len], b) }

// access is how the rank's program reads and writes its buffers: through
// its CPU (its cache) when the stack exposes it.
func (rs *rankState) access(b mem.Region) interface {
	payload.Peeker
	payload.Poker
} {
	if rs.cpu != nil {
		return rs.cpu
	}
	return payload.Raw{Mem: b.Mem}
}

// p2pPattern is message k from src to dst with tag.
func (x *replayer) p2pPattern(src, dst, tag int, k uint64) payload.Pattern {
	return payload.Key(x.seed, 1, uint64(src), uint64(dst), uint64(int64(tag)), k)
}

// run replays the rank's ops.
func (rs *rankState) run(p *sim.Proc) {
	x := rs.x
	ops := x.prog.Ranks[rs.r]
	for i := range ops {
		o := ops[i]
		if x.stopped {
			return
		}
		x.current[rs.r] = &ops[i]
		t0 := p.Now()
		ok := rs.op(p, o)
		dt := p.Now() - t0
		x.out.Count[o.Kind]++
		x.out.KindTime[o.Kind] += dt
		x.out.Time[rs.r][category(o.Kind)] += dt
		if !ok {
			return
		}
	}
	x.current[rs.r] = nil
	x.out.End[rs.r] = p.Now()
}

// op replays one op; false stops the rank (the run is ending).
func (rs *rankState) op(p *sim.Proc, o Op) bool {
	switch o.Kind {
	case Init, Finalize, CommSize, CommSplit, CommDup:
		return true
	case Compute:
		rs.compute(p, o.Flops)
		return true
	case Sleep:
		p.Sleep(sim.Time(o.Seconds * 1e12))
		return true
	case Send, Isend:
		return rs.send(p, o)
	case Recv, Irecv:
		return rs.recv(p, o)
	case Wait, Test:
		for i, q := range rs.pending {
			if q.key != (reqKey{o.Src, o.Peer, o.Tag}) {
				continue
			}
			if o.Kind == Test {
				done, st, err := q.req.Test(p)
				if err != nil {
					rs.stackError(p, o, err)
					return false
				}
				if !done {
					return true
				}
				rs.pending = append(rs.pending[:i], rs.pending[i+1:]...)
				defer rs.release(q.buf)
				return rs.complete(p, q, st)
			}
			rs.pending = append(rs.pending[:i], rs.pending[i+1:]...)
			return rs.wait(p, o, q)
		}
		return true // completed by an earlier test (SimGrid's replay does the same)
	case WaitAll:
		for len(rs.pending) > 0 {
			q := rs.pending[0]
			rs.pending = rs.pending[1:]
			if !rs.wait(p, o, q) {
				return false
			}
		}
		return true
	}
	return rs.collective(p, o)
}

func (rs *rankState) send(p *sim.Proc, o Op) bool {
	x := rs.x
	buf, err := rs.buffer(o.Bytes)
	if err != nil {
		x.abort(err)
		return false
	}
	key := [2]int{o.Peer, o.Tag}
	k := rs.sent[key]
	rs.sent[key]++
	payload.Write(rs.access(buf), buf.Addr, buf.Len, x.p2pPattern(rs.r, o.Peer, o.Tag, k), 0)
	x.out.Matrix[rs.r][o.Peer] += int64(o.Bytes)
	if o.Kind == Send && !x.split {
		defer rs.release(buf)
		if err := rs.c.Send(p, buf, o.Peer, o.Tag); err != nil {
			rs.stackError(p, o, err)
			return false
		}
		return true
	}
	req, err := rs.c.Isend(p, buf, o.Peer, o.Tag)
	if err != nil {
		rs.stackError(p, o, err)
		return false
	}
	q := &pending{key: reqKey{rs.r, o.Peer, o.Tag}, req: req, buf: buf, n: o.Bytes, at: o.At}
	if o.Kind == Send {
		return rs.wait(p, o, q)
	}
	rs.pending = append(rs.pending, q)
	return true
}

// stackPeer is a trace's source or tag in the stack's terms.
func stackSrc(src int) int {
	if src == AnySource {
		return stacks.AnySource
	}
	return src
}

func stackTag(tag int) int {
	if tag == AnyTag {
		return stacks.AnyTag
	}
	return tag
}

func (rs *rankState) recv(p *sim.Proc, o Op) bool {
	x := rs.x
	buf, err := rs.buffer(o.Bytes)
	if err != nil {
		x.abort(err)
		return false
	}
	q := &pending{key: reqKey{o.Peer, rs.r, o.Tag}, buf: buf, recv: true, src: o.Peer, tag: o.Tag, n: o.Bytes, at: o.At}
	if o.Peer != AnySource && o.Tag != AnyTag {
		key := [2]int{o.Peer, o.Tag}
		q.k = rs.recvd[key]
		rs.recvd[key]++
	}
	if o.Kind == Recv && !x.split {
		st, err := rs.c.Recv(p, buf, stackSrc(o.Peer), stackTag(o.Tag))
		if err != nil {
			rs.stackError(p, o, err)
			return false
		}
		defer rs.release(buf)
		return rs.complete(p, q, st)
	}
	req, err := rs.c.Irecv(p, buf, stackSrc(o.Peer), stackTag(o.Tag))
	if err != nil {
		rs.stackError(p, o, err)
		return false
	}
	q.req = req
	if o.Kind == Recv {
		return rs.wait(p, o, q)
	}
	rs.pending = append(rs.pending, q)
	return true
}

func (rs *rankState) wait(p *sim.Proc, o Op, q *pending) bool {
	defer rs.release(q.buf)
	st, err := q.req.Wait(p)
	if err != nil {
		rs.stackError(p, o, err)
		return false
	}
	return rs.complete(p, q, st)
}

// complete checks a finished request's delivery (the caller releases its
// buffer).
func (rs *rankState) complete(p *sim.Proc, q *pending, st stacks.Status) bool {
	x := rs.x
	if !q.recv {
		return true
	}
	src, tag, k := q.src, q.tag, q.k
	if src == AnySource || tag == AnyTag {
		src, tag = st.Source, st.Tag
		key := [2]int{src, tag}
		k = rs.recvd[key]
		rs.recvd[key]++
	}
	if st.Source != src || st.Tag != tag || st.Len > q.n || st.Len < 0 {
		x.fail(workloads.Corruption, "rank %d at %v: the receive of %s has envelope (source %d, tag %d, %d bytes), want (%d, %d, at most %d)",
			rs.r, p.Now(), q.at, st.Source, st.Tag, st.Len, src, tag, q.n)
		return false
	}
	if m, ok := payload.Check(rs.access(q.buf), q.buf.Addr, st.Len, x.p2pPattern(src, rs.r, tag, k), 0); !ok {
		x.fail(workloads.Corruption, "rank %d at %v: message %d from rank %d (tag %d, %d bytes) received by %s: byte %d is %#02x, want %#02x",
			rs.r, p.Now(), k, src, tag, st.Len, q.at, m.Offset, m.Got, m.Want)
		return false
	}
	return true
}

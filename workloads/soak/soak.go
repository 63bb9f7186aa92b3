// Package soak runs random message programs on a stack offering
// stacks.Comm and checks that every message arrives once and intact: the
// sizes straddle every protocol threshold of the stacks (short, eager,
// rendezvous, packet and segment boundaries), tags and tag wildcards mix,
// sends are blocking or not. A run is fully determined by its seed, so a
// failure is replayed by running that seed again.
//
// A program stays within the stack's progress rule (stacks.Progress, which
// each stack states from its paper), so that a failure is a bug of the
// stack and never a program its API does not promise to complete. Under
// MPI's rule (MPICH, ScaMPI) every rank posts all its receives, then
// sends, then waits. Under a split rule (ACLMPL: synchronous and
// asynchronous protocols with no overlap) the nonblocking messages run
// that way first, then the blocking ones rendezvous one at a time in the
// program's order, which every rank follows.
//
// Layer: a workload: imports workloads, stacks, sim, sim/mem and
// workloads/payload; never a concrete machine or stack.
package soak

import (
	"fmt"
	"math/rand/v2"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Sizes are the message lengths drawn: around the thresholds of the
// stacks (MPICH's 1024-byte packets and eager limit, ScaMPI's 32-byte
// envelope payload and 16 KB buffers, ACLMPL's pieces) and a few long ones.
var Sizes = []int{0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 1000, 1023, 1024, 1025,
	4095, 4096, 8191, 8192, 8193, 16383, 16384, 16385, 40000, 65536}

// Outcome is what one run gave.
type Outcome struct {
	Procs, Messages int
	Delivered       int
	Events          uint64
	// Counters and Counts are the machine's own counts (faults injected,
	// packets), if it keeps any (a Counters method): a soak with faults
	// shows that they happened.
	Counters []string
	Counts   []uint64
	// Failure is the first problem (nil: every message once and intact):
	// kind corruption, loss, duplication, deadlock, livelock, limit or error.
	Failure *workloads.Failure
}

// message is one message of a program.
type message struct {
	id, src, dst, tag, n int
	blocking             bool // the sender uses Send, else Isend
	anyTag               bool // the receiver posts AnyTag
}

// program draws a random program for procs ranks from seed: its messages
// in posting order.
func program(seed uint64, procs int) []message {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	msgs := make([]message, 1+rng.IntN(12))
	// Per (receiver, source): tags given exactly, or AnyTag for all, so
	// that MPI's non-overtaking rule says which message each receive gets.
	anyTag := map[[2]int]bool{}
	for i := range msgs {
		src := rng.IntN(procs)
		dst := rng.IntN(procs - 1)
		if dst >= src {
			dst++
		}
		k := [2]int{dst, src}
		if _, ok := anyTag[k]; !ok {
			anyTag[k] = rng.IntN(3) == 0
		}
		msgs[i] = message{id: i, src: src, dst: dst, tag: rng.IntN(4), n: Sizes[rng.IntN(len(Sizes))],
			blocking: rng.IntN(2) == 0, anyTag: anyTag[k]}
	}
	return msgs
}

// pattern is the content of message m: a function of the run and the
// message (workloads/payload), so a message delivered to the wrong receive
// is a corruption.
func pattern(seed uint64, m message) payload.Pattern {
	return payload.Key(seed, uint64(m.id), uint64(m.src), uint64(m.dst))
}

// Procs is the number of ranks of the run of seed: 2 to 4.
func Procs(seed uint64) int { return 2 + int(seed%3) }

// Run opens the stack with procs ranks on a new engine seeded with seed
// (open is a resolved pairing), runs the program of seed on it and checks
// every delivery.
func Run(open workloads.Opener, seed uint64, procs int, lim sim.Limits) Outcome {
	eng := sim.NewEngine(seed)
	eng.SetLimits(lim)
	x := &soakRun{eng: eng, seed: seed, out: Outcome{Procs: procs}}
	w, err := open(eng, procs)
	if err != nil {
		x.fail("error", "opening the stack: %v", err)
		return x.out
	}
	comms, err := stacks.As[stacks.Comm](w, "soak", "message passing (stacks.Comm)")
	if err != nil {
		x.fail("error", "%v", err)
		return x.out
	}
	x.rule = stacks.ProgressOf(w)
	x.msgs = program(seed, procs)
	x.out.Messages = len(x.msgs)
	x.got = make([]int, len(x.msgs))
	for r := range comms {
		c := comms[r]
		eng.Spawn(fmt.Sprintf("rank%d", r), func(p *sim.Proc) { x.rank(p, r, c) })
	}
	err = eng.Run()
	x.out.Events = eng.Events()
	if c, ok := w.Machine.(interface{ Counters() ([]string, []uint64) }); ok {
		x.out.Counters, x.out.Counts = c.Counters()
	}
	switch {
	case err != nil && x.out.Failure == nil:
		x.fail(kindOf(err), "%v", err)
	case x.out.Failure != nil:
	default:
		x.tally()
	}
	return x.out
}

// soakRun is a run of one program.
type soakRun struct {
	eng  *sim.Engine
	seed uint64
	rule stacks.Progress
	msgs []message
	got  []int // deliveries per message
	out  Outcome
}

// fail records the run's first failure and stops the engine.
func (x *soakRun) fail(kind, format string, args ...any) {
	if x.out.Failure == nil {
		x.out.Failure = &workloads.Failure{Kind: kind, Detail: fmt.Sprintf(format, args...)}
	}
	x.eng.Stop()
}

// pending is a message a rank posted and has not waited for yet.
type pending struct {
	m   message
	buf mem.Region
	q   stacks.Request
}

// rank is rank r's program: every receive posted first (no unsafe
// program), then its sends, then it waits for the sends and checks every
// delivery. Under a split progress rule these are its nonblocking
// messages only; its blocking ones follow (rendezvous).
func (x *soakRun) rank(p *sim.Proc, r int, c stacks.Comm) {
	recvs, ok := x.postRecvs(p, r, c)
	if !ok {
		return
	}
	sends, ok := x.send(p, r, c)
	if !ok {
		return
	}
	for _, s := range sends {
		if _, err := s.q.Wait(p); err != nil {
			x.fail(kindOf(err), "rank %d: waiting for the send of message %d: %v", r, s.m.id, err)
			return
		}
	}
	for _, d := range recvs {
		st, err := d.q.Wait(p)
		if !x.check(p, r, c, d, st, err) {
			return
		}
	}
	if x.rule.Split {
		x.rendezvous(p, r, c)
	}
}

// inPhase reports whether message m is sent and received in the posted
// phase: every message under MPI's rule, the nonblocking ones under a
// split rule.
func (x *soakRun) inPhase(m message) bool { return !x.rule.Split || !m.blocking }

// rendezvous is rank r's part of the blocking messages under a split
// progress rule: each with Send and Recv, in the program's order, which
// every rank follows, so that every Send meets its Recv (the first
// unfinished message's two ranks have both finished every earlier one).
// The synchronous protocol carries no tag: Recv names the message's.
func (x *soakRun) rendezvous(p *sim.Proc, r int, c stacks.Comm) {
	for _, m := range x.msgs {
		if !m.blocking || (m.src != r && m.dst != r) {
			continue
		}
		buf, err := c.Buffer(m.n)
		if err != nil {
			x.fail("error", "rank %d: buffer of %d bytes: %v", r, m.n, err)
			return
		}
		if m.src == r {
			payload.Write(c.CPU(), buf.Addr, m.n, pattern(x.seed, m), 0)
			if err := c.Send(p, buf, m.dst, m.tag); err != nil {
				x.fail(kindOf(err), "rank %d: sending message %d (%d bytes to rank %d, tag %d): %v", r, m.id, m.n, m.dst, m.tag, err)
				return
			}
			continue
		}
		st, err := c.Recv(p, buf, m.src, m.tag)
		if !x.check(p, r, c, pending{m: m, buf: buf}, st, err) {
			return
		}
	}
}

// postRecvs posts rank r's receives.
func (x *soakRun) postRecvs(p *sim.Proc, r int, c stacks.Comm) ([]pending, bool) {
	var recvs []pending
	for _, m := range x.msgs {
		if m.dst != r || !x.inPhase(m) {
			continue
		}
		buf, err := c.Buffer(m.n)
		if err != nil {
			x.fail("error", "rank %d: buffer of %d bytes: %v", r, m.n, err)
			return nil, false
		}
		tag := m.tag
		if m.anyTag {
			tag = stacks.AnyTag
		}
		q, err := c.Irecv(p, buf, m.src, tag)
		if err != nil {
			x.fail("error", "rank %d: Irecv of message %d: %v", r, m.id, err)
			return nil, false
		}
		recvs = append(recvs, pending{m, buf, q})
	}
	return recvs, true
}

// send sends rank r's messages, each written with its pattern, and
// returns the nonblocking ones.
func (x *soakRun) send(p *sim.Proc, r int, c stacks.Comm) ([]pending, bool) {
	var sends []pending
	for _, m := range x.msgs {
		if m.src != r || !x.inPhase(m) {
			continue
		}
		buf, err := c.Buffer(m.n)
		if err != nil {
			x.fail("error", "rank %d: buffer of %d bytes: %v", r, m.n, err)
			return nil, false
		}
		payload.Write(c.CPU(), buf.Addr, m.n, pattern(x.seed, m), 0)
		if m.blocking {
			err = c.Send(p, buf, m.dst, m.tag)
		} else {
			var q stacks.Request
			if q, err = c.Isend(p, buf, m.dst, m.tag); err == nil {
				sends = append(sends, pending{m, buf, q})
			}
		}
		if err != nil {
			x.fail(kindOf(err), "rank %d: sending message %d (%d bytes to rank %d, tag %d): %v", r, m.id, m.n, m.dst, m.tag, err)
			return nil, false
		}
	}
	return sends, true
}

// check checks receive d of rank r, which completed with st and err: its
// envelope and every byte, counting the delivery.
func (x *soakRun) check(p *sim.Proc, r int, c stacks.Comm, d pending, st stacks.Status, err error) bool {
	if err != nil {
		x.fail(kindOf(err), "rank %d: waiting for message %d: %v", r, d.m.id, err)
		return false
	}
	m := d.m
	if st.Source != m.src || st.Tag != m.tag || st.Len != m.n {
		x.fail(workloads.Corruption, "rank %d at %v: message %d arrived with envelope (source %d, tag %d, %d bytes), want (%d, %d, %d)",
			r, p.Now(), m.id, st.Source, st.Tag, st.Len, m.src, m.tag, m.n)
		return false
	}
	if bad, ok := payload.Check(c.CPU(), d.buf.Addr, m.n, pattern(x.seed, m), 0); !ok {
		x.fail(workloads.Corruption, "rank %d at %v: message %d (%d bytes from rank %d, tag %d): byte %d is %#02x, want %#02x",
			r, p.Now(), m.id, m.n, m.src, m.tag, bad.Offset, bad.Got, bad.Want)
		return false
	}
	x.got[m.id]++
	return true
}

// tally counts the deliveries: a message never delivered is a loss, one
// delivered twice a duplication.
func (x *soakRun) tally() {
	for i, n := range x.got {
		x.out.Delivered += min(n, 1)
		switch {
		case n == 0:
			x.fail(workloads.Loss, "message %d (%d bytes from rank %d to rank %d, tag %d) never arrived", i, x.msgs[i].n, x.msgs[i].src, x.msgs[i].dst, x.msgs[i].tag)
		case n > 1:
			x.fail("duplication", "message %d arrived %d times", i, n)
		}
	}
}

// kindOf classifies a run or stack error.
func kindOf(err error) string {
	if k, ok := workloads.StuckKind(err); ok {
		return k
	}
	if ce, ok := err.(interface{ Corruption() bool }); ok && ce.Corruption() {
		return workloads.Corruption
	}
	return "error"
}

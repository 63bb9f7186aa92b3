// Package soak runs random message programs on a stack offering
// stacks.Comm and checks that every message arrives once and intact: the
// sizes straddle every protocol threshold of the stacks (short, eager,
// rendezvous, packet and segment boundaries), tags and tag wildcards mix,
// sends are blocking or not. A run is fully determined by its seed, so a
// failure is replayed by running that seed again.
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
	out := Outcome{Procs: procs}
	fail := func(kind, format string, args ...any) {
		if out.Failure == nil {
			out.Failure = &workloads.Failure{Kind: kind, Detail: fmt.Sprintf(format, args...)}
		}
		eng.Stop()
	}
	w, err := open(eng, procs)
	if err != nil {
		fail("error", "opening the stack: %v", err)
		return out
	}
	comms, err := stacks.As[stacks.Comm](w, "soak", "message passing (stacks.Comm)")
	if err != nil {
		fail("error", "%v", err)
		return out
	}
	msgs := program(seed, procs)
	out.Messages = len(msgs)
	got := make([]int, len(msgs)) // deliveries per message
	for r := range comms {
		c := comms[r]
		eng.Spawn(fmt.Sprintf("rank%d", r), func(p *sim.Proc) {
			type pending struct {
				m   message
				buf mem.Region
				q   stacks.Request
			}
			var recvs, sends []pending
			for _, m := range msgs { // every receive first: no unsafe program
				if m.dst != r {
					continue
				}
				buf, err := c.Buffer(m.n)
				if err != nil {
					fail("error", "rank %d: buffer of %d bytes: %v", r, m.n, err)
					return
				}
				tag := m.tag
				if m.anyTag {
					tag = stacks.AnyTag
				}
				q, err := c.Irecv(p, buf, m.src, tag)
				if err != nil {
					fail("error", "rank %d: Irecv of message %d: %v", r, m.id, err)
					return
				}
				recvs = append(recvs, pending{m, buf, q})
			}
			for _, m := range msgs {
				if m.src != r {
					continue
				}
				buf, err := c.Buffer(m.n)
				if err != nil {
					fail("error", "rank %d: buffer of %d bytes: %v", r, m.n, err)
					return
				}
				payload.Write(c.CPU(), buf.Addr, m.n, pattern(seed, m), 0)
				if m.blocking {
					err = c.Send(p, buf, m.dst, m.tag)
				} else {
					var q stacks.Request
					if q, err = c.Isend(p, buf, m.dst, m.tag); err == nil {
						sends = append(sends, pending{m, buf, q})
					}
				}
				if err != nil {
					fail(kindOf(err), "rank %d: sending message %d (%d bytes to rank %d, tag %d): %v", r, m.id, m.n, m.dst, m.tag, err)
					return
				}
			}
			for _, x := range sends {
				if _, err := x.q.Wait(p); err != nil {
					fail(kindOf(err), "rank %d: waiting for the send of message %d: %v", r, x.m.id, err)
					return
				}
			}
			for _, x := range recvs {
				st, err := x.q.Wait(p)
				if err != nil {
					fail(kindOf(err), "rank %d: waiting for message %d: %v", r, x.m.id, err)
					return
				}
				m := x.m
				if st.Source != m.src || st.Tag != m.tag || st.Len != m.n {
					fail(workloads.Corruption, "rank %d at %v: message %d arrived with envelope (source %d, tag %d, %d bytes), want (%d, %d, %d)",
						r, p.Now(), m.id, st.Source, st.Tag, st.Len, m.src, m.tag, m.n)
					return
				}
				if x, ok := payload.Check(c.CPU(), x.buf.Addr, m.n, pattern(seed, m), 0); !ok {
					fail(workloads.Corruption, "rank %d at %v: message %d (%d bytes from rank %d, tag %d): byte %d is %#02x, want %#02x",
						r, p.Now(), m.id, m.n, m.src, m.tag, x.Offset, x.Got, x.Want)
					return
				}
				got[m.id]++
			}
		})
	}
	err = eng.Run()
	out.Events = eng.Events()
	if c, ok := w.Machine.(interface{ Counters() ([]string, []uint64) }); ok {
		out.Counters, out.Counts = c.Counters()
	}
	switch {
	case err != nil && out.Failure == nil:
		fail(kindOf(err), "%v", err)
	case out.Failure != nil:
	default:
		for i, n := range got {
			out.Delivered += min(n, 1)
			switch {
			case n == 0:
				fail(workloads.Loss, "message %d (%d bytes from rank %d to rank %d, tag %d) never arrived", i, msgs[i].n, msgs[i].src, msgs[i].dst, msgs[i].tag)
			case n > 1:
				fail("duplication", "message %d arrived %d times", i, n)
			}
		}
	}
	return out
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

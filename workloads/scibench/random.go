package scibench

import (
	"fmt"
	"math/rand/v2"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// randomSizes are around the 32-byte envelope payload and 16 KB buffers
// of ScaMPI, and a few longer messages.
var randomSizes = []int{0, 1, 8, 31, 32, 33, 63, 64, 65, 1000, 16383, 16384, 16385, 40000}

type message struct{ id, src, dst, tag, n int }

// RunRandom is the random-messages runner: per point, Messages random
// messages (random pairs, sizes, three tags) are all posted at once (every
// receive, then every send) and waited for; each must arrive once and
// intact. Rows: the simulated time to complete them all, the messages
// delivered, and the counters of the machine and of rank 0's stack.
func RunRandom(s workloads.Spec) (workloads.Result, error) {
	p, err := parse(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	for i, n := range p.Procs {
		eng := s.NewEngine(s.Seed + uint64(i))
		w, err := s.OpenWorld(eng, n)
		if err != nil {
			return res, err
		}
		comms, err := stacks.As[stacks.Comm](w, "workload random-messages", "message passing (stacks.Comm)")
		if err != nil {
			return res, err
		}
		x := &randomRun{eng: eng, seed: s.Seed, msgs: randomMessages(eng.Rand(), n, p.Messages)}
		for r := range comms {
			c := comms[r]
			eng.Spawn(fmt.Sprintf("rank%d", r), func(pr *sim.Proc) { x.rank(pr, r, c) })
		}
		err = eng.Run()
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		res.Failures = append(res.Failures, x.fails...)
		if err == nil {
			err = x.err
		}
		if err != nil {
			return res, fmt.Errorf("random messages on %d processes: %w", n, err)
		}
		if len(x.fails) > 0 {
			return res, nil
		}
		if x.delivered != len(x.msgs) {
			res.Failures = append(res.Failures, workloads.Failure{Kind: workloads.Loss, Detail: fmt.Sprintf("%d of %d messages delivered", x.delivered, len(x.msgs))})
			return res, nil
		}
		row := func(metric string, v float64, unit string) {
			res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "procs", X: float64(n), Metric: metric, Value: v, Unit: unit})
		}
		row("completion_us", eng.Now().Micros(), "us")
		row("delivered", float64(x.delivered), "messages")
		for _, c := range []any{w.Machine, w.Ranks[0]} {
			if c, ok := c.(Counter); ok {
				names, values := c.Counters()
				for j, name := range names {
					row(name, float64(values[j]), "count")
				}
			}
		}
	}
	return res, nil
}

// randomMessages draws count messages between n processes: random
// distinct source and destination, one of three tags, a size of
// randomSizes.
func randomMessages(rng *rand.Rand, n, count int) []message {
	msgs := make([]message, count)
	for j := range msgs {
		src := rng.IntN(n)
		dst := rng.IntN(n - 1)
		if dst >= src {
			dst++
		}
		msgs[j] = message{id: j, src: src, dst: dst, tag: rng.IntN(3), n: randomSizes[rng.IntN(len(randomSizes))]}
	}
	return msgs
}

// randomRun is one point of the random-messages runner.
type randomRun struct {
	eng       *sim.Engine
	seed      uint64
	msgs      []message
	fails     []workloads.Failure
	delivered int
	err       error // a stack's error posting a message
}

// stop ends the point on a stack's error.
func (x *randomRun) stop(err error) {
	x.err = err
	x.eng.Stop()
}

// rank is rank r's program: every receive posted, then every send, then
// each waited for in that order, every delivery checked.
func (x *randomRun) rank(pr *sim.Proc, r int, c stacks.Comm) {
	type pending struct {
		m   message
		buf mem.Region
		q   stacks.Request
	}
	var recvs, sends []pending
	for _, m := range x.msgs {
		if m.dst == r {
			buf, err := c.Buffer(m.n)
			if err == nil {
				var q stacks.Request
				if q, err = c.Irecv(pr, buf, m.src, m.tag); err == nil {
					recvs = append(recvs, pending{m, buf, q})
				}
			}
			if err != nil {
				x.stop(err)
				return
			}
		}
	}
	for _, m := range x.msgs {
		if m.src == r {
			buf, err := c.Buffer(m.n)
			if err == nil {
				payload.Write(c.CPU(), buf.Addr, m.n, pattern(x.seed, m.src, m.dst, m.id), 0)
				var q stacks.Request
				if q, err = c.Isend(pr, buf, m.dst, m.tag); err == nil {
					sends = append(sends, pending{m, buf, q})
				}
			}
			if err != nil {
				x.stop(err)
				return
			}
		}
	}
	for _, d := range append(sends, recvs...) {
		st, err := d.q.Wait(pr)
		if err != nil {
			x.fails = append(x.fails, stackFailure(err, r, pr.Now()))
			x.eng.Stop()
			return
		}
		if d.m.dst != r {
			continue
		}
		if f, ok := verify(c, d.buf, st, x.seed, d.m, pr.Now()); !ok {
			x.fails = append(x.fails, f)
			x.eng.Stop()
			return
		}
		x.delivered++
	}
}

// verify checks a delivery's envelope and every byte, as the program sees
// them.
func verify(c stacks.Comm, buf mem.Region, st stacks.Status, seed uint64, m message, at sim.Time) (workloads.Failure, bool) {
	if st.Source != m.src || st.Tag != m.tag || st.Len != m.n {
		return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf("rank %d at %v: message %d has envelope (%d, %d, %d bytes), want (%d, %d, %d)",
			m.dst, at, m.id, st.Source, st.Tag, st.Len, m.src, m.tag, m.n)}, false
	}
	if x, ok := payload.Check(c.CPU(), buf.Addr, m.n, pattern(seed, m.src, m.dst, m.id), 0); !ok {
		return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf("rank %d at %v: message %d (%d bytes from rank %d, tag %d): byte %d is %#02x, want %#02x",
			m.dst, at, m.id, m.n, m.src, m.tag, x.Offset, x.Got, x.Want)}, false
	}
	return workloads.Failure{}, true
}

// stackFailure turns a stack error into a failure: a corruption the stack
// detected, or another error.
func stackFailure(err error, rank int, at sim.Time) workloads.Failure {
	if ce, ok := err.(interface{ Corruption() bool }); ok && ce.Corruption() {
		return workloads.Failure{Kind: workloads.Corruption, Detail: err.Error()}
	}
	return workloads.Failure{Kind: "error", Detail: fmt.Sprintf("rank %d at %v: %v", rank, at, err)}
}

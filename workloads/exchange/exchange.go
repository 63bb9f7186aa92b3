// Package exchange is a ring exchange: each of procs ranks posts a
// nonblocking receive from its left neighbour, then sends to its right
// neighbour (a blocking Send, or Isend and its Wait), then waits for its
// receive and checks every byte. Under MPI's progress rule
// (stacks.MPIProgress) both forms complete: the receive was posted before
// the send. A stack whose blocking and nonblocking calls are separate
// protocols (stacks.Progress.Split: ACLMPL) never matches a blocking Send
// with an Irecv, and the ring of Sends livelocks: the teaching scenario
// aclmpl-exchange-livelock shows it.
//
// Layer: a workload: imports workloads, stacks, sim, report and
// workloads/payload; never a concrete machine or stack.
package exchange

import (
	"fmt"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Name is the workload's name in scenarios.
const Name = "exchange"

// Metric is the time until every rank has its message.
const Metric = "exchange_us"

// Sends a rank may use.
const (
	Blocking    = "blocking"    // Send
	Nonblocking = "nonblocking" // Isend, then Wait
)

// Params is workload.params.
type Params struct {
	// Procs is the number of ranks on the ring (2: a pairwise exchange).
	Procs int `yaml:"procs"`
	// Bytes is each message's length.
	Bytes int `yaml:"bytes"`
	// Send is how each rank sends: blocking (Send) or nonblocking (Isend
	// then Wait).
	Send string `yaml:"send"`
}

// DefaultParams: a pairwise exchange of one word with blocking sends.
func DefaultParams() Params { return Params{Procs: 2, Bytes: 8, Send: Blocking} }

func (p Params) validate() error {
	switch {
	case p.Procs < 2 || p.Procs > 64:
		return fmt.Errorf("procs must be between 2 and 64, got %d", p.Procs)
	case p.Bytes < 0 || p.Bytes > 1<<20:
		return fmt.Errorf("bytes must be between 0 and 1048576, got %d", p.Bytes)
	case p.Send != Blocking && p.Send != Nonblocking:
		return fmt.Errorf("send must be %q or %q, got %q", Blocking, Nonblocking, p.Send)
	}
	return nil
}

func parseParams(s workloads.Spec) (Params, error) {
	params := DefaultParams()
	if err := s.DecodeParams(&params, func() error { return params.validate() }); err != nil {
		return Params{}, err
	}
	return params, nil
}

// comms opens the series' stack with procs ranks offering message passing.
func comms(s workloads.Spec, eng *sim.Engine, procs int) ([]stacks.Comm, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	return stacks.As[stacks.Comm](w, "workload "+Name, "message passing (stacks.Comm)")
}

// Check validates a series without running it.
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	_, err = comms(s, sim.NewEngine(s.Seed), params.Procs)
	return err
}

// Run is the workloads.Runner: one exchange.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, err := parseParams(s)
	if err != nil {
		return workloads.Result{}, err
	}
	eng := s.NewEngine(s.Seed)
	cs, err := comms(s, eng, params.Procs)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	n := params.Procs
	key := func(src int) payload.Pattern { return payload.Key(s.Seed, uint64(src)) }
	var done sim.Time
	for r, c := range cs {
		eng.Spawn(fmt.Sprintf("rank%d", r), func(p *sim.Proc) {
			left, right := (r+n-1)%n, (r+1)%n
			rbuf, err := c.Buffer(params.Bytes)
			if err != nil {
				eng.Fail(err)
				return
			}
			sbuf, err := c.Buffer(params.Bytes)
			if err != nil {
				eng.Fail(err)
				return
			}
			payload.Write(c.CPU(), sbuf.Addr, params.Bytes, key(r), 0)
			rq, err := c.Irecv(p, rbuf, left, 0)
			if err != nil {
				eng.Fail(err)
				return
			}
			if params.Send == Blocking {
				err = c.Send(p, sbuf, right, 0)
			} else {
				var sq stacks.Request
				if sq, err = c.Isend(p, sbuf, right, 0); err == nil {
					_, err = sq.Wait(p)
				}
			}
			if err != nil {
				eng.Fail(err)
				return
			}
			st, err := rq.Wait(p)
			if err != nil {
				eng.Fail(err)
				return
			}
			if st.Source != left || st.Len != params.Bytes {
				res.Failures = append(res.Failures, workloads.Failure{Kind: workloads.Corruption,
					Detail: fmt.Sprintf("rank %d at %v: envelope (source %d, %d bytes), want (%d, %d)", r, p.Now(), st.Source, st.Len, left, params.Bytes)})
				return
			}
			if bad, ok := payload.Check(c.CPU(), rbuf.Addr, params.Bytes, key(left), 0); !ok {
				res.Failures = append(res.Failures, workloads.Failure{Kind: workloads.Corruption,
					Detail: fmt.Sprintf("rank %d at %v: byte %d from rank %d is %#02x, want %#02x", r, p.Now(), bad.Offset, left, bad.Got, bad.Want)})
				return
			}
			done = max(done, p.Now())
		})
	}
	runErr := eng.Run()
	res.Events, res.SimTime = eng.Events(), eng.Now()
	if runErr != nil {
		kind, stuck := workloads.StuckKind(runErr)
		if !stuck {
			return res, fmt.Errorf("%s: series %s: %w", s.File, s.Series, runErr)
		}
		res.Failures = append(res.Failures, workloads.Failure{Kind: kind, Detail: runErr.Error()})
		return res, nil
	}
	if len(res.Failures) == 0 {
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "bytes", X: float64(params.Bytes), Metric: Metric, Value: done.Micros(), Unit: "us"})
	}
	return res, nil
}

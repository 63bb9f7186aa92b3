// Package pingpong is the mpptest-style ping-pong (papers/mpich-sx4.txt,
// section 4): two ranks bounce a message of each size back and forth; the
// latency is half the round-trip time, the bandwidth the size divided by
// it. Every delivered payload is checked against the seeded pattern its
// sender wrote, as the receiving program sees it when the stack exposes its
// CPU. Measure runs on any stacks.Comm; Run runs on any stack the
// registry opens whose ranks offer it (mpich on the SX-4 and the T3D,
// ACLMPL on a machine with one-sided puts).
//
// Layer: a workload: imports workloads, stacks, machines, sim, sim/mem,
// report, workloads/payload and internal/strictyaml; never a concrete
// machine or stack.
package pingpong

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Name is the workload's name in scenarios.
const Name = "pingpong"

// Params is workload.params.
type Params struct {
	// Sizes are the message lengths in bytes.
	Sizes []int `yaml:"sizes"`
	// Repetitions is the number of timed round trips per size.
	Repetitions int `yaml:"repetitions"`
	// Warmup is the number of untimed round trips first.
	Warmup int `yaml:"warmup"`
	// Ranks is the number of processes started (ranks 0 and 1 ping-pong;
	// the others only exist, as the processes of a bigger job would).
	Ranks int `yaml:"ranks"`
	// Mode is how the ranks call the stack: "sync", blocking Send and Recv
	// (ACLMPL's synchronous protocol), "async", Isend or Irecv then Wait
	// (ACLMPL's asynchronous protocol, MPI's nonblocking calls), or "put",
	// one-sided puts of the message and a flag word (raw SHMEM; see
	// MeasurePut).
	Mode string `yaml:"mode"`
}

// Modes of calling the stack.
const (
	ModeSync  = "sync"
	ModeAsync = "async"
	ModePut   = "put"
)

// DefaultSizes is the sweep of the SX-4 figures: short messages around
// the 1024-byte protocol switch, then powers of two and the region of the
// ~3 MB segment switch, up to 4 MB.
var defaultSizes = []int{
	0, 8, 32, 64, 128, 256, 512, 768, 1000, 1024, 1536, 2048, 4096, 8192, 16384, 32768, 65536,
	131072, 262144, 524288, 1000000, 1500000, 2000000, 2500000, 2800000, 3000000, 3200000, 3500000, 4000000,
}

// DefaultParams returns the figure sweep.
func DefaultParams() Params {
	return Params{Sizes: append([]int(nil), defaultSizes...), Repetitions: 4, Warmup: 1, Ranks: 2, Mode: ModeSync}
}

func (p Params) validate() error {
	var errs []error
	if len(p.Sizes) == 0 {
		errs = append(errs, errors.New("sizes must list at least one message length"))
	}
	if p.Repetitions < 1 {
		errs = append(errs, fmt.Errorf("repetitions must be at least 1, got %d", p.Repetitions))
	}
	if p.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must not be negative, got %d", p.Warmup))
	}
	if p.Ranks < 2 {
		errs = append(errs, fmt.Errorf("ranks must be at least 2, got %d", p.Ranks))
	}
	if p.Mode != ModeSync && p.Mode != ModeAsync && p.Mode != ModePut {
		errs = append(errs, fmt.Errorf("mode must be %q, %q or %q, got %q", ModeSync, ModeAsync, ModePut, p.Mode))
	}
	for i, n := range p.Sizes {
		if n < 0 {
			errs = append(errs, fmt.Errorf("sizes[%d] is negative (%d)", i, n))
		}
	}
	return errors.Join(errs...)
}

// Metrics and units of the rows.
const (
	XName     = "bytes"
	Latency   = "latency_us"
	Bandwidth = "bandwidth_MBps"
)

// Run is the workloads.Runner: one engine per size, in order.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, err := parseParams(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	for i, n := range params.Sizes {
		eng := s.NewEngine(s.Seed + uint64(i))
		run, err := open(eng, s, params)
		if err != nil {
			return res, err
		}
		lat, fails, err := run(n, s.Seed+uint64(i))
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		res.Failures = append(res.Failures, fails...)
		if err != nil {
			return res, fmt.Errorf("ping-pong of %d bytes: %w", n, err)
		}
		if len(fails) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("series %s stopped at %d bytes after a failed delivery", s.Series, n))
			break
		}
		if lat <= 0 {
			return res, fmt.Errorf("%s: series %s: ping-pong of %d bytes took no simulated time: no latency or bandwidth to report", s.File, s.Series, n)
		}
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: XName, X: float64(n), Metric: Latency, Value: lat.Micros(), Unit: "us"})
		if n > 0 {
			res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: XName, X: float64(n), Metric: Bandwidth, Value: float64(n) / lat.Micros(), Unit: "MB/s"})
		}
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: %d bytes: %.2f us", s.Series, n, lat.Micros()))
		}
	}
	return res, nil
}

// open opens the spec's stack in eng and returns the ping-pong of its
// ranks as params.Mode says: message passing, or one-sided puts.
func open(eng *sim.Engine, s workloads.Spec, params Params) (func(n int, seed uint64) (sim.Time, []workloads.Failure, error), error) {
	if params.Mode == ModePut {
		ones, err := OpenPutters(eng, s, params.Ranks)
		if err != nil {
			return nil, err
		}
		return func(n int, seed uint64) (sim.Time, []workloads.Failure, error) {
			return MeasurePut(eng, ones, n, params.Repetitions, params.Warmup, seed)
		}, nil
	}
	comms, err := Open(eng, s, params.Ranks)
	if err != nil {
		return nil, err
	}
	return func(n int, seed uint64) (sim.Time, []workloads.Failure, error) {
		return Measure(eng, comms, n, params.Repetitions, params.Warmup, params.Mode, seed)
	}, nil
}

// Measure runs the ping-pong of n-byte messages between ranks 0 and 1,
// calling the stack as mode says (ModeSync or ModeAsync), and returns the
// mean half round-trip time. Failures are corrupted deliveries
// (by the workload's check or the stack's); err is a run that could not
// finish (deadlock, livelock, limit).
func Measure(eng *sim.Engine, comms []stacks.Comm, n, reps, warmup int, mode string, seed uint64) (sim.Time, []workloads.Failure, error) {
	var fails []workloads.Failure
	var start, end sim.Time
	fail := func(f workloads.Failure) {
		fails = append(fails, f)
		eng.Stop()
	}
	// A stack that finds at its first call that the machine lacks a
	// capability (ACLMPL's asynchronous protocol without
	// fetch-and-increment) ends the run with that error: the pairing is
	// bad input, not a failed delivery.
	stackError := func(err error, rank int, at sim.Time) {
		var mc *machines.MissingCapability
		if errors.As(err, &mc) {
			eng.Fail(fmt.Errorf("rank %d at %v: %w", rank, at, err))
			return
		}
		fail(stackFailure(err, rank, at))
	}
	for rank := 0; rank < 2; rank++ {
		c := comms[rank]
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			// A buffer that does not fit is a configuration error, not a
			// failed delivery: it stops the run with an error.
			buf, err := c.Buffer(n)
			if err != nil {
				eng.Fail(fmt.Errorf("rank %d: %d-byte message buffer: %w", rank, n, err))
				return
			}
			peer := 1 - rank
			for k := 0; k < warmup+reps; k++ {
				if rank == 0 && k == warmup {
					start = p.Now()
				}
				for turn := 0; turn < 2; turn++ {
					msg := uint64(2*k + turn)
					if turn == rank { // my turn to send
						fillCPU(c, buf, seed, rank, msg)
						if err := send(p, c, mode, buf, peer, k); err != nil {
							stackError(err, rank, p.Now())
							return
						}
						continue
					}
					st, err := recv(p, c, mode, buf, peer, k)
					if err != nil {
						stackError(err, rank, p.Now())
						return
					}
					if f, ok := verifyCPU(c, buf, st, seed, peer, rank, k, n, msg, p.Now()); !ok {
						fail(f)
						return
					}
				}
			}
			if rank == 0 {
				end = p.Now()
			}
		})
	}
	if err := eng.Run(); err != nil {
		return 0, fails, err
	}
	if len(fails) > 0 {
		return 0, fails, nil
	}
	return (end - start) / sim.Time(2*reps), nil, nil
}

// send is a blocking send, or with ModeAsync a nonblocking one and its wait.
func send(p *sim.Proc, c stacks.Comm, mode string, buf mem.Region, dst, tag int) error {
	if mode != ModeAsync {
		return c.Send(p, buf, dst, tag)
	}
	r, err := c.Isend(p, buf, dst, tag)
	if err != nil {
		return err
	}
	_, err = r.Wait(p)
	return err
}

// recv is a blocking receive, or with ModeAsync a nonblocking one and its
// wait.
func recv(p *sim.Proc, c stacks.Comm, mode string, buf mem.Region, src, tag int) (stacks.Status, error) {
	if mode != ModeAsync {
		return c.Recv(p, buf, src, tag)
	}
	r, err := c.Irecv(p, buf, src, tag)
	if err != nil {
		return stacks.Status{}, err
	}
	return r.Wait(p)
}

// stackFailure turns a stack error into a failure: a corruption the stack
// detected (a stale control packet), or another error.
func stackFailure(err error, rank int, at sim.Time) workloads.Failure {
	var ce interface{ Corruption() bool }
	if errors.As(err, &ce) && ce.Corruption() {
		return workloads.Failure{Kind: workloads.Corruption, Detail: err.Error()}
	}
	return workloads.Failure{Kind: "error", Detail: fmt.Sprintf("rank %d at %v: %v", rank, at, err)}
}

// pattern is the seeded pattern of message msg from rank src.
func pattern(seed uint64, src int, msg uint64) payload.Pattern {
	return payload.Key(seed, uint64(src), msg)
}

// access is how rank's program reads and writes its buffer: through its
// CPU (Peek, Poke: its cache) when the stack exposes one (a test's stack
// may not), else the memory's live bytes.
func access(c stacks.Comm, buf mem.Region) interface {
	payload.Peeker
	payload.Poker
} {
	if cpu := c.CPU(); cpu != nil {
		return cpu
	}
	return payload.Raw{Mem: buf.Mem}
}

// fillCPU writes the pattern of message msg into buf as rank's program
// does (untimed: the benchmark's buffer set-up).
func fillCPU(c stacks.Comm, buf mem.Region, seed uint64, src int, msg uint64) {
	payload.Write(access(c, buf), buf.Addr, buf.Len, pattern(seed, src, msg), 0)
}

// verifyCPU checks a delivery (envelope, then every byte) as rank's
// program sees buf (through its cache)
// when the stack exposes its CPU.
func verifyCPU(c stacks.Comm, buf mem.Region, st stacks.Status, seed uint64, src, rank, tag, n int, msg uint64, at sim.Time) (workloads.Failure, bool) {
	return check(access(c, buf), buf, st, seed, src, rank, tag, n, msg, at)
}

func check(r payload.Peeker, buf mem.Region, st stacks.Status, seed uint64, src, rank, tag, n int, msg uint64, at sim.Time) (workloads.Failure, bool) {
	if st.Source != src || st.Tag != tag || st.Len != n {
		return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
			"rank %d at %v: message %d has envelope (source %d, tag %d, %d bytes), want (%d, %d, %d)",
			rank, at, msg, st.Source, st.Tag, st.Len, src, tag, n)}, false
	}
	if m, ok := payload.Check(r, buf.Addr, n, pattern(seed, src, msg), 0); !ok {
		return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
			"rank %d at %v: message %d (%d bytes from rank %d, tag %d): byte offset %d is %#02x, want %#02x",
			rank, at, msg, n, src, tag, m.Offset, m.Got, m.Want)}, false
	}
	return workloads.Failure{}, true
}

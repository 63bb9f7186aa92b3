// Package scibench holds the benchmarks of the ScaMPI paper
// (papers/scampi-sci.txt, section 1.6) beyond the ping-pong, on any stack
// whose ranks offer them:
//
//   - barrier-time: the time of a barrier on 2 to N processes (Table 1.1),
//     with the const*log2(N) least-squares fit of Figure 1.3 as a second
//     series and its fit in the notes (ranks offering Barrier);
//   - alltoall-mbps: MPI_Alltoall of long blocks, the per-node throughput
//     counted on the network traffic only, (N-1) blocks per rank and
//     alltoall, the rank's own block being a local copy (Table 1.2; ranks
//     offering Alltoall);
//   - random-messages: random point-to-point messages (sizes around the
//     envelope and buffer limits, tags), every one checked once and intact,
//     with the machine's and the stack's counters (retries, checkpoint
//     failures, CRC errors...) as rows: the fault scenario's workload (any
//     stacks.Comm).
//
// Every delivered byte is checked against the pattern its sender wrote
// (alltoall-mbps: a window of one seeded stream that the send buffers
// share, so that 96 ranks do not each hold and compare copies).
//
// Layer: a workload: imports workloads, stacks, sim, sim/mem, report,
// workloads/payload and internal/strictyaml; never a concrete machine or
// stack.
package scibench

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Barrierer is a rank with a barrier.
type Barrierer interface {
	Barrier(p *sim.Proc) error
}

// Alltoaller is a rank with MPI_Alltoall of block-byte blocks.
type Alltoaller interface {
	Alltoall(p *sim.Proc, sbuf, rbuf mem.Region, block int) error
}

// Counter is what a machine or a rank may offer: named counts (shown as
// rows by random-messages).
type Counter interface {
	Counters() (names []string, values []uint64)
}

// Params is workload.params.
type Params struct {
	// Procs are the numbers of processes of the sweep.
	Procs []int `yaml:"procs"`
	// Repetitions are the timed operations per point; Warmup untimed
	// ones first.
	Repetitions int `yaml:"repetitions"`
	Warmup      int `yaml:"warmup"`
	// BlockBytes is the alltoall's block (per pair of ranks).
	BlockBytes int `yaml:"block_bytes"`
	// Messages is the number of random messages per point.
	Messages int `yaml:"messages"`
	// Fit adds the const*log2(N) fit to a barrier-time series.
	Fit bool `yaml:"fit"`

	// perBlock (tests) writes and checks every alltoall block with its
	// own pattern even where one shared stream would do (blockStream).
	perBlock bool
}

// DefaultParams are the paper's sweep.
func DefaultParams() Params {
	return Params{Procs: []int{2, 4, 8, 16, 32, 48, 64, 80, 96}, Repetitions: 10, Warmup: 2, BlockBytes: 32768, Messages: 200}
}

func parse(s workloads.Spec) (Params, error) {
	p := DefaultParams()
	if err := strictyaml.DecodeAt(s.File, s.Workload.ParamsField("workload"), s.Workload.Params, &p); err != nil {
		return p, err
	}
	switch {
	case len(p.Procs) == 0:
		return p, fmt.Errorf("%s: workload.params.procs: list at least one number of processes", s.File)
	case p.Repetitions < 1 || p.Warmup < 0:
		return p, fmt.Errorf("%s: workload.params: repetitions must be at least 1 and warmup not negative", s.File)
	case p.BlockBytes < 0 || p.Messages < 1:
		return p, fmt.Errorf("%s: workload.params: block_bytes must not be negative and messages must be at least 1", s.File)
	}
	for i, n := range p.Procs {
		if n < 2 {
			return p, fmt.Errorf("%s: workload.params.procs[%d]: %d processes; at least 2", s.File, i, n)
		}
	}
	return p, nil
}

// Check decodes a series' params and opens its smallest point (simrun
// validate).
func Check(s workloads.Spec) error {
	p, err := parse(s)
	if err != nil {
		return err
	}
	_, err = s.OpenWorld(sim.NewEngine(s.Seed), p.Procs[0])
	return err
}

// RunBarrier is the barrier-time runner.
func RunBarrier(s workloads.Spec) (workloads.Result, error) {
	p, err := parse(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	var xs, ys []float64
	for i, n := range p.Procs {
		eng := s.NewEngine(s.Seed + uint64(i))
		w, err := s.OpenWorld(eng, n)
		if err != nil {
			return res, err
		}
		bs, err := stacks.As[Barrierer](w, "workload barrier-time", "a barrier (Barrier)")
		if err != nil {
			return res, err
		}
		var start, end sim.Time
		var ferr error
		for r := range bs {
			eng.Spawn(fmt.Sprintf("rank%d", r), func(pr *sim.Proc) {
				for k := 0; k < p.Warmup+p.Repetitions; k++ {
					if k == p.Warmup && r == 0 {
						start = pr.Now()
					}
					if err := bs[r].Barrier(pr); err != nil {
						ferr = err
						eng.Stop()
						return
					}
				}
				if r == 0 {
					end = pr.Now()
				}
			})
		}
		err = eng.Run()
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		if err == nil {
			err = ferr
		}
		if err != nil {
			return res, fmt.Errorf("barrier on %d processes: %w", n, err)
		}
		t := (end - start).Micros() / float64(p.Repetitions)
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "nodes", X: float64(n), Metric: "barrier_us", Value: t, Unit: "us"})
		xs, ys = append(xs, float64(n)), append(ys, t)
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: %d processes: %.2f us", s.Series, n, t))
		}
	}
	if p.Fit && len(xs) > 1 {
		c, worst, r2 := logFit(xs, ys)
		for _, x := range xs {
			res.Rows = append(res.Rows, report.Row{Series: s.Series + "-fit", XName: "nodes", X: x, Metric: "barrier_us", Value: c * math.Log2(x), Unit: "us"})
		}
		res.Notes = append(res.Notes, fmt.Sprintf("series %s: least-squares fit barrier = %.3f us * log2(N); R^2 %.3f; largest deviation of a point from the fit %.1f%%", s.Series, c, r2, 100*worst))
	}
	return res, nil
}

// logFit is the least-squares c of y = c*log2(x), the largest relative
// deviation of a point from it, and the coefficient of determination.
func logFit(xs, ys []float64) (c, worst, r2 float64) {
	var num, den float64
	for i := range xs {
		l := math.Log2(xs[i])
		num += l * ys[i]
		den += l * l
	}
	c = num / den
	var mean, ssRes, ssTot float64
	for _, y := range ys {
		mean += y / float64(len(ys))
	}
	for i := range xs {
		f := c * math.Log2(xs[i])
		worst = max(worst, math.Abs(ys[i]-f)/f)
		ssRes += (ys[i] - f) * (ys[i] - f)
		ssTot += (ys[i] - mean) * (ys[i] - mean)
	}
	return c, worst, 1 - ssRes/ssTot
}

// pattern is the content of the block rank src sends to dst in round k
// when the blocks are too short to be windows of one stream (blockStream;
// workloads/payload: regenerated to verify, never kept as a copy).
func pattern(seed uint64, src, dst, k int) payload.Pattern {
	return payload.Key(seed, uint64(src), uint64(dst), uint64(k))
}

// blockStride separates the windows of the one payload stream that
// alltoall-mbps senders send (as in workloads/collective): sender src's n
// blocks of round k are the stream's bytes from (k*n+src)*blockStride on,
// block dst at dst*block from there, so that a block from the wrong
// sender, for the wrong receiver or of the wrong round is caught (61: not
// a multiple of any word size).
const blockStride = 61

// blockStream is the payload of an alltoall-mbps point of n ranks and
// rounds rounds of block-byte blocks: one stream whose windows the
// senders' buffers share (mem.CPU.PokeShared) and the adapters carry on
// without copies, instead of every block written and held in full by its
// sender (96 ranks hold 288 MB of send buffers). Nil when a window would
// start a block or more into the stream (rounds*n*blockStride >= block):
// two different blocks could then be the same bytes, so each block is
// written and checked with its own pattern instead (pattern).
func blockStream(seed uint64, n, rounds, block int) *payload.Stream {
	if block == 0 || rounds*n*blockStride >= block {
		return nil
	}
	return payload.NewStream(payload.Key(seed, uint64(n)), n*block+rounds*n*blockStride)
}

// blockOff is where, in a blockStream, the block src sends to dst in
// round k starts.
func blockOff(n, block, src, dst, k int) int { return (k*n+src)*blockStride + dst*block }

// RunAlltoall is the alltoall-mbps runner. Its points (process counts)
// are independent simulations: they run in parallel on the run's free
// tokens (workloads.Spec.Points), the largest first, and are merged in
// the order of procs, as a serial run would give them (up to the first
// point that fails).
func RunAlltoall(s workloads.Spec) (workloads.Result, error) {
	p, err := parse(s)
	if err != nil {
		return workloads.Result{}, err
	}
	order := make([]int, len(p.Procs))
	for i := range order {
		order[i] = i
	}
	if s.Pool != nil { // in parallel: the largest first (one at a time, in order: less memory at once)
		sort.SliceStable(order, func(a, b int) bool { return p.Procs[order[a]] > p.Procs[order[b]] })
	}
	outs := make([]alltoallPoint, len(p.Procs))
	s.Points(len(order), func(k int) {
		i := order[k]
		outs[i] = runAlltoallPoint(s, p, i, p.Procs[i])
		if o := outs[i]; o.err == nil && len(o.fails) == 0 && s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: %d processes: %.1f MB/s per node", s.Series, p.Procs[i], o.row.Value))
		}
	})
	var res workloads.Result
	for _, o := range outs {
		res.Events += o.events
		res.SimTime += o.simTime
		res.Failures = append(res.Failures, o.fails...)
		if o.err != nil || len(o.fails) > 0 {
			return res, o.err
		}
		res.Rows = append(res.Rows, o.row)
	}
	return res, nil
}

// alltoallPoint is what one point of alltoall-mbps gave.
type alltoallPoint struct {
	row     report.Row
	events  uint64
	simTime sim.Time
	fails   []workloads.Failure
	err     error
}

// runAlltoallPoint runs point i of alltoall-mbps: n processes, its own
// engine.
func runAlltoallPoint(s workloads.Spec, p Params, i, n int) alltoallPoint {
	var o alltoallPoint
	eng := s.NewEngine(s.Seed + uint64(i))
	w, err := s.OpenWorld(eng, n)
	if err != nil {
		o.err = err
		return o
	}
	as, err := stacks.As[Alltoaller](w, "workload alltoall-mbps", "MPI_Alltoall (Alltoall)")
	if err != nil {
		o.err = err
		return o
	}
	b := p.BlockBytes
	var start, end sim.Time
	var ferr error
	var fails []workloads.Failure
	var st *payload.Stream
	if !p.perBlock {
		st = blockStream(s.Seed, n, p.Warmup+p.Repetitions, b)
	}
	var check []byte // the ranks' scratch (one runs at a time)
	if st != nil {
		check = make([]byte, b)
	}
	for r := range as {
		rk := w.Ranks[r]
		eng.Spawn(fmt.Sprintf("rank%d", r), func(pr *sim.Proc) {
			sbuf, err1 := rk.Buffer(n * b)
			rbuf, err2 := rk.Buffer(n * b)
			if err := errors.Join(err1, err2); err != nil {
				ferr = err
				eng.Stop()
				return
			}
			for k := 0; k < p.Warmup+p.Repetitions; k++ {
				if st != nil {
					rk.CPU().PokeShared(sbuf.Addr, st.Bytes(blockOff(n, b, r, 0, k), n*b))
				}
				for d := 0; st == nil && d < n; d++ {
					payload.Write(rk.CPU(), sbuf.Addr+mem.Addr(d*b), b, pattern(s.Seed, r, d, k), 0)
				}
				if k == p.Warmup && r == 0 {
					start = pr.Now()
				}
				if err := as[r].Alltoall(pr, sbuf, rbuf, b); err != nil {
					ferr = err
					eng.Stop()
					return
				}
				end = max(end, pr.Now())
				for src := 0; src < n; src++ {
					a := rbuf.Addr + mem.Addr(src*b)
					var m payload.Mismatch
					var ok bool
					if st != nil {
						m, ok = st.CheckWith(rk.CPU(), a, b, blockOff(n, b, src, r, k), check)
					} else {
						m, ok = payload.Check(rk.CPU(), a, b, pattern(s.Seed, src, r, k), 0)
					}
					if !ok {
						fails = append(fails, workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
							"rank %d at %v: alltoall %d: block from rank %d corrupted at byte %d", r, pr.Now(), k, src, m.Offset)})
						eng.Stop()
						return
					}
				}
			}
		})
	}
	err = eng.Run()
	if st != nil && err == nil && ferr == nil && len(fails) == 0 {
		// The checks that skipped bytes shared with the stream relied on
		// it: a write into it is a corruption of every block cut from it.
		if m, ok := st.Intact(); !ok {
			fails = append(fails, workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
				"alltoall on %d processes: the shared payload stream was written: byte %d is %#x, not %#x", n, m.Offset, m.Got, m.Want)})
		}
	}
	o.events, o.simTime, o.fails = eng.Events(), eng.Now(), fails
	if err == nil {
		err = ferr
	}
	if err != nil {
		o.err = fmt.Errorf("alltoall on %d processes: %w", n, err)
		return o
	}
	if len(fails) > 0 {
		return o
	}
	t := (end - start).Micros() / float64(p.Repetitions)
	mbps := float64((n-1)*b) / t
	o.row = report.Row{Series: s.Series, XName: "nodes", X: float64(n), Metric: "alltoall_MBps", Value: mbps, Unit: "MB/s"}
	return o
}

// Package remap is the benchmark of papers/armci-sp.txt section 3.2,
// Figure 6: the HPF assignment a = b of two N x N arrays of doubles, a
// distributed by blocks of rows and b by blocks of columns over the ranks,
// a redistribution that is an all-to-all exchange of N/P x N/P blocks.
// With ARMCI (stacks.RemoteCopy) every rank gets its blocks with one
// strided get per peer, between two barriers (the paper's initial
// implementation's "extra barrier synchronizations"; the stack's Barrier,
// which the ARMCI stack makes message-passing or shared-memory); with
// message passing (stacks.Comm) every rank packs each block for its owner
// into a contiguous buffer (as MPI's derived datatypes do) and the blocks
// are exchanged with nonblocking sends and receives, no barrier: the
// messages are the synchronization. Every element of a is checked.
//
// A remap's time is its span: from the first rank starting it to the last
// rank finishing it. Every repetition starts after an untimed barrier.
//
// Layer: a workload: imports workloads, stacks, sim, sim/mem, report and
// internal/strictyaml; never a concrete machine or stack.
package remap

import (
	"errors"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// Name is the workload's name in scenarios.
const Name = "remap"

// Params is workload.params.
type Params struct {
	// Sizes are the arrays' N (a multiple of ranks).
	Sizes []int `yaml:"sizes"`
	// Ranks is the number of processes (the paper: four).
	Ranks int `yaml:"ranks"`
	// Repetitions is the number of timed remaps per size.
	Repetitions int `yaml:"repetitions"`
}

// DefaultParams: Figure 6's four processes.
func DefaultParams() Params {
	return Params{Sizes: []int{16, 32, 64, 128, 256, 512, 1024}, Ranks: 4, Repetitions: 2}
}

func (p Params) validate() error {
	if len(p.Sizes) == 0 || p.Ranks < 2 || p.Repetitions < 1 {
		return errors.New("sizes must list a size, ranks be at least 2 and repetitions at least 1")
	}
	for i, n := range p.Sizes {
		if n < p.Ranks || n%p.Ranks != 0 {
			return fmt.Errorf("sizes[%d] = %d must be a positive multiple of ranks (%d)", i, n, p.Ranks)
		}
	}
	return nil
}

// Time is the metric: one remap's time.
const Time = "time_us"

func parseParams(s workloads.Spec) (Params, error) {
	params := DefaultParams()
	if err := strictyaml.DecodeAt(s.File, s.Workload.ParamsField("workload"), s.Workload.Params, &params); err != nil {
		return Params{}, err
	}
	if err := params.validate(); err != nil {
		return Params{}, fmt.Errorf("%s: workload.params: %w", s.File, err)
	}
	return params, nil
}

// Check validates a series without running it.
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	w, err := s.OpenWorld(sim.NewEngine(s.Seed), params.Ranks)
	if err != nil {
		return err
	}
	if !stacks.Offers[stacks.RemoteCopy](w) && !stacks.Offers[stacks.Comm](w) {
		return w.Missing("workload "+Name, "remote memory copy (stacks.RemoteCopy) or message passing (stacks.Comm)")
	}
	return nil
}

// Run is the workloads.Runner: one engine per size.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, err := parseParams(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	for i, n := range params.Sizes {
		eng := s.NewEngine(s.Seed + uint64(i))
		w, err := s.OpenWorld(eng, params.Ranks)
		if err != nil {
			return res, err
		}
		var t sim.Time
		var fails []workloads.Failure
		switch {
		case stacks.Offers[stacks.RemoteCopy](w):
			rc, _ := stacks.As[stacks.RemoteCopy](w, Name, "remote copy")
			t, fails, err = runARMCI(eng, rc, n, params.Repetitions)
		case stacks.Offers[stacks.Comm](w):
			cs, _ := stacks.As[stacks.Comm](w, Name, "comm")
			t, fails, err = runMPI(eng, cs, n, params.Repetitions)
		default:
			return res, w.Missing("workload "+Name, "remote memory copy (stacks.RemoteCopy) or message passing (stacks.Comm)")
		}
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		res.Failures = append(res.Failures, fails...)
		if err != nil {
			return res, fmt.Errorf("%s: series %s: N = %d: %w", s.File, s.Series, n, err)
		}
		if len(fails) > 0 {
			break
		}
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "N", X: float64(n), Metric: Time, Value: t.Micros(), Unit: "us"})
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: N=%d: %.1f us", s.Series, n, t.Micros()))
		}
	}
	return res, nil
}

// value is b's element (i, j): distinct and exact as a double.
func value(i, j int) float64 { return float64(i*65536 + j + 1) }

// fillB writes rank r's block of columns of b (N rows, N/P columns, ld N).
func fillB(b []byte, r, n, p int) {
	nb := n / p
	for jj := 0; jj < nb; jj++ {
		for i := 0; i < n; i++ {
			putF(b[8*(jj*n+i):], value(i, r*nb+jj))
		}
	}
}

// checkA checks rank r's block of rows of a (N/P rows, N columns, ld N/P).
func checkA(a []byte, r, n, p int, at sim.Time) (workloads.Failure, bool) {
	nb := n / p
	for j := 0; j < n; j++ {
		for ii := 0; ii < nb; ii++ {
			if got, want := getF(a[8*(j*nb+ii):]), value(r*nb+ii, j); got != want {
				return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf("rank %d at %v: a(%d, %d) = %v, want %v", r, at, r*nb+ii, j, got, want)}, false
			}
		}
	}
	return workloads.Failure{}, true
}

func putF(b []byte, v float64) {
	u := math.Float64bits(v)
	for k := 0; k < 8; k++ {
		b[k] = byte(u >> (8 * k))
	}
}

func getF(b []byte) float64 {
	var u uint64
	for k := 0; k < 8; k++ {
		u |= uint64(b[k]) << (8 * k)
	}
	return math.Float64frombits(u)
}

// spans records every repetition's start and end on every rank.
type spans struct{ start, end [][]sim.Time }

func newSpans(reps, p int) *spans {
	s := &spans{}
	for k := 0; k < reps; k++ {
		s.start = append(s.start, make([]sim.Time, p))
		s.end = append(s.end, make([]sim.Time, p))
	}
	return s
}

// mean is the mean over repetitions of the last end minus the first start.
func (s *spans) mean() sim.Time {
	var total sim.Time
	for k := range s.start {
		first, last := s.start[k][0], s.end[k][0]
		for q := range s.start[k] {
			first, last = min(first, s.start[k][q]), max(last, s.end[k][q])
		}
		total += last - first
	}
	return total / sim.Time(len(s.start))
}

// runARMCI: a and b in ARMCI_Malloc'd memory; rank q gets block (R_q,
// C_r) from each rank r (its own first) with one GetS, between barriers.
func runARMCI(eng *sim.Engine, rc []stacks.RemoteCopy, n, reps int) (sim.Time, []workloads.Failure, error) {
	p := len(rc)
	nb := n / p
	sp := newSpans(reps, p)
	var fails []workloads.Failure
	for q, r := range rc {
		eng.Spawn(fmt.Sprintf("rank%d", q), func(pr *sim.Proc) {
			as, err := r.Malloc(pr, 8*nb*n)
			if err != nil {
				eng.Fail(err)
				return
			}
			bs, err := r.Malloc(pr, 8*n*nb)
			if err != nil {
				eng.Fail(err)
				return
			}
			b := make([]byte, 8*n*nb)
			fillB(b, q, n, p)
			r.CPU().Memory().Write(bs[q], b)
			for k := 0; k < reps; k++ {
				r.Barrier(pr) // untimed: every repetition starts together
				sp.start[k][q] = pr.Now()
				r.Barrier(pr)
				for s := 0; s < p; s++ {
					src := (q + s) % p
					st := stacks.Strided{
						Src: bs[src] + mem.Addr(8*q*nb), SrcStride: []int{8 * n},
						Dst: as[q] + mem.Addr(8*src*nb*nb), DstStride: []int{8 * nb},
						Count: []int{8 * nb, nb},
					}
					if err := r.GetS(pr, st, src); err != nil {
						eng.Fail(err)
						return
					}
				}
				r.Barrier(pr)
				sp.end[k][q] = pr.Now()
			}
			if f, ok := checkA(r.CPU().Memory().Bytes(as[q], 8*nb*n), q, n, p, pr.Now()); !ok {
				fails = append(fails, f)
			}
		})
	}
	if err := eng.Run(); err != nil {
		return 0, fails, err
	}
	return sp.mean(), fails, nil
}

// runMPI: each rank packs the block for each other rank (the library
// memcpy column by column, as a derived datatype's pack), posts its receives straight into a, sends,
// and waits; an untimed barrier of zero-byte messages through rank 0
// starts each repetition.
func runMPI(eng *sim.Engine, cs []stacks.Comm, n, reps int) (sim.Time, []workloads.Failure, error) {
	p := len(cs)
	nb := n / p
	sp := newSpans(reps, p)
	var fails []workloads.Failure
	for q, c := range cs {
		eng.Spawn(fmt.Sprintf("rank%d", q), func(pr *sim.Proc) {
			a, err1 := c.Buffer(8 * nb * n)
			b, err2 := c.Buffer(8 * n * nb)
			pack, err3 := c.Buffer(8 * n * nb)
			empty, err4 := c.Buffer(0)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				eng.Fail(err)
				return
			}
			bb := make([]byte, 8*n*nb)
			fillB(bb, q, n, p)
			c.CPU().Memory().Write(b.Addr, bb)
			cpu := c.CPU()
			// The pack: the library memcpy where the stack offers it
			// (MPICH: the SX-4's vector move, the CPU's copy elsewhere),
			// else the CPU's copy loop.
			pack1 := cpu.Memcpy
			if cp, ok := c.(stacks.Copier); ok {
				pack1 = func(pr *sim.Proc, dst, src mem.Addr, n int) { cp.Memcpy(pr, dst, src, n) }
			}
			for k := 0; k < reps; k++ {
				if err := barrier(pr, c, empty, q, p); err != nil {
					eng.Fail(err)
					return
				}
				sp.start[k][q] = pr.Now()
				var reqs []stacks.Request
				for s := 1; s < p; s++ {
					src := (q - s + p) % p
					rq, err := c.Irecv(pr, a.Slice(8*src*nb*nb, 8*nb*nb), src, 1)
					if err != nil {
						eng.Fail(err)
						return
					}
					reqs = append(reqs, rq)
				}
				// The own block: a local strided copy.
				for jj := 0; jj < nb; jj++ {
					pack1(pr, a.Addr+mem.Addr(8*(q*nb*nb+jj*nb)), b.Addr+mem.Addr(8*(jj*n+q*nb)), 8*nb)
				}
				for s := 1; s < p; s++ {
					dst := (q + s) % p
					buf := pack.Slice(8*dst*nb*nb, 8*nb*nb)
					for jj := 0; jj < nb; jj++ {
						pack1(pr, buf.Addr+mem.Addr(8*jj*nb), b.Addr+mem.Addr(8*(jj*n+dst*nb)), 8*nb)
					}
					rq, err := c.Isend(pr, buf, dst, 1)
					if err != nil {
						eng.Fail(err)
						return
					}
					reqs = append(reqs, rq)
				}
				for _, rq := range reqs {
					if _, err := rq.Wait(pr); err != nil {
						eng.Fail(err)
						return
					}
				}
				sp.end[k][q] = pr.Now()
			}
			if f, ok := checkA(c.CPU().Memory().Bytes(a.Addr, 8*nb*n), q, n, p, pr.Now()); !ok {
				fails = append(fails, f)
			}
		})
	}
	if err := eng.Run(); err != nil {
		return 0, fails, err
	}
	return sp.mean(), fails, nil
}

// barrier: every rank sends a zero-byte message to rank 0, which answers
// each once all have arrived.
func barrier(pr *sim.Proc, c stacks.Comm, empty mem.Region, q, p int) error {
	if q != 0 {
		if err := c.Send(pr, empty, 0, 2); err != nil {
			return err
		}
		_, err := c.Recv(pr, empty, 0, 3)
		return err
	}
	for i := 1; i < p; i++ {
		if _, err := c.Recv(pr, empty, stacks.AnySource, 2); err != nil {
			return err
		}
	}
	for i := 1; i < p; i++ {
		if err := c.Send(pr, empty, i, 3); err != nil {
			return err
		}
	}
	return nil
}

// Package remotecopy is the benchmark of papers/armci-sp.txt section 2.5:
// rank 0 gets noncontiguous data from the other ranks, alternating its
// requests among them while they sleep (so that every request is handled
// in interrupt mode, "the worse case scenario"), through a stack's
// stacks.RemoteCopy (ARMCI, or ARMCI in native mode: one nonblocking
// LAPI_Get per block and one wait). Shapes:
//
//   - square: an n x n section of a 2-D array of doubles (Figure 4);
//   - gather: every third double, n of them (Figure 5), by GetV;
//   - section: a rows x n section of an array of ld rows (section 1's
//     2x100 of a 10x300 array), by GetS.
//
// Every get is checked against the seeded pattern of the remote array.
//
// Layer: a workload: imports workloads, stacks, sim, sim/mem, report,
// workloads/payload and internal/strictyaml; never a concrete machine or
// stack.
package remotecopy

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

// Name is the workload's name in scenarios.
const Name = "remote-get"

// Params is workload.params.
type Params struct {
	// Shape is "square", "gather" or "section".
	Shape string `yaml:"shape"`
	// Sizes: the section's dimension (square), the number of elements
	// (gather) or of columns (section).
	Sizes []int `yaml:"sizes"`
	// Rows is a section's rows (shape section).
	Rows int `yaml:"rows"`
	// LD is the remote array's leading dimension in doubles (square,
	// section); 0: the largest size (square).
	LD int `yaml:"ld"`
	// Repetitions is the number of timed gets per size, rank 0 going to
	// ranks 1, 2, ... in turn.
	Repetitions int `yaml:"repetitions"`
	// Ranks is the number of processes (the paper: 4).
	Ranks int `yaml:"ranks"`
}

// DefaultParams: Figure 4's sweep.
func DefaultParams() Params {
	return Params{Shape: "square", Sizes: []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, Repetitions: 3, Ranks: 4}
}

func (p Params) validate() error {
	switch {
	case p.Shape != "square" && p.Shape != "gather" && p.Shape != "section":
		return fmt.Errorf("shape must be square, gather or section, got %q", p.Shape)
	case len(p.Sizes) == 0:
		return errors.New("sizes must list at least one size")
	case p.Repetitions < 1:
		return fmt.Errorf("repetitions must be at least 1, got %d", p.Repetitions)
	case p.Ranks < 2:
		return fmt.Errorf("ranks must be at least 2, got %d", p.Ranks)
	case p.Shape == "section" && (p.Rows < 1 || p.LD < p.Rows):
		return fmt.Errorf("a section needs rows >= 1 and ld >= rows, got rows %d, ld %d", p.Rows, p.LD)
	}
	for i, n := range p.Sizes {
		if n < 1 {
			return fmt.Errorf("sizes[%d] must be positive, got %d", i, n)
		}
		if p.Shape == "square" && p.LD > 0 && n > p.LD {
			return fmt.Errorf("sizes[%d] = %d exceeds ld %d", i, n, p.LD)
		}
	}
	return nil
}

// Metrics of the rows.
const (
	Bandwidth = "bandwidth_MBps"
	Time      = "time_us"
)

func parseParams(s workloads.Spec) (Params, error) {
	params := DefaultParams()
	if err := strictyaml.DecodeAt(s.File, s.Workload.ParamsField("workload"), s.Workload.Params, &params); err != nil {
		return Params{}, err
	}
	if err := params.validate(); err != nil {
		return Params{}, fmt.Errorf("%s: workload.params: %w", s.File, err)
	}
	if params.Shape == "square" && params.LD == 0 {
		for _, n := range params.Sizes {
			params.LD = max(params.LD, n)
		}
	}
	return params, nil
}

func open(eng *sim.Engine, s workloads.Spec, procs int) ([]stacks.RemoteCopy, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	rc, err := stacks.As[stacks.RemoteCopy](w, "workload "+Name, "remote memory copy (stacks.RemoteCopy)")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return rc, nil
}

// Check validates a series without running it.
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	_, err = open(sim.NewEngine(s.Seed), s, params.Ranks)
	return err
}

// layout is one size's transfer: the remote array's bytes, and the get's
// blocks as offsets (remote, local) of bytes each.
type layout struct {
	remoteBytes, localBytes int
	strided                 *stacks.Strided // offsets from 0
	blocks                  int
	bytes                   int
	xName                   string
}

func (p Params) layout(n int) layout {
	switch p.Shape {
	case "gather":
		return layout{remoteBytes: 24 * n, localBytes: 8 * n, blocks: n, bytes: 8 * n, xName: "elements"}
	case "section":
		s := &stacks.Strided{SrcStride: []int{8 * p.LD}, DstStride: []int{8 * p.Rows}, Count: []int{8 * p.Rows, n}}
		return layout{remoteBytes: 8 * p.LD * n, localBytes: 8 * p.Rows * n, strided: s, blocks: n, bytes: 8 * p.Rows * n, xName: "columns"}
	}
	s := &stacks.Strided{SrcStride: []int{8 * p.LD}, DstStride: []int{8 * n}, Count: []int{8 * n, n}}
	return layout{remoteBytes: 8 * p.LD * n, localBytes: 8 * n * n, strided: s, blocks: n, bytes: 8 * n * n, xName: "dimension"}
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
		rc, err := open(eng, s, params.Ranks)
		if err != nil {
			return res, err
		}
		lay := params.layout(n)
		t, fails, err := measure(eng, rc, lay, params.Repetitions, s.Seed+uint64(i))
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		res.Failures = append(res.Failures, fails...)
		if err != nil {
			return res, fmt.Errorf("%s: series %s: size %d: %w", s.File, s.Series, n, err)
		}
		if len(fails) > 0 {
			break
		}
		res.Rows = append(res.Rows,
			report.Row{Series: s.Series, XName: lay.xName, X: float64(n), Metric: Time, Value: t.Micros(), Unit: "us"},
			report.Row{Series: s.Series, XName: lay.xName, X: float64(n), Metric: Bandwidth, Value: float64(lay.bytes) / t.Micros(), Unit: "MB/s"})
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: %d: %.1f us", s.Series, n, t.Micros()))
		}
	}
	return res, nil
}

// pattern is the seeded content of rank r's array (workloads/payload).
func pattern(seed uint64, r int) payload.Pattern { return payload.Key(seed, uint64(r)) }

// measure: every rank allocates its array (ARMCI_Malloc) and fills it; the
// others then sleep (they make no call, so LAPI serves rank 0's requests by
// interrupt) while rank 0 does reps gets, to ranks 1, 2, ... in turn,
// checking each; it returns the mean time of a get.
func measure(eng *sim.Engine, rc []stacks.RemoteCopy, lay layout, reps int, seed uint64) (sim.Time, []workloads.Failure, error) {
	var fails []workloads.Failure
	var total sim.Time
	var wake sim.Flag
	for rank, r := range rc {
		eng.Spawn(fmt.Sprintf("rank%d", rank), func(p *sim.Proc) {
			addrs, err := r.Malloc(p, lay.remoteBytes)
			if err != nil {
				eng.Fail(err)
				return
			}
			payload.Write(r.CPU(), addrs[rank], lay.remoteBytes, pattern(seed, rank), 0)
			r.Barrier(p)
			if rank != 0 {
				wake.Wait(p, "sleeping while rank 0 measures")
				return
			}
			local, err := r.Buffer(lay.localBytes)
			if err != nil {
				eng.Fail(err)
				return
			}
			zero := make([]byte, lay.localBytes)
			for k := 0; k < reps; k++ {
				proc := 1 + k%(len(rc)-1)
				r.CPU().Poke(local.Addr, zero)
				t0 := p.Now()
				if err := get(p, r, lay, addrs[proc], local.Addr, proc); err != nil {
					eng.Fail(err)
					return
				}
				total += p.Now() - t0
				if f, ok := verify(r.CPU(), local.Addr, lay, seed, proc, p.Now()); !ok {
					fails = append(fails, f)
					eng.Stop()
					return
				}
			}
			wake.Set()
		})
	}
	if err := eng.Run(); err != nil {
		return 0, fails, err
	}
	return total / sim.Time(reps), fails, nil
}

func get(p *sim.Proc, r stacks.RemoteCopy, lay layout, remote, local mem.Addr, proc int) error {
	if lay.strided != nil {
		s := *lay.strided
		s.Src, s.Dst = remote, local
		return r.GetS(p, s, proc)
	}
	v := stacks.GIOV{Bytes: 8}
	for i := 0; i < lay.blocks; i++ {
		v.Src = append(v.Src, remote+mem.Addr(24*i))
		v.Dst = append(v.Dst, local+mem.Addr(8*i))
	}
	return r.GetV(p, []stacks.GIOV{v}, proc)
}

// verify checks the local buffer at buf, as r reads it, against the
// pattern of rank proc's array at the offsets the get read.
func verify(r payload.Peeker, buf mem.Addr, lay layout, seed uint64, proc int, at sim.Time) (workloads.Failure, bool) {
	pat := pattern(seed, proc)
	check := func(local, remote, n int) (workloads.Failure, bool) {
		if m, ok := payload.Check(r, buf+mem.Addr(local), n, pat, remote); !ok {
			return workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf(
				"rank 0 at %v: get from rank %d: local byte %d is %#02x, want %#02x (remote offset %d)", at, proc, local+m.Offset, m.Got, m.Want, remote+m.Offset)}, false
		}
		return workloads.Failure{}, true
	}
	if lay.strided == nil {
		for i := 0; i < lay.blocks; i++ {
			if f, ok := check(8*i, 24*i, 8); !ok {
				return f, false
			}
		}
		return workloads.Failure{}, true
	}
	s := lay.strided
	for c := 0; c < s.Count[1]; c++ {
		if f, ok := check(c*s.DstStride[0], c*s.SrcStride[0], s.Count[0]); !ok {
			return f, false
		}
	}
	return workloads.Failure{}, true
}

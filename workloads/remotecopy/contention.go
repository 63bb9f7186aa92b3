package remotecopy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// ContentionName is the accumulate-contention workload's name: every rank
// accumulates (double precision, scale 2) into one array of rank 0 and
// fetch-and-increments one counter there, rounds times, at once; the
// result must be the exact sum and the counter values distinct (no lost
// update). It reports the time of the whole and the rate of accumulated
// bytes.
const ContentionName = "acc-contention"

// ContentionParams is workload.params of acc-contention.
type ContentionParams struct {
	Ranks  []int `yaml:"ranks"`  // the machine sizes to run
	Elems  int   `yaml:"elems"`  // doubles per accumulate
	Rounds int   `yaml:"rounds"` // accumulates (and Rmws) per rank
}

// DefaultContentionParams are acc-contention's params when a scenario
// sets none.
func DefaultContentionParams() ContentionParams {
	return ContentionParams{Ranks: []int{2, 4, 8, 16}, Elems: 1000, Rounds: 4}
}

func parseContention(s workloads.Spec) (ContentionParams, error) {
	p := DefaultContentionParams()
	if err := strictyaml.DecodeAt(s.File, s.Workload.ParamsField("workload"), s.Workload.Params, &p); err != nil {
		return p, err
	}
	if len(p.Ranks) == 0 || p.Elems < 1 || p.Rounds < 1 {
		return p, fmt.Errorf("%s: workload.params: %w", s.File, errors.New("ranks must list a size, elems and rounds be positive"))
	}
	for i, n := range p.Ranks {
		if n < 1 {
			return p, fmt.Errorf("%s: workload.params: ranks[%d] must be positive, got %d", s.File, i, n)
		}
	}
	return p, nil
}

// CheckContention validates a series without running it.
func CheckContention(s workloads.Spec) error {
	p, err := parseContention(s)
	if err != nil {
		return err
	}
	_, err = open(sim.NewEngine(s.Seed), s, p.Ranks[0])
	return err
}

// RunContention is the workloads.Runner of acc-contention.
func RunContention(s workloads.Spec) (workloads.Result, error) {
	par, err := parseContention(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	for i, n := range par.Ranks {
		eng := s.NewEngine(s.Seed + uint64(i))
		rc, err := open(eng, s, n)
		if err != nil {
			return res, err
		}
		var end sim.Time
		var x []byte
		seen := map[int64]int{}
		for q, r := range rc {
			eng.Spawn(fmt.Sprintf("rank%d", q), func(p *sim.Proc) {
				arr, err := r.Malloc(p, 8*par.Elems)
				if err != nil {
					eng.Fail(err)
					return
				}
				ctr, err := r.Malloc(p, 8)
				if err != nil {
					eng.Fail(err)
					return
				}
				y, err := r.Buffer(8 * par.Elems)
				if err != nil {
					eng.Fail(err)
					return
				}
				b := make([]byte, 8*par.Elems)
				for j := range par.Elems {
					binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(float64(q+j%7)))
				}
				r.CPU().Poke(y.Addr, b)
				r.Barrier(p)
				t0 := p.Now()
				for k := 0; k < par.Rounds; k++ {
					if err := r.AccS(p, stacks.AccDbl, 2, stacks.Contiguous(y.Addr, arr[0], 8*par.Elems), 0); err != nil {
						eng.Fail(err)
						return
					}
					v, err := r.Rmw(p, stacks.FetchAndAdd, 0, ctr[0], 1)
					if err != nil {
						eng.Fail(err)
						return
					}
					seen[v]++
				}
				r.AllFence(p)
				r.Barrier(p)
				if q == 0 {
					end = p.Now() - t0
					x = append([]byte(nil), r.CPU().Memory().Bytes(arr[0], 8*par.Elems)...)
				}
			})
		}
		if err := eng.Run(); err != nil {
			return res, fmt.Errorf("%s: series %s: %d ranks: %w", s.File, s.Series, n, err)
		}
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		for j := 0; j < par.Elems; j++ {
			want := 0.0
			for q := 0; q < n; q++ {
				want += 2 * float64(par.Rounds) * float64(q+j%7)
			}
			if got := math.Float64frombits(binary.LittleEndian.Uint64(x[8*j:])); got != want {
				res.Failures = append(res.Failures, workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf("%d ranks: element %d is %v, want %v (a lost update)", n, j, got, want)})
				return res, nil
			}
		}
		for v := int64(0); v < int64(n*par.Rounds); v++ {
			if seen[v] != 1 {
				res.Failures = append(res.Failures, workloads.Failure{Kind: workloads.Corruption, Detail: fmt.Sprintf("%d ranks: fetch-and-increment value %d handed out %d times", n, v, seen[v])})
				return res, nil
			}
		}
		bytes := float64(8 * par.Elems * par.Rounds * n)
		res.Rows = append(res.Rows,
			report.Row{Series: s.Series, XName: "ranks", X: float64(n), Metric: Time, Value: end.Micros(), Unit: "us"},
			report.Row{Series: s.Series, XName: "ranks", X: float64(n), Metric: "acc_MBps", Value: bytes / end.Micros(), Unit: "MB/s"})
	}
	return res, nil
}

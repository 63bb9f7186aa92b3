// Package explore runs a small multithreaded MPI program under every
// schedule (sim.Explore): the threads of each process may yield at every
// scheduling point the stack offers (entering an MPI call, taking the
// context-id lock), with at most bound yields per schedule. It is what
// SPIN did for papers/mpich2-threads.txt (section 5.3.1), built in:
//
//   - figure2: Figure 2 (thread 0 receives from the other process, thread 1
//     sends to it), on 2 processes of 2 threads;
//   - figure3: every thread duplicates its own communicator (thread 0
//     MPI_COMM_WORLD, the others a duplicate made first) with the stack's
//     context_ids algorithm; a context id that differs between processes or
//     is given twice is a failure.
//
// Rows: schedules, scheduling points and failing schedules; the shortest
// failing schedule (replayable: sim.NewSchedule) and its error are notes.
package explore

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// Name is the workload's name in scenarios.
const Name = "explore"

// Params is workload.params.
type Params struct {
	Program string `yaml:"program"` // figure2 or figure3
	Procs   int    `yaml:"procs"`
	Threads int    `yaml:"threads"`
	// Bound is the most yields per schedule.
	Bound int `yaml:"bound"`
	// MaxSchedules stops the exploration (0: none).
	MaxSchedules int `yaml:"max_schedules"`
}

// DefaultParams: Figure 2's instance, two yields per schedule.
func DefaultParams() Params {
	return Params{Program: "figure2", Procs: 2, Threads: 2, Bound: 2, MaxSchedules: 20000}
}

func (p Params) validate() error {
	switch {
	case p.Program != "figure2" && p.Program != "figure3":
		return fmt.Errorf("program must be figure2 or figure3, got %q", p.Program)
	case p.Program == "figure2" && (p.Procs != 2 || p.Threads != 2):
		return errors.New("figure2 runs on 2 processes of 2 threads")
	case p.Procs < 2 || p.Procs > 8 || p.Threads < 1 || p.Threads > 4:
		return fmt.Errorf("procs must be 2 to 8 and threads 1 to 4, got %d and %d", p.Procs, p.Threads)
	case p.Bound < 0 || p.Bound > 6 || p.MaxSchedules < 0:
		return fmt.Errorf("bound must be 0 to 6 and max_schedules not negative, got %d and %d", p.Bound, p.MaxSchedules)
	}
	return nil
}

func parseParams(s workloads.Spec) (Params, error) {
	params := DefaultParams()
	if err := strictyaml.DecodeAt(s.File, s.Workload.ParamsField("workload"), s.Workload.Params, &params); err != nil {
		return Params{}, err
	}
	if err := params.validate(); err != nil {
		return Params{}, fmt.Errorf("%s: %s: %w", s.File, s.Workload.ParamsField("workload"), err)
	}
	return params, nil
}

// rank is what the explored programs use of a rank: MPI threads and
// communicators, point-to-point messages, and chosen interleavings.
type rank interface {
	stacks.Threaded
	stacks.Comm
	stacks.Schedulable
}

// ranks returns the world's ranks as rank, or the missing interface.
func ranks(s workloads.Spec, eng *sim.Engine, procs int) ([]rank, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	user := "workload " + Name
	if _, err := stacks.As[stacks.Threaded](w, user, "MPI threads and MPI_Comm_dup (stacks.Threaded)"); err != nil {
		return nil, err
	}
	if _, err := stacks.As[stacks.Comm](w, user, "message passing (stacks.Comm)"); err != nil {
		return nil, err
	}
	return stacks.As[rank](w, user, "schedule points (stacks.Schedulable)")
}

// Check validates a series without running it.
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	_, err = ranks(s, sim.NewEngine(s.Seed), params.Procs)
	return err
}

// errSetup marks an error that is not a finding of the exploration.
type errSetup struct{ error }

// Run is the workloads.Runner.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, err := parseParams(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	var setup error
	x := sim.Explore(params.Bound, params.MaxSchedules, func(c *sim.Schedule) error {
		eng := s.NewEngine(s.Seed)
		if s.Limits.MaxEvents == 0 {
			eng.SetLimits(sim.Limits{MaxEvents: 2_000_000})
		}
		rs, err := ranks(s, eng, params.Procs)
		if err != nil {
			setup = err
			return err
		}
		rs[0].SetChooser(c)
		var check func() error
		if params.Program == "figure2" {
			figure2(eng, rs)
		} else {
			check = figure3(eng, rs, params.Threads)
		}
		err = eng.Run()
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		if err == nil && check != nil {
			err = check()
		}
		return err
	})
	if setup != nil {
		return res, setup
	}
	row := func(m string, v int) report.Row {
		return report.Row{Series: s.Series, XName: "bound", X: float64(params.Bound), Metric: m, Value: float64(v), Unit: "count"}
	}
	res.Rows = append(res.Rows, row("schedules", x.Schedules), row("points", x.Points), row("failing", x.Failures))
	res.Notes = append(res.Notes, fmt.Sprintf("%s: %v", s.Series, x))
	return res, nil
}

func figure2(eng *sim.Engine, rs []rank) {
	for rank, r := range rs {
		other := 1 - rank
		eng.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			rb, _ := r.Buffer(64)
			sb, _ := r.Buffer(64)
			r.CPU().Poke(sb.Addr, []byte{byte(rank + 1)})
			if _, err := r.InitThread(p, stacks.ThreadMultiple); err != nil {
				eng.Fail(err)
				return
			}
			r.SpawnThread(eng, "t1", func(p *sim.Proc) {
				if err := r.Send(p, sb, other, 7); err != nil {
					eng.Fail(err)
				}
			})
			if _, err := r.Recv(p, rb, other, 7); err != nil {
				eng.Fail(err)
				return
			}
			var b [1]byte
			r.CPU().Peek(rb.Addr, b[:])
			if b[0] != byte(other+1) {
				eng.Fail(fmt.Errorf("rank %d: received %d, want %d", rank, b[0], other+1))
			}
		})
	}
}

func figure3(eng *sim.Engine, rs []rank, threads int) func() error {
	ids := make([][]int, len(rs))
	for rank, r := range rs {
		ids[rank] = make([]int, threads)
		eng.Spawn(fmt.Sprintf("rank%d.t0", rank), func(p *sim.Proc) {
			if _, err := r.InitThread(p, stacks.ThreadMultiple); err != nil {
				eng.Fail(err)
				return
			}
			parents := []stacks.Communicator{r.World()}
			for j := 1; j < threads; j++ {
				c, err := r.World().Dup(p)
				if err != nil {
					eng.Fail(err)
					return
				}
				parents = append(parents, c)
			}
			body := func(j int) func(p *sim.Proc) {
				return func(p *sim.Proc) {
					c, err := parents[j].Dup(p)
					if err != nil {
						eng.Fail(err)
						return
					}
					ids[rank][j] = c.ContextID()
				}
			}
			for j := 1; j < threads; j++ {
				r.SpawnThread(eng, fmt.Sprintf("t%d", j), body(j))
			}
			body(0)(p)
		})
	}
	return func() error {
		for rank := range ids {
			seen := map[int]int{}
			for j, id := range ids[rank] {
				if id != ids[0][j] {
					return fmt.Errorf("thread %d: context id %d on rank %d, %d on rank 0", j, id, rank, ids[0][j])
				}
				if k, dup := seen[id]; dup {
					return fmt.Errorf("rank %d: threads %d and %d got context id %d", rank, k, j, id)
				}
				seen[id] = j
			}
		}
		return nil
	}
}

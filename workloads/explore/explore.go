// Package explore runs a small multithreaded MPI program under many
// schedules (sim/explore) and reports the ones that fail. What is
// explored, exactly:
//
//   - the order of the steps ready at the same simulated time: whenever
//     several threads (or processes) can run at one instant, each may go
//     first (the engine's Chooser);
//   - the stack's declared scheduling points (MPICH: a thread entering an
//     MPI call, a thread taking a thread lock) make the step after them
//     such a choice;
//   - with memory_points, every operation a thread performs on simulated
//     memory through its CPU (load, store, atomic, memcpy, vector copy)
//     and every remote memory verb it issues (put, get, remote atomic:
//     machines/capabilities.go) is a scheduling point too
//     (sim.WithMemoryPoints);
//   - with preempt, the explorer may also deschedule a thread at a
//     scheduling point (an OS scheduler delaying it): it stays off the
//     CPU until another thread of its process passes a declared point or
//     ends, or until every other thread of its process waits for a mutex
//     or a condition, or nothing else can run;
//   - at most bound deviations from the engine's own order per schedule
//     (a deschedule is one): iterative context bounding, not every
//     schedule.
//
// Not explored: timing itself (a step's duration is the machine's, so two
// steps at different times are never reordered unless a deschedule
// delays one), the store buffer's drain order and other random choices
// of the machine (drawn from the seed, the same in every schedule), the
// network's delivery order and the moment a remote write lands, and a
// machine's own lower-level operations that a stack calls directly (SCI's
// Write and Read, LAPI's counted puts), which are not memory points. With
// reduce (the
// default), steps whose footprints (simulated memory blocks, locks,
// process state) are disjoint are not permuted (sleep sets). A livelock is
// reported when a thread's retry loop meets a state it met before (the
// stack's state hash: MPICH's context-id loop hashes every process's
// context-id variables and every thread's position), otherwise by the
// stack's retry limit.
//
// SPIN checked a Promela model of Figure 3 exhaustively (section 5.3.1
// of papers/mpich2-threads.txt); this explores the stack's real code on
// the simulated machine, bounded, as CHESS-style preemption-bounded
// search does:
//
//   - figure2: Figure 2 (thread 0 receives from the other process, thread 1
//     sends to it), on 2 processes of 2 threads;
//   - figure3: every thread duplicates its own communicator (thread 0
//     MPI_COMM_WORLD, the others a duplicate made first) with the stack's
//     context_ids algorithm; a context id that differs between processes or
//     is given twice is a failure.
//
// Rows: schedules run to the end, runs pruned as redundant, states (choice
// points of the search tree), choice points visited and failing
// schedules; the shortest failing schedule (replayable: explore.NewSchedule,
// the schedule parameter, simrun explore --schedule) and its error are
// notes.
//
// Layer: a workload: imports workloads, stacks, sim and report; never a
// concrete machine or stack.
package explore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/explore"
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
	// Bound is the most deviations from the engine's order per schedule.
	Bound int `yaml:"bound"`
	// Reduce turns sleep-set partial-order reduction on.
	Reduce bool `yaml:"reduce"`
	// Preempt lets the explorer also deschedule a thread at a scheduling
	// point until another thread of its process passes one (an OS
	// scheduler delaying it: sim.WithPreemption).
	Preempt bool `yaml:"preempt"`
	// MemoryPoints makes every memory operation of a thread a scheduling
	// point (sim.WithMemoryPoints).
	MemoryPoints bool `yaml:"memory_points"`
	// Schedule, if set, replays this one schedule (as printed) instead of
	// exploring.
	Schedule string `yaml:"schedule"`
	// MaxSchedules stops the exploration (0: none).
	MaxSchedules int `yaml:"max_schedules"`
}

// DefaultParams: Figure 2's instance, two yields per schedule.
func DefaultParams() Params {
	return Params{Program: "figure2", Procs: 2, Threads: 2, Bound: 2, Reduce: true, MaxSchedules: 20000}
}

func (p Params) validate() error {
	switch {
	case p.Program != "figure2" && p.Program != "figure3":
		return fmt.Errorf("program must be figure2 or figure3, got %q", p.Program)
	case p.Program == "figure2" && (p.Procs != 2 || p.Threads != 2):
		return errors.New("figure2 runs on 2 processes of 2 threads")
	case p.Procs < 1 || p.Procs > 8 || p.Threads < 1 || p.Threads > 4:
		return fmt.Errorf("procs must be 1 to 8 and threads 1 to 4, got %d and %d", p.Procs, p.Threads)
	case len(p.Schedule) > explore.MaxScheduleLen:
		return fmt.Errorf("schedule is %d characters long; a schedule has at most %d choices", len(p.Schedule), explore.MaxScheduleLen)
	case strings.Trim(p.Schedule, "0123456789abcdefghijklmnopqrstuvwxyz") != "":
		return fmt.Errorf("schedule %.40q: a schedule is the digits and letters 0-9a-z an exploration prints", p.Schedule)
	case p.Bound < 0 || p.Bound > 6 || p.MaxSchedules < 0:
		return fmt.Errorf("bound must be 0 to 6 and max_schedules not negative, got %d and %d", p.Bound, p.MaxSchedules)
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

// rank is what the explored programs use of a rank: MPI threads and
// communicators, and point-to-point messages.
type rank interface {
	stacks.Threaded
	stacks.Comm
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
	return stacks.As[rank](w, user, "message passing (stacks.Comm)")
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
	run := func(c sim.Chooser) error {
		eng := s.NewEngine(s.Seed)
		if s.Limits.MaxEvents == 0 {
			eng.SetLimits(sim.Limits{MaxEvents: 2_000_000})
		}
		rs, err := ranks(s, eng, params.Procs)
		if err != nil {
			setup = err
			return err
		}
		eng.Set(sim.WithChooser(c), sim.WithPreemption(params.Preempt), sim.WithMemoryPoints(params.MemoryPoints))
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
	}
	if params.Schedule != "" {
		c := explore.NewSchedule(params.Schedule)
		err := run(c)
		if setup != nil {
			return res, setup
		}
		if serr := c.Err(); serr != nil {
			field := s.Workload.ParamsField("workload") + ".schedule"
			return res, strictyaml.Errorf(s.File, strictyaml.Find(s.Workload.Params, "schedule"), field, "%v", serr)
		}
		note := fmt.Sprintf("%s: schedule %q:\n  %s", s.Series, params.Schedule, strings.Join(c.Steps(), "\n  "))
		if err != nil {
			note += "\n" + err.Error()
		}
		res.Notes = append(res.Notes, note)
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "bound", X: float64(params.Bound), Metric: "failing", Value: float64(min(1, countErr(err))), Unit: "count"})
		return res, nil
	}
	x := explore.Run(explore.Options{Bound: params.Bound, MaxSchedules: params.MaxSchedules, Reduce: params.Reduce}, func(p *explore.Path) error { return run(p) })
	if setup != nil {
		return res, setup
	}
	if x.Nondet != nil {
		return res, fmt.Errorf("%s: series %s: %w", s.File, s.Series, x.Nondet)
	}
	row := func(m string, v int) report.Row {
		return report.Row{Series: s.Series, XName: "bound", X: float64(params.Bound), Metric: m, Value: float64(v), Unit: "count"}
	}
	res.Rows = append(res.Rows, row("schedules", x.Schedules), row("pruned", x.Pruned), row("states", x.States), row("points", x.Points), row("failing", x.Failures))
	res.Notes = append(res.Notes, fmt.Sprintf("%s: %v", s.Series, x))
	if x.Err != nil {
		name := s.File
		if strings.HasPrefix(name, "builtin/") {
			name = s.Scenario
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%s: replay: simrun explore %s --series %s --schedule %s", s.Series, name, s.Series, explore.Printable(x.Shortest)))
	}
	return res, nil
}

func countErr(err error) int {
	if err != nil {
		return 1
	}
	return 0
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
			r.SpawnThread(p, "t1", func(p *sim.Proc) {
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
				r.SpawnThread(p, fmt.Sprintf("t%d", j), body(j))
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

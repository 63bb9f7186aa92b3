// Package commdup is the MPI_Comm_dup benchmark of papers/mpich2-threads.txt
// section 5.3.2, Figure 4: "we called MPI_Comm_dup several times in a loop
// and measured the average time for a single call", for a number of
// processes, with one thread per process (Single, Multi1: the stack's
// context_ids param picks the algorithm) or two threads per process each
// duplicating a different communicator (Multi2). Each process asks
// MPI_Init_thread for the level param (Multi1 asks for multiple with one
// thread: the multithreaded algorithm with its locks, as the paper
// measured it). Each thread frees every new communicator before its next
// MPI_Comm_dup (MPI_Comm_free), and every context id is checked to agree
// on every process.
//
// The paper does not say over what "the average time for a single call"
// is taken when a process has two threads. The average param chooses:
// process (the time from the start of a process's loop until its last
// thread has finished, divided by the calls of all its threads: the
// process's throughput of calls) or thread (each thread's own loop time
// divided by its own calls, averaged over the process's threads: what a
// thread timing its loop sees). With one thread the two are equal. Both
// report the slowest process.
//
// Layer: a workload: imports workloads, stacks, sim and report; never a
// concrete machine or stack.
package commdup

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// Name is the workload's name in scenarios.
const Name = "comm-dup"

// Metric is the average time of one MPI_Comm_dup.
const Metric = "dup_us"

// Params is workload.params.
type Params struct {
	// Procs are the numbers of processes (the x axis).
	Procs []int `yaml:"procs"`
	// Threads per process: 1 (Single, Multi1) or 2 (Multi2).
	Threads int `yaml:"threads"`
	// Dups is the number of MPI_Comm_dup calls each thread makes.
	Dups int `yaml:"dups"`
	// Level is the thread level each process asks MPI_Init_thread for:
	// single, funneled, serialized or multiple. Default: single with one
	// thread, multiple with two (the only level at which two threads may
	// call MPI at once).
	Level string `yaml:"level"`
	// Average is what the time per call averages over: process (default)
	// or thread (see the package comment).
	Average string `yaml:"average"`
}

// Averages (Params.Average).
const (
	AverageProcess = "process"
	AverageThread  = "thread"
)

// level is the level asked for.
func (p Params) level() stacks.ThreadLevel {
	for l := stacks.ThreadSingle; l <= stacks.ThreadMultiple; l++ {
		if l.String() == p.Level {
			return l
		}
	}
	if p.Threads > 1 {
		return stacks.ThreadMultiple
	}
	return stacks.ThreadSingle
}

// DefaultParams: Figure 4's loop on 2 to 16 processes (the SX-4 node has
// at most 32 CPUs).
func DefaultParams() Params {
	return Params{Procs: []int{2, 4, 8, 16}, Threads: 1, Dups: 10, Average: AverageProcess}
}

func (p Params) validate() error {
	switch {
	case len(p.Procs) == 0:
		return errors.New("procs must list at least one number of processes")
	case p.Threads != 1 && p.Threads != 2:
		return fmt.Errorf("threads must be 1 or 2, got %d", p.Threads)
	case p.Dups < 1 || p.Dups > 500:
		return fmt.Errorf("dups must be between 1 and 500, got %d", p.Dups)
	case p.Level != "" && p.level().String() != p.Level:
		return fmt.Errorf("level must be single, funneled, serialized or multiple, got %q", p.Level)
	case p.Average != AverageProcess && p.Average != AverageThread:
		return fmt.Errorf("average must be %s or %s, got %q", AverageProcess, AverageThread, p.Average)
	case p.Threads > 1 && p.level() != stacks.ThreadMultiple:
		return fmt.Errorf("level %s with %d threads: two threads calling MPI_Comm_dup at once need multiple", p.Level, p.Threads)
	}
	for i, n := range p.Procs {
		if n < 2 {
			return fmt.Errorf("procs[%d] must be at least 2, got %d", i, n)
		}
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

// ranks returns the world's ranks as MPI ranks with threads and
// communicators, or the missing interface.
func ranks(s workloads.Spec, eng *sim.Engine, procs int) ([]stacks.Threaded, error) {
	w, err := s.OpenWorld(eng, procs)
	if err != nil {
		return nil, err
	}
	return stacks.As[stacks.Threaded](w, "workload "+Name, "MPI threads and MPI_Comm_dup (stacks.Threaded)")
}

// Check validates a series without running it.
func Check(s workloads.Spec) error {
	params, err := parseParams(s)
	if err != nil {
		return err
	}
	_, err = ranks(s, sim.NewEngine(s.Seed), params.Procs[0])
	return err
}

// Run is the workloads.Runner: one engine per number of processes.
func Run(s workloads.Spec) (workloads.Result, error) {
	params, err := parseParams(s)
	if err != nil {
		return workloads.Result{}, err
	}
	var res workloads.Result
	for _, n := range params.Procs {
		eng := s.NewEngine(s.Seed)
		rs, err := ranks(s, eng, n)
		if err != nil {
			return res, err
		}
		var elapsed sim.Time
		fail := eng.Fail
		ids := make([][][]int, n)      // ids[rank][thread]
		loops := make([][]sim.Time, n) // loops[rank][thread]: the thread's loop time
		for i, r := range rs {
			ids[i] = make([][]int, params.Threads)
			loops[i] = make([]sim.Time, params.Threads)
			eng.Spawn(fmt.Sprintf("rank%d.t0", i), func(p *sim.Proc) {
				if _, err := r.InitThread(p, params.level()); err != nil {
					fail(err)
					return
				}
				parents := []stacks.Communicator{r.World()}
				if params.Threads > 1 {
					c, err := r.World().Dup(p)
					if err != nil {
						fail(err)
						return
					}
					parents = append(parents, c)
				}
				start := p.Now()
				loop := func(j int) func(p *sim.Proc) {
					return func(p *sim.Proc) {
						for k := 0; k < params.Dups; k++ {
							c, err := parents[j].Dup(p)
							if err != nil {
								fail(err)
								return
							}
							ids[i][j] = append(ids[i][j], c.ContextID())
							if err := c.Free(p); err != nil {
								fail(err)
								return
							}
						}
						elapsed = max(elapsed, p.Now()-start)
						loops[i][j] = p.Now() - start
					}
				}
				if params.Threads > 1 {
					r.SpawnThread(p, "t1", loop(1))
				}
				loop(0)(p)
			})
		}
		runErr := eng.Run()
		res.Events += eng.Events()
		res.SimTime += eng.Now()
		if runErr != nil {
			// A deadlock, a livelock or a limit (in events or simulated
			// time: the same on every machine) is the series' outcome; a
			// limit was reported as a deadlock before.
			kind, stuck := workloads.StuckKind(runErr)
			if !stuck {
				return res, fmt.Errorf("%s: series %s: %d processes: %w", s.File, s.Series, n, runErr)
			}
			res.Failures = append(res.Failures, workloads.Failure{Kind: kind, Detail: runErr.Error()})
			break
		}
		for i := range ids {
			for j := range ids[i] {
				for k, id := range ids[i][j] {
					if id != ids[0][j][k] {
						return res, fmt.Errorf("%s: series %s: dup %d of thread %d got context id %d on rank %d, %d on rank 0", s.File, s.Series, k, j, id, i, ids[0][j][k])
					}
				}
			}
		}
		avg := elapsed / sim.Time(params.Dups*params.Threads)
		if params.Average == AverageThread {
			avg = 0
			for _, ls := range loops {
				var sum sim.Time
				for _, l := range ls {
					sum += l
				}
				avg = max(avg, sum/sim.Time(params.Dups*params.Threads))
			}
		}
		res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: "procs", X: float64(n), Metric: Metric, Value: avg.Micros(), Unit: "us"})
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("%s: %d processes: %.1f us", s.Series, n, avg.Micros()))
		}
	}
	return res, nil
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/msgsim/msgsim/internal/inputfile"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads"
)

// shardFile is the file a shard run writes in its output directory.
const shardFile = "shard.json"

// shard is --shard I/N: run the series whose index is I modulo N (n == 0:
// every series, no sharding). Dealing the series round-robin spreads a
// scenario's big series (the 128-PE ones come last) over the shards.
type shard struct{ i, n int }

func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return shard{}, fmt.Errorf("%q: want I/N with 0 <= I < N (e.g. 0/4)", s)
	}
	return shard{i, n}, nil
}

// pick returns the specs of the shard (all of them without sharding).
func (sh shard) pick(sp []workloads.Spec) []workloads.Spec {
	if sh.n == 0 {
		return sp
	}
	var out []workloads.Spec
	for k := sh.i; k < len(sp); k += sh.n {
		out = append(out, sp[k])
	}
	return out
}

// shardDoc is shard.json: what a shard's series gave, to be merged.
type shardDoc struct {
	Scenario string        `json:"scenario"` // the FILE-or-NAME argument of simrun run
	Seed     uint64        `json:"seed"`
	Shard    int           `json:"shard"`
	Of       int           `json:"of"`
	Series   []shardSeries `json:"series"`
}

type shardSeries struct {
	Index    int                 `json:"index"` // in the scenario's series
	Name     string              `json:"name"`
	Rows     []report.Row        `json:"rows"`
	Failures []workloads.Failure `json:"failures"`
	Notes    []string            `json:"notes"`
	Events   uint64              `json:"events"`
	SimTime  sim.Time            `json:"sim_time"`
	Error    *shardErr           `json:"error,omitempty"`
	// Engines and RandUsed say whether the series' results depend on the
	// seed (seedIndependent), which the merged summary states.
	Engines  int64 `json:"engines"`
	RandUsed bool  `json:"rand_used"`
}

// shardErr is a series' run error as a shard recorded it: its kind
// (runner.FailureKind) and message, which is all the outputs use.
type shardErr struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *shardErr) Error() string { return e.Message }

// FailureKind is the kind the shard recorded (runner.FailureKind).
func (e *shardErr) FailureKind() string { return e.Kind }

// writeShard writes runs (the series of shard sh of scenario s, named arg
// on the command line) to dir/shard.json.
func writeShard(dir, arg string, s *scenarios.Scenario, sh shard, runs []seriesRun, wall time.Duration, stdout, stderr io.Writer) int {
	// No wall-clock value: a shard's file, too, is the same bytes for the
	// same scenario and seed (the wall time is printed only).
	doc := shardDoc{Scenario: arg, Seed: s.Seed, Shard: sh.i, Of: sh.n}
	for k, r := range runs {
		ss := shardSeries{Index: sh.i + k*sh.n, Name: r.spec.Series, Rows: r.res.Rows, Failures: r.res.Failures,
			Notes: r.res.Notes, Events: r.res.Events, SimTime: r.res.SimTime}
		if r.engines != nil {
			ss.Engines, ss.RandUsed = r.engines.Load(), r.randUsed.Load()
		}
		if r.err != nil {
			ss.Error = &shardErr{Kind: runner.FailureKind(r.err), Message: r.err.Error()}
		}
		doc.Series = append(doc.Series, ss)
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err == nil {
		err = mkdir(dir)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, shardFile), append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: writing the shard: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "shard %d/%d of %s: %d series in %.2fs of wall time\noutputs in %s (merge with: simrun merge --out DIR SHARD-DIR...)\n",
		sh.i, sh.n, s.Name, len(runs), wall.Seconds(), filepath.Join(dir, shardFile))
	return exitOK
}

// cmdMerge merges the shard.json of every shard of a run into the outputs a
// run without shards writes (byte-identical to them).
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	outDir := fs.String("out", "", "output directory (default results/<scenario-name>)")
	maxInput := inputfile.Flag(fs)
	pos, code, ok := parseFlags(fs, "merge", args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintf(stderr, "simrun merge: want the shards' output directories (or their shard.json files)\n")
		return exitUsage
	}
	docs := make([]shardDoc, len(pos))
	for k, p := range pos {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, shardFile)
		}
		b, err := inputfile.Read(p, *maxInput) // names p
		if err == nil {
			if err = json.Unmarshal(b, &docs[k]); err != nil {
				err = fmt.Errorf("%s: %w", p, err)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "simrun merge: %v\n", err)
			return exitUsage
		}
	}
	d0 := docs[0]
	sfs := flag.NewFlagSet("merge", flag.ContinueOnError)
	sfs.Uint64("seed", 0, "")
	sfs.Set("seed", strconv.FormatUint(d0.Seed, 10))
	s, sp, code := load(d0.Scenario, sfs, d0.Seed, -1, stderr)
	if s == nil {
		return code
	}
	runs, err := mergeShards(sp, docs, pos)
	if err != nil {
		fmt.Fprintf(stderr, "simrun merge: %v\n", err)
		return exitUsage
	}
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("results", s.Name)
	}
	v := judge(s, runs)
	summary, err := writeOutputs(dir, s, runs, v, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "simrun merge: %v\n", err)
		return exitFailed
	}
	io.WriteString(stdout, summary)
	fmt.Fprintf(stdout, "outputs in %s\n", dir)
	return v.code
}

// mergeShards puts the shards' series back in the scenario's order; every
// series must come from exactly one shard of the same run.
func mergeShards(sp []workloads.Spec, docs []shardDoc, names []string) ([]seriesRun, error) {
	runs := make([]seriesRun, len(sp))
	from := make([]string, len(sp))
	for k, d := range docs {
		if d.Scenario != docs[0].Scenario || d.Seed != docs[0].Seed || d.Of != docs[0].Of {
			return nil, fmt.Errorf("%s is shard %d/%d of %s (seed %d), %s is shard %d/%d of %s (seed %d): not the same run",
				names[k], d.Shard, d.Of, d.Scenario, d.Seed, names[0], docs[0].Shard, docs[0].Of, docs[0].Scenario, docs[0].Seed)
		}
		for _, ss := range d.Series {
			if ss.Index < 0 || ss.Index >= len(sp) || sp[ss.Index].Series != ss.Name {
				return nil, fmt.Errorf("%s: series %d %q is not in scenario %s", names[k], ss.Index, ss.Name, d.Scenario)
			}
			if from[ss.Index] != "" {
				return nil, fmt.Errorf("series %q is in both %s and %s", ss.Name, from[ss.Index], names[k])
			}
			from[ss.Index] = names[k]
			r := seriesRun{spec: sp[ss.Index], res: workloads.Result{Rows: ss.Rows, Failures: ss.Failures, Notes: ss.Notes, Events: ss.Events, SimTime: ss.SimTime}}
			if ss.Error != nil {
				r.err = ss.Error
			}
			r.engines, r.randUsed = new(atomic.Int64), new(atomic.Bool)
			r.engines.Store(ss.Engines)
			r.randUsed.Store(ss.RandUsed)
			runs[ss.Index] = r
		}
	}
	var missing []string
	for k, f := range from {
		if f == "" {
			missing = append(missing, fmt.Sprintf("%d %q", k, sp[k].Series))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("series missing (a shard not given?): %s", strings.Join(missing, ", "))
	}
	return runs, nil
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAllErrors: validate lists every problem of a file at once,
// each with file:line:column and the field's full path (series included),
// semantic checks after decoding too; run refuses the same file with the
// same errors (exit 2) and writes nothing. The cases are those of issue 13.
func TestValidateAllErrors(t *testing.T) {
	head := "machine: {name: sx4}\nstack: {name: mpich}\n"
	cases := []struct {
		name, yaml string
		want       []string // each line of stderr, in order, after "bad.yaml:"
	}{
		{"seven type errors", "name: x\nseed: x\nmachine:\n  name: sx4\n  params: {semop_us: a, cache_flush_us: b}\nstack:\n  name: mpich\n  params: {eager_bytes: c}\nworkload:\n  name: pingpong\n  params: {sizes: d}\nlimits: {max_events: e, max_sim_time_us: f}\n", []string{
			`2:7: field seed: expected a non-negative integer, got "x"`,
			`5:22: field machine.params.semop_us: expected a number, got "a"`,
			`5:41: field machine.params.cache_flush_us: expected a number, got "b"`,
			`8:25: field stack.params.eager_bytes: expected an integer, got "c"`,
			`11:19: field workload.params.sizes: expected a list, got "d"`,
			`12:22: field limits.max_events: expected a non-negative integer, got "e"`,
			`12:42: field limits.max_sim_time_us: expected a number, got "f"`,
		}},
		{"nan and inf", "name: x\nmachine:\n  name: sx4\n  params: {semop_us: .nan, cache_flush_us: .inf}\nstack: {name: mpich}\nworkload: {name: pingpong}\n", []string{
			`4:22: field machine.params.semop_us: must be a finite number, got NaN (sx4)`,
			`4:44: field machine.params.cache_flush_us: must be a finite number, got +Inf (sx4)`,
		}},
		{"machine, stack and workload at once", "name: x\nmachine:\n  name: sx4\n  params: {semop_us: abc}\nstack:\n  name: mpich\n  params: {device: ch_bogus}\nworkload:\n  name: pingpong\n  params: {sizes: hello}\n", []string{
			`4:22: field machine.params.semop_us: expected a number, got "abc"`,
			`7:20: field stack.params.device: must be`,
			`10:19: field workload.params.sizes: expected a list, got "hello"`,
		}},
		{"semop_us, device, lock and sizes", "name: x\nmachine:\n  name: sx4\n  params: {semop_us: -1}\nstack:\n  name: mpich\n  params: {device: ch_bogus, lock: spin}\nworkload:\n  name: pingpong\n  params: {sizes: [8, -3]}\n", []string{
			`4:22: field machine.params.semop_us: -1 us is outside the plausible range`,
			`7:20: field stack.params.device: must be "ch_shmem", "ch_lfshmem", "ch_t3d" or "ch3:sock", got "ch_bogus" (mpich)`,
			`7:36: field stack.params.lock: must be "sysv" or "tas", got "spin" (mpich)`,
			`10:23: field workload.params.sizes[1]: sizes[1] is negative (-3)`,
		}},
		{"unknown workload", "name: x\n" + head + "workload: {name: collective}\n", []string{
			`4:18: field workload.name: unknown workload "collective"`,
		}},
		{"pairing", "name: x\nmachine: {name: t3d}\nstack: {name: mpich, params: {device: ch_shmem}}\nworkload: {name: pingpong}\n", []string{
			`3:30: field stack.params: mpich ch_shmem cannot run on machine t3d`,
		}},
		{"workload ranges", "name: x\n" + head + "workload: {name: pingpong, params: {ranks: 1, repetitions: -5, sizes: [0, -3]}}\n", []string{
			`4:44: field workload.params.ranks: ranks must be at least 2, got 1`,
			`4:60: field workload.params.repetitions: repetitions must be at least 1, got -5`,
			`4:75: field workload.params.sizes[1]: sizes[1] is negative (-3)`,
		}},
		{"ranks the machine cannot hold", "name: x\n" + head + "workload: {name: pingpong, params: {ranks: 100000000}}\n", []string{
			`4:44: field workload.params.ranks: 100000000 ranks cannot run on this machine`,
		}},
		{"collective pes", "name: x\nmachine: {name: t3d}\nstack: {name: aclmpl}\nworkload: {name: onetoall, params: {pes: [1]}}\n", []string{
			`4:42: field workload.params.pes: pes must be between 2 and 4194304, got 1`,
		}},
		{"errors inside a series", "name: x\n" + head + "workload: {name: pingpong, params: {sizes: [0, 8]}}\nseries:\n  - name: a\n  - name: b\n  - name: c\n    machine:\n      params: {cache_kb: abc}\n    workload:\n      params: {repetitions: 0}\n", []string{
			`10:26: field series[2].machine.params.cache_kb: expected an integer, got "abc"`,
			`12:29: field series[2].workload.params.repetitions: repetitions must be at least 1, got 0`,
		}},
		{"four mistakes in one pass", "name: four\ncolour: blue\nmachine:\n  name: sic\nstack:\n  name: scampi\n  params:\n    slots: lots\nworkload:\n  name: pingpong\n  params:\n    repetitions: 1e12\n", []string{
			`2:1: field colour: unknown field "colour"`,
			`4:9: field machine.name: unknown machine "sic" (did you mean "sci"?)`,
			`8:12: field stack.params.slots: expected an integer, got "lots"`,
			`12:18: field workload.params.repetitions: series four would take about 1.1e+17 events`,
		}},
		{"unknown stack beside a machine's bad param", "name: x\nmachine: {name: sx4, params: {semop_us: a}}\nstack: {name: mpch}\nworkload: {name: pingpong}\n", []string{
			`2:41: field machine.params.semop_us: expected a number, got "a"`,
			`3:15: field stack.name: unknown stack "mpch" (did you mean "mpich"?)`,
		}},
		{"a derived param at the field written", "name: x\nmachine: {name: sci}\nstack: {name: aclmpl}\nworkload:\n  name: word-latency\n  params: {pes: [128]}\n", []string{
			`6:17: field workload.params.pes: 128 processes at procs_per_node 1 need 128 nodes; the 8x12 torus has 96 (sci): machine.params.torus_w, which you did not set, follows from pes`,
		}},
		{"over-long name", "name: " + strings.Repeat("a", 300) + "\n" + head + "workload: {name: pingpong}\n", []string{
			`1:7: field name: 300 characters long; at most 100`,
		}},
		{"over-long title", "name: x\ntitle: " + strings.Repeat("t", 5<<20) + "\n" + head + "workload: {name: pingpong}\n", []string{
			`2:8: field title: 5242880 characters long; at most 200`,
		}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := write(t, dir, "bad.yaml", c.yaml)
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			for _, cmd := range [][]string{{"validate", f}, {"run", f, "--out", out}} {
				code, _, errs := simrun(t, cmd...)
				lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
				if code != exitUsage || len(lines) != len(c.want) {
					t.Fatalf("%s: exit %d, want %d; %d lines, want %d:\n%s", cmd[0], code, exitUsage, len(lines), len(c.want), errs)
				}
				for i, w := range c.want {
					if !strings.HasPrefix(lines[i], f+":"+w) {
						t.Errorf("%s: line %d:\n got %s\nwant %s:%s", cmd[0], i+1, lines[i], f, w)
					}
					if len(lines[i]) > 2000 {
						t.Errorf("%s: line %d is %d bytes long (a value echoed whole?)", cmd[0], i+1, len(lines[i]))
					}
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("run created its output directory for a scenario that does not validate")
			}
		})
	}
}

// TestValidateErrorCap: a file with hundreds of errors lists the first
// strictyaml.MaxErrors and says the rest were left out.
func TestValidateErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nmachine: {name: sx4}\nstack: {name: mpich}\nworkload: {name: pingpong}\nreferences:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "  - {series: x, metric: m, x: a%d, value: 1}\n", i)
	}
	f := write(t, t.TempDir(), "many.yaml", b.String())
	code, _, errs := simrun(t, "validate", f)
	n := strings.Count(errs, "\n")
	if code != exitUsage || n < 50 || n > 60 || !strings.Contains(errs, "too many errors") {
		t.Errorf("exit %d, %d lines:\n%s", code, n, errs)
	}
}

// TestRunUnwritableOut: an output directory that cannot be created is bad
// input (exit 2), found before the run.
func TestRunUnwritableOut(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "file", "")
	code, out, errs := simrun(t, "run", "litmus-mp", "--quiet", "--out", filepath.Join(file, "sub"))
	if code != exitUsage || out != "" || !strings.Contains(errs, "--out") {
		t.Errorf("exit %d, want %d; stdout %q; stderr %s", code, exitUsage, out, errs)
	}
}

// TestFigureInSubdirectory: a figure whose file names a directory inside
// the output one is drawn there, never dropped.
func TestFigureInSubdirectory(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "sub.yaml", `name: sub
title: a figure in a subdirectory
seed: 1
machine: {name: sx4}
stack: {name: mpich}
workload: {name: pingpong, params: {sizes: [8, 64], repetitions: 1}}
series:
  - name: a
figures:
  - file: sub/dir/fig
    panels:
      - {metric: latency_us, x: bytes, series: [a]}
`)
	out := filepath.Join(dir, "out")
	code, stdout, errs := simrun(t, "run", f, "--quiet", "--out", out)
	if code != exitOK || strings.Contains(errs, "not drawn") {
		t.Fatalf("exit %d; stderr %s", code, errs)
	}
	for _, name := range []string{"fig.png", "fig.svg"} {
		if _, err := os.Stat(filepath.Join(out, "sub", "dir", name)); err != nil {
			t.Errorf("%v\n%s", err, stdout)
		}
	}
}

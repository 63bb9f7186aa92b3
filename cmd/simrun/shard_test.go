package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShardsMergeByteIdentical: a scenario's outputs are the same bytes run
// serially (-j 1), in parallel (default -j: TestGoldenScenarios' run), and
// cut into 2 or 3 shards merged by simrun merge (shards given in any
// order).
func TestShardsMergeByteIdentical(t *testing.T) {
	const name = "armci-fig4"
	files := []string{"results.csv", "results.json", "summary.txt"}
	base := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		out := filepath.Join(base, dir)
		code, stdout, stderr := simrun(t, append([]string{"run", name, "--quiet", "--out", out}, args...)...)
		if code != exitOK {
			t.Fatalf("run %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		return out
	}
	serial := run("serial", "-j", "1")
	r := runBuiltin(t, name)
	if r.code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	parallel := r.dir
	same := func(what, dir string) {
		t.Helper()
		for _, f := range files {
			if a, b := read(t, filepath.Join(serial, f)), read(t, filepath.Join(dir, f)); string(a) != string(b) {
				t.Errorf("%s: %s differs from the serial run's", what, f)
			}
		}
	}
	same("parallel", parallel)
	for _, n := range []string{"2", "3"} {
		var shards []string
		for i := range 3 {
			if n == "2" && i == 2 {
				break
			}
			sh := string(rune('0'+i)) + "/" + n
			shards = append([]string{run("shard"+n+"-"+string(rune('0'+i)), "--shard", sh)}, shards...)
		}
		out := filepath.Join(base, "merged"+n)
		code, stdout, stderr := simrun(t, append([]string{"merge", "--out", out}, shards...)...)
		if code != exitOK {
			t.Fatalf("merge of %s shards: exit %d\n%s\n%s", n, code, stdout, stderr)
		}
		same(n+" shards merged", out)
		if n == "3" {
			code, _, stderr := simrun(t, "merge", "--out", filepath.Join(base, "partial"), shards[0], shards[1])
			if code != exitUsage || !strings.Contains(stderr, "series missing") {
				t.Errorf("merge without a shard: exit %d, stderr %q; want 2 naming the missing series", code, stderr)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want shard
		ok   bool
	}{{"", shard{}, true}, {"0/1", shard{0, 1}, true}, {"3/4", shard{3, 4}, true},
		{"4/4", shard{}, false}, {"-1/2", shard{}, false}, {"1", shard{}, false}, {"a/b", shard{}, false}, {"0/0", shard{}, false}} {
		got, err := parseShard(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseShard(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestParallelPointsByteIdentical: the sweep points of a collective series
// run in parallel on free tokens (-j 3) and give the same bytes as one at a
// time (-j 1).
func TestParallelPointsByteIdentical(t *testing.T) {
	for _, name := range []string{"sx4-collectives", "t3d-table2"} {
		var got [2]string
		for k, j := range []string{"1", "3"} {
			dir := t.TempDir()
			code, stdout, stderr := simrun(t, "run", name, "--quiet", "-j", j, "--out", dir)
			if code != exitOK {
				t.Fatalf("%s -j %s: exit %d\n%s\n%s", name, j, code, stdout, stderr)
			}
			for _, f := range []string{"results.csv", "results.json", "summary.txt"} {
				got[k] += string(read(t, filepath.Join(dir, f)))
			}
		}
		if got[0] != got[1] {
			t.Errorf("%s: -j 3 outputs differ from -j 1", name)
		}
	}
}

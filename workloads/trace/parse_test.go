package trace

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// parse4 parses lines as rank 0's file of a trace of 4 ranks whose other
// ranks do nothing (collectives are checked across ranks, so the table
// parses one rank's file alone).
func parseOne(lines string) ([]Op, error) {
	var l errList
	dt := dtByte
	ops := parseRank(&l, "r0.txt", []byte(lines), 0, 4, &dt)
	return ops, l.err()
}

// TestParseActions: every action SimGrid 3.32 writes, as it writes it,
// parses to the op it means (sizes in bytes of the named datatype).
func TestParseActions(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Op
	}{
		{"0 init", Op{Kind: Init}},
		{"0 finalize", Op{Kind: Finalize}},
		{"0 comm_size 4", Op{Kind: CommSize, Size: 4}},
		{"0 comm_split", Op{Kind: CommSplit}},
		{"0 comm_dup", Op{Kind: CommDup}},
		{"0 send 1 7 10 0", Op{Kind: Send, Peer: 1, Tag: 7, Bytes: 80}},
		{"0 isend 1 3 5 1", Op{Kind: Isend, Peer: 1, Tag: 3, Bytes: 20}},
		{"0 recv 3 9 1 0", Op{Kind: Recv, Peer: 3, Tag: 9, Bytes: 8}},
		{"0 recv -333 -444 2 1", Op{Kind: Recv, Peer: AnySource, Tag: AnyTag, Bytes: 8}},
		{"0 irecv 3 4 3 2", Op{Kind: Irecv, Peer: 3, Tag: 4, Bytes: 3}},
		{"0 send 2 0 100", Op{Kind: Send, Peer: 2, Bytes: 100}},
		{"0 sendRecv 3 1 3 1 1 1", Op{Kind: SendRecv, Peer: 1, Src: 1, Bytes: 12, RecvBytes: 12}},
		{"0 test 3 0 3", Op{Kind: Test, Src: 3, Peer: 0, Tag: 3}},
		{"0 wait 0 1 4", Op{Kind: Wait, Src: 0, Peer: 1, Tag: 4}},
		{"0 waitall 2", Op{Kind: WaitAll, Size: 2}},
		{"0 barrier", Op{Kind: Barrier}},
		{"0 bcast 4 1 0 ", Op{Kind: Bcast, Peer: 1, Bytes: 32}},
		{"0 reduce 4 0 2 0 ", Op{Kind: Reduce, Peer: 2, Bytes: 32}},
		{"0 allreduce 3 0 0 ", Op{Kind: Allreduce, Bytes: 24}},
		{"0 alltoall 2 2 0 0", Op{Kind: Alltoall, Bytes: 16, RecvBytes: 16}},
		{"0 alltoallv 11 2 3 4 2 11 2 3 4 2 0 0", Op{Kind: Alltoallv, Counts: []int{16, 24, 32, 16}, RecvCounts: []int{16, 24, 32, 16}}},
		{"0 gather 2 2 0 0 0", Op{Kind: Gather, Bytes: 16, RecvBytes: 16}},
		{"0 gatherv 2 0 0 0 0 1 0 0", Op{Kind: Gatherv, Peer: 1, Bytes: 16, RecvCounts: []int{0, 0, 0, 0}}},
		{"0 scatter 2 2 0 0 0", Op{Kind: Scatter, Bytes: 16, RecvBytes: 16}},
		{"0 scatterv 2 3 4 5 2 0 0 0", Op{Kind: Scatterv, Counts: []int{16, 24, 32, 40}, RecvBytes: 16}},
		{"0 allgather 2 2 0 0", Op{Kind: Allgather, Bytes: 16, RecvBytes: 16}},
		{"0 allgatherv 2 2 3 4 5 0 0", Op{Kind: Allgatherv, Bytes: 16, RecvCounts: []int{16, 24, 32, 40}}},
		{"0 reducescatter 2 3 4 5 0 0", Op{Kind: ReduceScatter, RecvCounts: []int{16, 24, 32, 40}}},
		{"0 scan 2 0 0 ", Op{Kind: Scan, Bytes: 16}},
		{"0 exscan 2 0 0 ", Op{Kind: Exscan, Bytes: 16}},
		{"0 compute 27.5044", Op{Kind: Compute, Flops: 27.5044}},
		{"0 sleep 0.5", Op{Kind: Sleep, Seconds: 0.5}},
	} {
		ops, err := parseOne(tc.line)
		if err != nil || len(ops) != 1 || !ops[0].Same(tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.line, ops, err, tc.want)
		}
	}
}

// TestParseDefaultDatatype: a trace whose init has an argument counts in
// doubles, otherwise in bytes.
func TestParseDefaultDatatype(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{{"0 init\n0 send 1 0 10", 10}, {"0 init 1\n0 send 1 0 10", 80}} {
		ops, err := parseOne(tc.src)
		if err != nil || ops[1].Bytes != tc.want {
			t.Errorf("%q: %v, %v, want %d bytes", tc.src, ops, err, tc.want)
		}
	}
}

// malformed are 20 broken traces (rank 0's file) and what their error
// must say, at line:col.
var malformed = []struct{ src, want string }{
	{"0 frobnicate 1", "r0.txt:1:3: unknown action \"frobnicate\""},
	{"0 send 1 0", "r0.txt:1:11: action send: 2 arguments, at least 3"},
	{"0 send 9 0 1", "r0.txt:1:8: action send: destination must be a rank from 0 to 3, got 9"},
	{"0 send 1 x 1", "r0.txt:1:10: action send: tag must be an integer"},
	{"0 send 1 0 -5", "r0.txt:1:12: action send: count must be between"},
	{"0 send 1 0 5 99", "r0.txt:1:14: action send: datatype 99 is not one of MPI's predefined"},
	{"0 send 1 0 5 0 0", "r0.txt:1:16: action send: 5 arguments, at most 4"},
	{"1 send 1 0 5", "r0.txt:1:1: the line's rank is \"1\""},
	{"send 1 0 5", "r0.txt:1:1: the line's rank is \"send\""},
	{"0", "r0.txt:1:1: a line is RANK ACTION ARGS"},
	{"0 compute -1", "r0.txt:1:11: action compute: flops must be a non-negative number"},
	{"0 compute NaN", "r0.txt:1:11: action compute: flops must be a non-negative number"},
	{"0 sleep", "r0.txt:1:8: action sleep: 0 arguments, at least 1"},
	{"0 bcast 4 7", "r0.txt:1:11: action bcast: root must be a rank from 0 to 3, got 7"},
	{"0 alltoallv 11 2 3 4 2 11 2 3 4", "action alltoallv: 9 arguments, at least 10"},
	{"0 alltoallv 12 2 3 4 2 11 2 3 4 2 0 0", "r0.txt:1:13: action alltoallv: send total 12 is not the sum"},
	{"0 wait 1 2 0", "r0.txt:1:8: action wait: the request (source 1, destination 2) is not rank 0's"},
	{"0 barrier 1", "r0.txt:1:11: action barrier: 1 arguments, at most 0"},
	{"0 send 1 0 200000000 0", "action send: 200000000 elements of 8 bytes is more than"},
	{"0 waitall x", "r0.txt:1:11: action waitall: count must be an integer"},
}

// TestParseMalformed: each broken line is an error at its line and
// column naming the action.
func TestParseMalformed(t *testing.T) {
	if len(malformed) < 20 {
		t.Fatalf("%d malformed traces, want 20", len(malformed))
	}
	for _, tc := range malformed {
		_, err := parseOne(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.src, err, tc.want)
		}
	}
}

// TestParseAllErrorsAtOnce: every bad line of every rank is reported, not
// only the first.
func TestParseAllErrorsAtOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(dir+"/"+name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("idx.txt", "r0.txt\nr1.txt\n")
	write("r0.txt", "0 init\n0 send 5 0 1\n0 bogus\n")
	write("r1.txt", "1 init\n1 recv 0 0 x\n")
	_, err := ParseIndex(os.ReadFile, dir+"/idx.txt")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"r0.txt:2:8: action send", "r0.txt:3:3: unknown action", "r1.txt:2:12: action recv"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestParseCrossRank: collectives that do not match across ranks, and a
// wait on a request never posted, are located errors.
func TestParseCrossRank(t *testing.T) {
	for _, tc := range []struct {
		r0, r1, want string
	}{
		{"0 bcast 4 0", "1 barrier", "r1.txt:1:3: action barrier: rank 1's collective number 1 is barrier, rank 0's is bcast"},
		{"0 bcast 4 0", "1 bcast 4 1", "r1.txt:1:3: action bcast: rank 1's root is 1"},
		{"0 allreduce 4 0 0", "1 allreduce 3 0 0", "r1.txt:1:3: action allreduce: rank 1's 24 bytes differ from rank 0's 32 bytes"},
		{"0 barrier\n0 barrier", "1 barrier", "rank 1 calls 1 collectives, rank 0 calls 2"},
		{"0 wait 0 1 5", "1 init", "r0.txt:1:3: action wait: rank 0 posted no isend or irecv with source 0, destination 1 and tag 5"},
		{"0 gather 2 2 0 0 0", "1 gather 3 2 0 0 0", "r1.txt:1:3: action gather: rank 1 sends 24 bytes, the root (rank 0) receives 16"},
	} {
		_, err := parseRanks("idx.txt", []string{"r0.txt", "r1.txt"}, [][]byte{[]byte(tc.r0), []byte(tc.r1)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q / %q: error %v, want %q", tc.r0, tc.r1, err, tc.want)
		}
	}
}

// TestParseIndexPaths: an index's relative paths resolve against its own
// directory, including the "_files" directory smpirun names from its own
// working directory; a missing file is an error at the index's line.
func TestParseIndexPaths(t *testing.T) {
	p, err := ParseIndex(os.ReadFile, "testdata/all4/all.txt")
	if err != nil {
		t.Fatal(err)
	}
	if p.Size() != 4 || len(p.Ranks[0]) == 0 {
		t.Fatalf("%d ranks", p.Size())
	}
	seen := map[Kind]bool{}
	for _, ops := range p.Ranks {
		for _, o := range ops {
			seen[o.Kind] = true
		}
	}
	for _, k := range []Kind{Init, Finalize, Send, Isend, Recv, Irecv, Wait, WaitAll, Test, Barrier, Bcast, Reduce, Allreduce, Alltoall, Alltoallv, Gather, Gatherv, Allgather, Allgatherv, Scatter, Scatterv, ReduceScatter, Compute} {
		if !seen[k] {
			t.Errorf("the traced program has no %s", k)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/idx.txt", []byte("nowhere/r0.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseIndex(os.ReadFile, dir+"/idx.txt")
	if err == nil || !strings.Contains(err.Error(), "idx.txt:1:1: rank 0's file nowhere/r0.txt") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzParse: no input makes the parser panic or hang; whatever it accepts
// it accepts whole (every op has a position).
func FuzzParse(f *testing.F) {
	f.Add("0 init\n0 send 1 0 8 0\n0 finalize\n", "1 init\n1 recv 0 0 8 0\n1 finalize\n")
	f.Add("0 alltoallv 3 1 2 3 1 2 0 0", "1 alltoallv 3 2 1 3 2 1 0 0")
	f.Add("0 bcast 4 1 0 \n0 compute 1e3", "1 bcast 4 1 0 \n1 sleep 0.1")
	f.Add("0 isend 1 3 5 1\n0 wait 0 1 3", "1 irecv 0 3 5 1\n1 waitall 1")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, err := parseRanks("idx", []string{"a", "b"}, [][]byte{[]byte(a), []byte(b)})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, ops := range p.Ranks {
			for _, o := range ops {
				if o.At.Line == 0 || o.Bytes < 0 || o.RecvBytes < 0 {
					t.Fatal(fmt.Sprint("bad op ", o))
				}
			}
		}
	})
}

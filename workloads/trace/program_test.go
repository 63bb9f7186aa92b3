package trace

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func yamlNode(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestProgramRingEqualsTrace: the hand-written ring compiles to the op
// stream of the same ring traced, op for op.
func TestProgramRingEqualsTrace(t *testing.T) {
	src, err := os.ReadFile("testdata/ring.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := CompileProgram("testdata/ring.yaml", yamlNode(t, string(src)), 4)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ParseIndex(os.ReadFile, "testdata/ring4/ring.txt")
	if err != nil {
		t.Fatal(err)
	}
	if prog.Size() != tr.Size() {
		t.Fatalf("%d ranks, trace %d", prog.Size(), tr.Size())
	}
	for r := range tr.Ranks {
		if len(prog.Ranks[r]) != len(tr.Ranks[r]) {
			t.Fatalf("rank %d: %d ops, trace %d", r, len(prog.Ranks[r]), len(tr.Ranks[r]))
		}
		for i, o := range tr.Ranks[r] {
			if !prog.Ranks[r][i].Same(o) {
				t.Errorf("rank %d op %d: program %v (%s), trace %v (%s)", r, i, prog.Ranks[r][i], prog.Ranks[r][i].At, o, o.At)
			}
		}
	}
}

// Patterns in a few lines each.
const (
	halo2D = `
- repeat: 3
  do:
    - irecv: {from: "(rank + size - 1) % size", bytes: 2048, tag: 1}
    - irecv: {from: "(rank + 1) % size", bytes: 2048, tag: 2}
    - irecv: {from: "(rank + size - sqrt(size)) % size", bytes: 2048, tag: 3}
    - irecv: {from: "(rank + sqrt(size)) % size", bytes: 2048, tag: 4}
    - isend: {to: "(rank + 1) % size", bytes: 2048, tag: 1}
    - isend: {to: "(rank + size - 1) % size", bytes: 2048, tag: 2}
    - isend: {to: "(rank + sqrt(size)) % size", bytes: 2048, tag: 3}
    - isend: {to: "(rank + size - sqrt(size)) % size", bytes: 2048, tag: 4}
    - waitall:
    - compute: {flops: 1e6}
    - allreduce: {bytes: 8}
`
	butterfly = `
- repeat: log2(size)
  var: k
  do:
    - sendrecv: {to: "rank ^ (1 << k)", from: "rank ^ (1 << k)", bytes: 4096}
`
)

// TestProgramPatterns: a 2D halo exchange and a butterfly compile to the
// ops they mean.
func TestProgramPatterns(t *testing.T) {
	p, err := CompileProgram("halo.yaml", yamlNode(t, halo2D), 16)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Ranks[5]); n != 3*11 {
		t.Errorf("halo: rank 5 has %d ops, want 33", n)
	}
	if o := p.Ranks[5][2]; o.Kind != Irecv || o.Peer != 1 || o.Tag != 3 {
		t.Errorf("halo: rank 5's third op is %v, want irecv from 1 tag 3", o)
	}
	b, err := CompileProgram("bfly.yaml", yamlNode(t, butterfly), 8)
	if err != nil {
		t.Fatal(err)
	}
	var peers []int
	for _, o := range b.Ranks[3] {
		peers = append(peers, o.Peer)
	}
	if len(peers) != 3 || peers[0] != 2 || peers[1] != 1 || peers[2] != 7 {
		t.Errorf("butterfly: rank 3's peers %v, want [2 1 7]", peers)
	}
}

// TestProgramErrors: mistakes are errors at their line and column.
func TestProgramErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"- sned: {to: 1, bytes: 8}", "p.yaml:1:3: unknown op \"sned\""},
		{"- send: {to: 1}", "p.yaml:1:9: action send: missing arg bytes"},
		{"- send: {to: 1, bytes: 8, colour: red}", "p.yaml:1:27: action send: unknown arg \"colour\""},
		{"- send: {to: \"rank +\", bytes: 8}", "p.yaml:1:21: to: expression ends"},
		{"- send: {to: rank + 9, bytes: 8}", "p.yaml:1:14: action send: to \"rank + 9\" is 9 on rank 0, must be between 0 and 3"},
		{"- send: {to: nope, bytes: 8}", "p.yaml:1:14: to \"nope\" on rank 0: unknown name \"nope\""},
		{"- repeat: 2\n  do: [barrier: ]\n  send: {to: 1, bytes: 1}", "a loop is repeat: COUNT"},
		{"- compute: {flops: -1}", "flops must be a non-negative number"},
		{"- bcast: {bytes: rank}", "rank 1's 1 bytes differ from rank 0's 0 bytes"},
	} {
		_, err := CompileProgram("p.yaml", yamlNode(t, tc.src), 4)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}

// FuzzProgram: no program text makes the compiler panic or hang.
func FuzzProgram(f *testing.F) {
	f.Add("- send: {to: \"(rank+1) % size\", bytes: 8}\n- recv: {from: \"(rank+size-1)%size\", bytes: 8}")
	f.Add(butterfly)
	f.Add(halo2D)
	f.Add("- repeat: \"1 << 40\"\n  do: [barrier: ]")
	f.Add("- if: rank == 0 && !(size > 2 || 1/0)\n  compute: {flops: 1e9}")
	f.Fuzz(func(t *testing.T, src string) {
		var n yaml.Node
		if yaml.Unmarshal([]byte(src), &n) != nil {
			return
		}
		if n.Kind == 0 {
			return
		}
		p, err := CompileProgram("f.yaml", &n, 4)
		if err == nil && p.Size() != 4 {
			t.Fatalf("%d ranks", p.Size())
		}
	})
}

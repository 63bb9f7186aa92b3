package litmus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinFiles: every embedded built-in parses, and its name is its
// file name.
func TestBuiltinFiles(t *testing.T) {
	for _, n := range builtinOrder() {
		data, err := builtinFS.ReadFile("builtin/" + n + ".litmus")
		if err != nil {
			t.Fatal(err)
		}
		tt, err := Parse(n+".litmus", data)
		if err != nil {
			t.Fatal(err)
		}
		if tt.Name != n {
			t.Errorf("%s.litmus is named %s", n, tt.Name)
		}
	}
}

func parseFile(t *testing.T, file string) Test {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// TestParseX86 checks what the X86 syntax becomes.
func TestParseX86(t *testing.T) {
	for _, c := range []struct{ file, prog, cond string }{
		{"SB.litmus", "P0: x=1; EAX=y | P1: y=1; EAX=x", `0:EAX=0 /\ 1:EAX=0`},
		{"SB+rfi-pos.litmus", "P0: x=1; EAX=x; EBX=y | P1: y=1; EAX=y; EBX=x", `0:EAX=1 /\ 0:EBX=0 /\ 1:EAX=1 /\ 1:EBX=0`},
		{"R+mfences.litmus", "P0: x=1; fence; y=1 | P1: y=2; fence; EAX=x", `y=2 /\ 1:EAX=0`},
		{"SB+xchgs.litmus", "P0: EAX=swap(x,EAX); EBX=y | P1: EAX=swap(y,EAX); EBX=x", `0:EBX=0 /\ 1:EBX=0`},
		{"Counter+lock.litmus", "P0: add(c,1); EAX=add(c,EAX) | P1: add(c,1)", `c=3`},
		{"MP+wmb+rmb.litmus", "P0: x=1; wfence; y=1 | P1: r0=y; rfence; r1=x", `1:r0=1 /\ 1:r1=0`},
		{"MP+rel+acq.litmus", "P0: x=1; wfence; y=1 | P1: r0=y; rfence; r1=x", `1:r0=1 /\ 1:r1=0`},
		{"SB+xchg.litmus", "P0: r2=swap(x,1); r0=y | P1: r3=swap(y,1); r1=x", `0:r0=0 /\ 1:r1=0`},
		{"SB+lock-cmpxchgs.litmus", "P0: EAX=cas(x,EAX,ECX); EBX=y | P1: EAX=cas(y,EAX,ECX); EBX=x", `0:EBX=0 /\ 1:EBX=0`},
		{"MP+ctrl.litmus", "P0: x=1; y=1 | P1: r0=y; if r0=1: r1=x; if r0!=1: r1=2", `1:r0=1 /\ 1:r1=0`},
		{"LB+ctrls.litmus", "P0: r0=x; if r0!=0: y=1 | P1: r1=y; if r1=1: x=1", `0:r0=1 /\ 1:r1=1`},
		{"CAS-race.litmus", "P0: r0=cas(x,0,1) | P1: r1=cas(x,0,2)", `1:r1=0 \/ ~x=1`},
	} {
		tt := parseFile(t, filepath.Join("testdata", c.file))
		if got := strings.Join(tt.Program(), " | "); got != c.prog {
			t.Errorf("%s: program %q, want %q", c.file, got, c.prog)
		}
		if got := tt.CondString(); got != c.cond {
			t.Errorf("%s: condition %q, want %q", c.file, got, c.cond)
		}
	}
	tt := parseFile(t, filepath.Join("testdata", "Counter+lock.litmus"))
	if tt.Cond.Quant != Forall || !tt.FinalMem || tt.Regs[0].Init != 1 || tt.Doc == "" {
		t.Errorf("Counter+lock: %+v", tt)
	}
}

// TestParseConditions covers the connectives and quantifiers.
func TestParseConditions(t *testing.T) {
	head := "X86 T\n{ }\n P0 | P1 ;\n MOV [x],$1 | MOV EAX,[x] ;\n"
	for _, c := range []struct {
		cond, want string
		q          Quant
		regs, locs []uint64
		holds      bool
	}{
		{`exists (1:EAX=1)`, `1:EAX=1`, Exists, []uint64{1}, []uint64{1}, true},
		{`~exists (1:EAX=1 /\ x=1)`, `1:EAX=1 /\ x=1`, NotExists, []uint64{1}, []uint64{0}, false},
		{`forall (1:EAX=0 \/ 1:EAX=1)`, `1:EAX=0 \/ 1:EAX=1`, Forall, []uint64{1}, []uint64{1}, true},
		{`exists ~(1:EAX=1) /\ [x]=1`, `~1:EAX=1 /\ x=1`, Exists, []uint64{0}, []uint64{1}, true},
		{`exists (1:EAX=1 \/ x=0) /\ true`, `(1:EAX=1 \/ x=0) /\ true`, Exists, []uint64{0}, []uint64{1}, false},
		{"exists\n(1:EAX=1\n /\\ x=1) (* comment *)", `1:EAX=1 /\ x=1`, Exists, []uint64{1}, []uint64{1}, true},
	} {
		tt, err := Parse("t.litmus", []byte(head+c.cond))
		if err != nil {
			t.Errorf("%s: %v", c.cond, err)
			continue
		}
		if got := tt.CondString(); got != c.want || tt.Cond.Quant != c.q {
			t.Errorf("%s: got %s %q", c.cond, tt.Cond.Quant, got)
		}
		if got := tt.Cond.Prop.Eval(c.regs, c.locs); got != c.holds {
			t.Errorf("%s on %v %v: %v", c.cond, c.regs, c.locs, got)
		}
	}
}

// TestParseErrors: each error names file:line:column and what is wrong.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "t.litmus:1:1: empty file"},
		{"PPC T\n{}\n", `t.litmus:1:1: architecture "PPC" is not supported`},
		{"X86\n", "t.litmus:1:1: header"},
		{"X86 T\n\"unterminated\n", "t.litmus:2:1: unterminated quoted description"},
		{"X86 T\nfoo bar\n{}\n", `t.litmus:2:1: want a key=value line`},
		{"X86 T\n{ x=0;\n", "t.litmus:2:1: initial state block '{' is not closed"},
		{"X86 T\n{ x=abc; }\n", `t.litmus:2:5: value "abc"`},
		{"X86 T\n{}\n P0 | P1\n", "t.litmus:3:9: program row must end with ';'"},
		{"X86 T\n{}\n P0 | P2 ;\n", `t.litmus:3:7: program header: want P1, got "P2"`},
		{"X86 T\n{}\n P0 ;\n FOO [x] ;\nexists (x=1)", `t.litmus:4:2: unsupported instruction "FOO"`},
		{"X86 T\n{}\n P0 ;\n MOV [x],[y] ;\nexists (x=1)", `t.litmus:4:2: unsupported operands for MOV`},
		{"X86 T\n{}\n P0 ;\n ADD [x],$1 ;\nexists (x=1)", `t.litmus:4:2: ADD to memory is atomic only with LOCK`},
		{"X86 T\n{}\n P0 | P1 ;\n MOV [x],$1 ;\nexists (x=1)", "t.litmus:4:2: program row has 1 column(s), the header 2"},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\n", "t.litmus:5:1: missing the final condition"},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nexists (x=1", `t.litmus:5:12: want ")", got "end of file"`},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nexists (x=1) junk", `t.litmus:5:14: unexpected "junk"`},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nexists (3:EAX=1)", "t.litmus:5:11: register 3:EAX names thread 3"},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nexists (x=1 & y)", `t.litmus:5:13: unexpected character "&"`},
		{"C T\n{}\nP0(int *x) {\n  WRITE_ONCE(*x, 1)\n}\nexists (x=1)", "t.litmus:4:3: missing ';'"},
		{"C T\n{}\nP0(int *x) {\n  foo(x);\n}\nexists (x=1)", `t.litmus:4:3: unsupported statement "foo(x)"`},
		{"C T\n{}\nP0(int *x) {\n  WRITE_ONCE(*x, r9);\n}\nexists (x=1)", `t.litmus:4:3: "r9" is neither an integer nor a register of P0`},
		{"C T\n{}\nP1(int *x) {\n}\nexists (x=1)", "t.litmus:3:1: threads must be P0, P1, ... in order: want P0"},
		{"C T\n{}\nP0(int *x) {\n  WRITE_ONCE(*x, 1);\n", "t.litmus:3:1: P0: '{' is not closed by '}'"},
		{"X86 T\n{}\n P0 ;\n CMPXCHG [x],EBX ;\nexists (x=1)", "t.litmus:4:2: CMPXCHG to memory is atomic only with LOCK"},
		{"X86 T\n{}\n P0 ;\n LOCK CMPXCHG [x],$1 ;\nexists (x=1)", "t.litmus:4:2: unsupported operands for CMPXCHG"},
		{"C T\n{}\nP0(int *x) {\n  int r0 = cmpxchg(x, 0);\n}\nexists (x=1)", "t.litmus:4:3: cmpxchg takes 3 arguments"},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r1 == 1) WRITE_ONCE(*x, 1);\n}\nexists (x=1)", `t.litmus:5:7: condition "r1 == 1": "r1" is not a register of P0`},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r0 < 1) WRITE_ONCE(*x, 1);\n}\nexists (x=1)", `t.litmus:5:7: condition "r0 < 1": want REG == V`},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r0 == 1) { if (r0) WRITE_ONCE(*x, 1); }\n}\nexists (x=1)", "t.litmus:5:18: an if inside an if is not supported"},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r0 == 1 { WRITE_ONCE(*x, 1); }\n}\nexists (x=1)", "t.litmus:5:6: '(' is not closed by ')'"},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r0 == 1) { WRITE_ONCE(*x, 1) }\n}\nexists (x=1)", "t.litmus:5:18: missing ';'"},
		{"C T\n{}\nP0(int *x) {\n  int r0;\n  if (r0 == 1)\n}\nexists (x=1)", "if without a statement"},
		{"X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nfilter (x=)\nexists (x=1)", "t.litmus:5:"},
	} {
		_, err := Parse("t.litmus", []byte(c.src))
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

// FuzzParse: no input makes Parse panic, and every test it accepts prints
// and evaluates.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.litmus"))
	hostile, _ := filepath.Glob(filepath.Join("testdata", "hostile", "*.litmus")) // cmd/simrun's TestHostileInputs runs them
	for _, file := range append(files, hostile...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, n := range builtinOrder() {
		data, _ := builtinFS.ReadFile("builtin/" + n + ".litmus")
		f.Add(data)
	}
	f.Add([]byte("X86 T\n{ 0:EAX=1; }\n P0 ;\n LOCK XADD [x],EAX ;\nexists ~(0:EAX=1 \\/ (x=1))"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tt, err := Parse("fuzz.litmus", data)
		if err != nil {
			return
		}
		_ = tt.Program()
		_ = tt.CondString()
		tt.Cond.Prop.Eval(make([]uint64, len(tt.Regs)), make([]uint64, len(tt.Locs)))
		back, err := Parse("format.litmus", []byte(Format(tt)))
		if err != nil {
			t.Fatalf("Format of an accepted test does not parse: %v\n%s", err, Format(tt))
		}
		if d := checkSame(tt, back); d != "" {
			t.Fatalf("round trip: %s\n%s", d, Format(tt))
		}
	})
}

// TestRoundTrip: Format then Parse gives the same test, for every file.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.litmus"))
	tests := Tests()
	for _, f := range files {
		tests = append(tests, parseFile(t, f))
	}
	for _, tt := range tests {
		back, err := Parse(tt.Name+".litmus", []byte(Format(tt)))
		if err != nil {
			t.Errorf("%s: %v\n%s", tt.Name, err, Format(tt))
			continue
		}
		if checkSame(tt, back) != "" {
			t.Errorf("%s: %s\n%s", tt.Name, checkSame(tt, back), Format(tt))
		}
	}
}

func checkSame(a, b Test) string {
	switch {
	case strings.Join(a.Program(), "|") != strings.Join(b.Program(), "|"):
		return "programs differ: " + strings.Join(b.Program(), "|")
	case a.CondString() != b.CondString() || a.Cond.Quant != b.Cond.Quant:
		return "conditions differ: " + b.CondString()
	case (a.Filter == nil) != (b.Filter == nil) || a.Filter != nil && a.Filter.format(a, false) != b.Filter.format(b, false):
		return "filters differ"
	case fmt.Sprint(a.Regs, a.Locs, a.LocInit, a.FinalMem, a.Name) != fmt.Sprint(b.Regs, b.Locs, b.LocInit, b.FinalMem, b.Name):
		return fmt.Sprint("registers or locations differ: ", b.Regs, b.Locs, b.LocInit, b.FinalMem)
	}
	return ""
}

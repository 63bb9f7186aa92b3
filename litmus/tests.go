package litmus

import (
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/inputfile"
)

// Kind is what an instruction does.
type Kind uint8

// Instruction kinds.
const (
	Store  Kind = iota // Loc = Val (or register Src)
	Load               // Reg = Loc
	Fence              // full barrier (smp_mb, MFENCE; see the package doc)
	Spin               // Reg = Loc, repeated until it reads Val (a spin-wait through the cache)
	Move               // Reg = Val (or register Src): no memory access
	Swap               // atomically Reg = Loc, Loc = Val (or Src): xchg, XCHG
	Add                // atomically Reg = Loc, Loc += Val (or Src): LOCK ADD/INC/XADD, atomic_add
	FenceW             // store-store barrier (smp_wmb, SFENCE)
	FenceR             // load-load barrier (smp_rmb, LFENCE)
	CAS                // atomically Reg = Loc, and Loc = Val (or Src) if Loc was Exp (or register ExpSrc): cmpxchg, LOCK CMPXCHG
)

// Instr is one instruction of a thread's program.
type Instr struct {
	Kind Kind
	Loc  int    // index into Test.Locs
	Val  uint64 // value stored, added or awaited by Spin
	Reg  int    // register written (global numbering, index into Test.Regs)
	// FromReg: the value stored, swapped, added or moved is register Src's,
	// not Val.
	FromReg bool
	Src     int
	// NoReg: an atomic whose old value is dropped (LOCK ADD, atomic_inc).
	NoReg bool
	// Exp is the value a CAS expects (or, with ExpFromReg, register
	// ExpSrc's: x86's EAX).
	Exp        uint64
	ExpFromReg bool
	ExpSrc     int
	// If guards the instruction: it runs only if the guard holds (herd7
	// C's if (r0 == 1) { ... }); otherwise it does nothing.
	If Guard
}

// Guard is an instruction's condition: register Reg equals (or, with Ne,
// differs from) Val. On is false for an unguarded instruction.
type Guard struct {
	On  bool
	Reg int
	Val uint64
	Ne  bool
}

// holds reports whether in's guard holds with registers regs (always, for
// an unguarded instruction).
func (in Instr) holds(regs []uint64) bool {
	return !in.If.On || (regs[in.If.Reg] == in.If.Val) != in.If.Ne
}

// atomic reports whether in is an atomic read-modify-write.
func (in Instr) atomic() bool { return in.Kind == Swap || in.Kind == Add || in.Kind == CAS }

// readsReg reports whether in reads register r (a value, an expected
// value, or its guard).
func (in Instr) readsReg(r int) bool {
	return in.FromReg && in.Src == r || in.ExpFromReg && in.ExpSrc == r || in.If.On && in.If.Reg == r
}

// accesses reports whether in reads or writes memory location in.Loc.
func (in Instr) accesses() bool {
	switch in.Kind {
	case Store, Load, Spin, Swap, Add, CAS:
		return true
	}
	return false
}

// writesReg reports whether in writes register in.Reg.
func (in Instr) writesReg() bool {
	switch in.Kind {
	case Load, Spin, Move:
		return true
	case Swap, Add, CAS:
		return !in.NoReg
	}
	return false
}

// Reg is a register of a test: thread Thread's register Name (EAX, r0),
// with its initial value.
type Reg struct {
	Thread int
	Name   string
	Init   uint64
}

// Test is a litmus test: named locations with their initial values, one
// program per thread, the registers they use and the final condition.
type Test struct {
	Name    string
	Arch    string // X86 or C, as in the file's header
	Doc     string // the quoted description, if any
	Source  string // the file's text
	Locs    []string
	LocInit []uint64 // initial value of each location
	Threads [][]Instr
	// Regs are the registers, in the order of first appearance (init block,
	// then the programs thread by thread, then the condition).
	Regs []Reg
	Cond Cond
	// Filter, if not nil, keeps only the final states it holds in: the
	// others are not counted (herd7's filter clause).
	Filter *Prop
	// FinalMem: the final state records locations (the condition, or a
	// locations line, names one), not only the registers.
	FinalMem bool
	// Observed marks the locations the final state records: those the
	// condition or the locations line names (herd7's observed locations).
	// Nil or all false when FinalMem is false.
	Observed []bool
}

// builtinFS holds the built-in tests, in the same herd7 format as any file.
//
//go:embed builtin/*.litmus
var builtinFS embed.FS

// builtinOrder is the order in which the built-in tests are listed: each
// base test followed by its fenced variant.
func builtinOrder() []string {
	return []string{"MP", "MP+fences", "SB", "SB+fences", "LB", "LB+fences", "IRIW", "IRIW+fences",
		"2+2W", "2+2W+fences", "WRC", "WRC+fences", "MP+spin", "MP+spin+fences"}
}

// Tests returns every built-in test: each base test followed by its fenced
// variant, parsed from the embedded files.
func Tests() []Test {
	var out []Test
	for _, n := range builtinOrder() {
		file := path.Join("builtin", n+".litmus")
		data, err := builtinFS.ReadFile(file)
		if err != nil {
			panic(fmt.Sprintf("litmus: built-in test %s missing: %v", n, err)) // a build error, not user input
		}
		t, err := Parse(file, data)
		if err != nil {
			panic(fmt.Sprintf("litmus: built-in test %s: %v", n, err)) // TestBuiltinFiles keeps them valid
		}
		out = append(out, t)
	}
	return out
}

// Names lists the test names in the order of Tests.
func Names() []string {
	return builtinOrder()
}

// Lookup returns the built-in test called name (case-insensitive).
func Lookup(name string) (Test, error) {
	for _, t := range Tests() {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return Test{}, fmt.Errorf("unknown litmus test %q (tests: %s, or a .litmus file)", name, strings.Join(Names(), ", "))
}

// Registers is the number of registers of the test.
func (t Test) Registers() int { return len(t.Regs) }

// regThread returns the thread of each register.
func (t Test) regThread() []int {
	th := make([]int, len(t.Regs))
	for i, r := range t.Regs {
		th[i] = r.Thread
	}
	return th
}

// RegName is register i as herd7 prints it, e.g. "1:EAX".
func (t Test) RegName(i int) string { return fmt.Sprintf("%d:%s", t.Regs[i].Thread, t.Regs[i].Name) }

// kept reports whether a final state passes the test's filter.
func (t Test) kept(regs, locs []uint64) bool { return t.Filter == nil || t.Filter.Eval(regs, locs) }

// CondString is the condition's proposition in herd7's notation, e.g.
// "1:r0=1 /\ 1:r1=0".
func (t Test) CondString() string { return t.Cond.Prop.format(t, false) }

// Program returns the test's programs as text, one line per thread.
func (t Test) Program() []string {
	var lines []string
	for i, prog := range t.Threads {
		var ins []string
		for _, in := range prog {
			ins = append(ins, t.instrString(in))
		}
		lines = append(lines, fmt.Sprintf("P%d: %s", i, strings.Join(ins, "; ")))
	}
	return lines
}

func (t Test) instrString(in Instr) string {
	if in.If.On {
		op := "="
		if in.If.Ne {
			op = "!="
		}
		g := in
		g.If = Guard{}
		return fmt.Sprintf("if %s%s%d: %s", t.Regs[in.If.Reg].Name, op, in.If.Val, t.instrString(g))
	}
	val := fmt.Sprint(in.Val)
	if in.FromReg {
		val = t.Regs[in.Src].Name
	}
	reg := ""
	if in.writesReg() {
		reg = t.Regs[in.Reg].Name
	}
	loc := ""
	if in.accesses() {
		loc = t.Locs[in.Loc]
	}
	switch in.Kind {
	case Store:
		return loc + "=" + val
	case Load:
		return reg + "=" + loc
	case Fence:
		return "fence"
	case FenceW:
		return "wfence"
	case FenceR:
		return "rfence"
	case Spin:
		return fmt.Sprintf("%s=%s until %d", reg, loc, in.Val)
	case Move:
		return reg + "=" + val
	case Swap:
		if in.NoReg {
			return fmt.Sprintf("swap(%s,%s)", loc, val)
		}
		return fmt.Sprintf("%s=swap(%s,%s)", reg, loc, val)
	case Add:
		if in.NoReg {
			return fmt.Sprintf("add(%s,%s)", loc, val)
		}
		return fmt.Sprintf("%s=add(%s,%s)", reg, loc, val)
	case CAS:
		exp := fmt.Sprint(in.Exp)
		if in.ExpFromReg {
			exp = t.Regs[in.ExpSrc].Name
		}
		return fmt.Sprintf("%s=cas(%s,%s,%s)", reg, loc, exp, val)
	}
	return "?"
}

// usesMem reports whether thread i accesses location l.
func (t Test) locsOf(prog []Instr) []int {
	var ls []int
	for _, in := range prog {
		if in.accesses() && !slices.Contains(ls, in.Loc) {
			ls = append(ls, in.Loc)
		}
	}
	return ls
}

// LoadTest returns the built-in test called name, or, if name ends in
// ".litmus", the test in that file (a relative path is looked up in dir
// first, then in the working directory). Errors name file:line:column.
func LoadTest(name, dir string) (Test, error) {
	return LoadTestCapped(name, dir, 0)
}

// LoadTestCapped is LoadTest refusing a file larger than maxBytes (0:
// inputfile.DefaultMaxBytes) and a path that is not a regular file (a
// device, a FIFO), which it never opens.
func LoadTestCapped(name, dir string, maxBytes int64) (Test, error) {
	if !strings.HasSuffix(name, ".litmus") {
		return Lookup(name)
	}
	file := inDir(name, dir)
	data, err := inputfile.Read(file, maxBytes)
	if err != nil {
		return Test{}, fmt.Errorf("litmus file %w", err)
	}
	return Parse(file, data)
}

// observe makes the final state record location l.
func (t *Test) observe(l int) {
	for len(t.Observed) <= l {
		t.Observed = append(t.Observed, false)
	}
	t.Observed[l] = true
	t.FinalMem = true
}

// observed reports whether the final state records location l.
func (t Test) observed(l int) bool { return l < len(t.Observed) && t.Observed[l] }

// inDir is the file name names: name relative to dir when dir is given,
// name is relative and such a file exists there, else name as it is (to
// the working directory).
func inDir(name, dir string) string {
	if dir != "" && !filepath.IsAbs(name) {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	return name
}

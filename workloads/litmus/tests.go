package litmus

import (
	"fmt"
	"strings"
)

// Kind is what an instruction does.
type Kind uint8

// Instruction kinds.
const (
	Store Kind = iota // Loc = Val
	Load              // Reg = Loc
	Fence             // full barrier (see the package doc)
	Spin              // Reg = Loc, repeated until it reads Val (a spin-wait through the cache)
)

// Instr is one instruction of a thread's program.
type Instr struct {
	Kind Kind
	Loc  int    // index into Test.Locs
	Val  uint64 // value stored, or awaited by Spin
	Reg  int    // register loaded into (global numbering r0, r1, ...)
}

// Test is a litmus test: named locations (all zero at the start), one
// program per thread, and the condition of interest (the outcome forbidden
// under sequential consistency) on the final registers and memory.
type Test struct {
	Name    string
	Locs    []string  // location names, e.g. x, y
	Threads [][]Instr // program of each thread
	// Cond is the forbidden outcome: register (rN) or location values that
	// must all hold, in the order printed.
	Cond []Term
	// FinalMem: the final state records the locations (for 2+2W), not only
	// the registers.
	FinalMem bool
}

// Term is one conjunct of a condition: Name (a register "rN" or a location)
// equals Val.
type Term struct {
	Name string
	Val  uint64
}

// Program-building helpers, so that tests read like their litmus source.
func st(loc int, v uint64) Instr        { return Instr{Kind: Store, Loc: loc, Val: v} }
func ld(reg, loc int) Instr             { return Instr{Kind: Load, Loc: loc, Reg: reg} }
func spin(reg, loc int, v uint64) Instr { return Instr{Kind: Spin, Loc: loc, Reg: reg, Val: v} }

const (
	x = 0
	y = 1
)

// base lists the tests without fences.
func base() []Test {
	xy := []string{"x", "y"}
	return []Test{
		{ // message passing: data then flag; the reader sees the flag but stale data
			Name: "MP", Locs: xy,
			Threads: [][]Instr{{st(x, 1), st(y, 1)}, {ld(0, y), ld(1, x)}},
			Cond:    []Term{{"r0", 1}, {"r1", 0}},
		},
		{ // store buffering: each thread misses the other's store
			Name: "SB", Locs: xy,
			Threads: [][]Instr{{st(x, 1), ld(0, y)}, {st(y, 1), ld(1, x)}},
			Cond:    []Term{{"r0", 0}, {"r1", 0}},
		},
		{ // load buffering: each load sees the other thread's later store
			Name: "LB", Locs: xy,
			Threads: [][]Instr{{ld(0, x), st(y, 1)}, {ld(1, y), st(x, 1)}},
			Cond:    []Term{{"r0", 1}, {"r1", 1}},
		},
		{ // independent reads of independent writes: readers disagree on the order
			Name: "IRIW", Locs: xy,
			Threads: [][]Instr{{st(x, 1)}, {st(y, 1)}, {ld(0, x), ld(1, y)}, {ld(2, y), ld(3, x)}},
			Cond:    []Term{{"r0", 1}, {"r1", 0}, {"r2", 1}, {"r3", 0}},
		},
		{ // two writers, two locations: both second stores lose
			Name: "2+2W", Locs: xy, FinalMem: true,
			Threads: [][]Instr{{st(x, 1), st(y, 2)}, {st(y, 1), st(x, 2)}},
			Cond:    []Term{{"x", 1}, {"y", 1}},
		},
		{ // write-to-read causality: T2 sees T1's store but not the one T1 saw
			Name: "WRC", Locs: xy,
			Threads: [][]Instr{{st(x, 1)}, {ld(0, x), st(y, 1)}, {ld(1, y), ld(2, x)}},
			Cond:    []Term{{"r0", 1}, {"r1", 1}, {"r2", 0}},
		},
		{ // MP whose reader spins on the flag through its cache before reading the data
			Name: "MP+spin", Locs: xy,
			Threads: [][]Instr{{st(x, 1), st(y, 1)}, {spin(0, y, 1), ld(1, x)}},
			Cond:    []Term{{"r0", 1}, {"r1", 0}},
		},
	}
}

// withFences returns t with a barrier between consecutive instructions of
// every thread.
func withFences(t Test) Test {
	f := t
	if n, ok := strings.CutSuffix(t.Name, "+spin"); ok {
		f.Name = n + "+spin+fences"
	} else {
		f.Name = t.Name + "+fences"
	}
	f.Threads = make([][]Instr, len(t.Threads))
	for i, prog := range t.Threads {
		for j, in := range prog {
			if j > 0 {
				f.Threads[i] = append(f.Threads[i], Instr{Kind: Fence})
			}
			f.Threads[i] = append(f.Threads[i], in)
		}
	}
	return f
}

// Tests returns every test: each base test followed by its fenced variant.
func Tests() []Test {
	var out []Test
	for _, t := range base() {
		out = append(out, t, withFences(t))
	}
	return out
}

// Names lists the test names in the order of Tests.
func Names() []string {
	var n []string
	for _, t := range Tests() {
		n = append(n, t.Name)
	}
	return n
}

// Lookup returns the test called name (case-insensitive).
func Lookup(name string) (Test, error) {
	for _, t := range Tests() {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return Test{}, fmt.Errorf("unknown litmus test %q (tests: %s)", name, strings.Join(Names(), ", "))
}

// Registers is the number of registers the test's threads load into.
func (t Test) Registers() int {
	n := 0
	for _, prog := range t.Threads {
		for _, in := range prog {
			if in.Kind == Load || in.Kind == Spin {
				n = max(n, in.Reg+1)
			}
		}
	}
	return n
}

// regThread returns the thread that writes each register.
func (t Test) regThread() []int {
	th := make([]int, t.Registers())
	for i, prog := range t.Threads {
		for _, in := range prog {
			if in.Kind == Load || in.Kind == Spin {
				th[in.Reg] = i
			}
		}
	}
	return th
}

// CondString is the condition in litmus7's notation, e.g.
// "1:r0=1 /\ 1:r1=0".
func (t Test) CondString() string {
	th := t.regThread()
	var parts []string
	for _, c := range t.Cond {
		parts = append(parts, t.termName(th, c.Name)+"="+fmt.Sprint(c.Val))
	}
	return strings.Join(parts, ` /\ `)
}

// termName prefixes a register with its thread, as litmus7 does.
func (t Test) termName(th []int, name string) string {
	var r int
	if _, err := fmt.Sscanf(name, "r%d", &r); err == nil && r < len(th) {
		return fmt.Sprintf("%d:%s", th[r], name)
	}
	return name
}

// Program returns the test's programs as text, one line per thread.
func (t Test) Program() []string {
	var lines []string
	for i, prog := range t.Threads {
		var ins []string
		for _, in := range prog {
			switch in.Kind {
			case Store:
				ins = append(ins, fmt.Sprintf("%s=%d", t.Locs[in.Loc], in.Val))
			case Load:
				ins = append(ins, fmt.Sprintf("r%d=%s", in.Reg, t.Locs[in.Loc]))
			case Fence:
				ins = append(ins, "fence")
			case Spin:
				ins = append(ins, fmt.Sprintf("r%d=%s until %d", in.Reg, t.Locs[in.Loc], in.Val))
			}
		}
		lines = append(lines, fmt.Sprintf("P%d: %s", i, strings.Join(ins, "; ")))
	}
	return lines
}

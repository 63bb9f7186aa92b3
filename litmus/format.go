package litmus

import (
	"fmt"
	"strings"
)

// Format prints t as a herd7 C litmus test that Parse reads back into the
// same test (same programs, registers, initial state and condition): the
// canonical form of a test whatever its source syntax.
func Format(t Test) string {
	var b strings.Builder
	fmt.Fprintf(&b, "C %s\n", t.Name)
	if t.Doc != "" {
		fmt.Fprintf(&b, "%q\n", strings.ReplaceAll(t.Doc, `"`, `'`))
	}
	b.WriteString("{")
	for i, l := range t.Locs {
		fmt.Fprintf(&b, " %s=%d;", l, t.LocInit[i])
	}
	for _, r := range t.Regs { // every register, so that they keep their order
		fmt.Fprintf(&b, " %d:%s=%d;", r.Thread, r.Name, r.Init)
	}
	b.WriteString(" }\n")
	for i, prog := range t.Threads {
		var params []string
		for _, l := range t.Locs {
			params = append(params, "int *"+l)
		}
		fmt.Fprintf(&b, "P%d(%s) {\n", i, strings.Join(params, ", "))
		for k, r := range t.Regs { // declare every register first, so that values may name them
			if r.Thread == i {
				fmt.Fprintf(&b, "  int %s;\n", t.Regs[k].Name)
			}
		}
		for _, in := range prog {
			fmt.Fprintf(&b, "  %s;\n", t.cStmt(in))
		}
		b.WriteString("}\n")
	}
	inCond := make([]bool, len(t.Locs))
	t.Cond.Prop.markLocs(inCond)
	var listed []string
	for l, name := range t.Locs {
		if t.observed(l) && !inCond[l] {
			listed = append(listed, name)
		}
	}
	if len(listed) > 0 {
		fmt.Fprintf(&b, "locations [%s;]\n", strings.Join(listed, "; "))
	}
	if t.Filter != nil {
		fmt.Fprintf(&b, "filter (%s)\n", t.Filter.format(t, false))
	}
	fmt.Fprintf(&b, "%s (%s)\n", t.Cond.Quant, t.CondString())
	return b.String()
}

// cStmt is in as a herd7 C statement (a guarded one inside an if).
func (t Test) cStmt(in Instr) string {
	if in.If.On {
		op := "=="
		if in.If.Ne {
			op = "!="
		}
		g := in
		g.If = Guard{}
		return fmt.Sprintf("if (%s %s %d) %s", t.Regs[in.If.Reg].Name, op, in.If.Val, t.cStmt(g))
	}
	val := fmt.Sprint(in.Val)
	if in.FromReg {
		val = t.Regs[in.Src].Name
	}
	reg, loc := "", ""
	if in.writesReg() {
		reg = t.Regs[in.Reg].Name
	}
	if in.accesses() {
		loc = t.Locs[in.Loc]
	}
	switch in.Kind {
	case Store:
		return fmt.Sprintf("WRITE_ONCE(*%s, %s)", loc, val)
	case Load:
		return fmt.Sprintf("%s = READ_ONCE(*%s)", reg, loc)
	case Fence:
		return "smp_mb()"
	case FenceW:
		return "smp_wmb()"
	case FenceR:
		return "smp_rmb()"
	case Spin:
		return fmt.Sprintf("%s = spin_until(*%s, %d)", reg, loc, in.Val)
	case Move:
		return fmt.Sprintf("%s = %s", reg, val)
	case Swap:
		if in.NoReg {
			return fmt.Sprintf("xchg(%s, %s)", loc, val)
		}
		return fmt.Sprintf("%s = xchg(%s, %s)", reg, loc, val)
	case Add:
		if in.NoReg {
			return fmt.Sprintf("atomic_add(%s, %s)", val, loc)
		}
		return fmt.Sprintf("%s = atomic_fetch_add(%s, %s)", reg, val, loc)
	case CAS:
		exp := fmt.Sprint(in.Exp)
		if in.ExpFromReg {
			exp = t.Regs[in.ExpSrc].Name
		}
		return fmt.Sprintf("%s = cmpxchg(%s, %s, %s)", reg, loc, exp, val)
	}
	return "?"
}

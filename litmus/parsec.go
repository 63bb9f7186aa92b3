package litmus

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	cThread  = regexp.MustCompile(`^P(\d+)\s*\(([^)]*)\)\s*\{`)
	cDecl    = regexp.MustCompile(`^(?:int|long|unsigned|u?int(?:8|16|32|64)_t)\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)$`)
	cAssign  = regexp.MustCompile(`^(?:(?:int|long|unsigned|u?int(?:8|16|32|64)_t)\s+)?([A-Za-z_]\w*)\s*=\s*(.+)$`)
	cCall    = regexp.MustCompile(`^([A-Za-z_]\w*)\s*\((.*)\)$`)
	cPtr     = regexp.MustCompile(`^[&*]?\s*([A-Za-z_]\w*)$`)
	cDeref   = regexp.MustCompile(`^\*\s*([A-Za-z_]\w*)$`)
	cPlainSt = regexp.MustCompile(`^\*\s*([A-Za-z_]\w*)\s*=\s*(.+)$`)
)

const cSupported = "WRITE_ONCE, READ_ONCE, smp_mb, smp_wmb, smp_rmb, smp_store_release, smp_load_acquire, " +
	"xchg (and _relaxed/_acquire/_release, atomic_xchg), cmpxchg (and variants), atomic_add/inc/dec, atomic_fetch_add, *x = V, r = *x, r = V, " +
	"if (r == V) { ... } else { ... } (one level), spin_until (msgsim)"

func (p *parser) parseC(i int) (int, error) {
	for {
		i = p.skipSpace(i)
		if i == len(p.src) || p.condStart(i) {
			return i, nil
		}
		m := cThread.FindStringSubmatchIndex(p.src[i:])
		if m == nil {
			return i, p.errf(i, "want a thread \"P%d(int *x, ...) {\" or the final condition", len(p.t.Threads))
		}
		if n, err := strconv.Atoi(p.src[i+m[2] : i+m[3]]); err != nil || n != len(p.t.Threads) {
			return i, p.errf(i, "threads must be P0, P1, ... in order: want P%d", len(p.t.Threads))
		}
		if len(p.t.Threads) == maxThreads {
			return i, p.errf(i, "too many threads (at most %d)", maxThreads)
		}
		th := len(p.t.Threads)
		p.t.Threads = append(p.t.Threads, nil)
		body := i + m[1]
		end := p.closing(body, '{', '}')
		if end < 0 {
			return i, p.errf(i, "P%d: '{' is not closed by '}'", th)
		}
		if err := p.cBlock(th, body, end, Guard{}); err != nil {
			return i, err
		}
		i = end + 1
	}
}

// closing is the offset of the bracket that closes an opening one just
// before from (depth counted), or -1.
func (p *parser) closing(from int, open, close byte) int {
	depth := 1
	for k := from; k < len(p.src); k++ {
		switch p.src[k] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

var (
	cIf    = regexp.MustCompile(`^if\s*\(`)
	cElse  = regexp.MustCompile(`^else\b`)
	cGuard = regexp.MustCompile(`^(!)?\s*([A-Za-z_]\w*)\s*(?:(==|!=)\s*(\S+))?$`)
)

// cBlock reads the statements of src[from:to] of thread th, each guarded
// by g: plain statements ended by ';', and if (COND) STMT or if (COND) {
// ... } with an optional else (one level: no if inside an if).
func (p *parser) cBlock(th, from, to int, g Guard) error {
	for i := p.skipSpace(from); i < to; i = p.skipSpace(i) {
		if cIf.MatchString(p.src[i:to]) {
			var err error
			if i, err = p.cIf(th, i, to, g); err != nil {
				return err
			}
			continue
		}
		semi := strings.IndexByte(p.src[i:to], ';')
		if semi < 0 {
			return p.errf(i, "missing ';' after the statement")
		}
		s := strings.TrimSpace(p.src[i : i+semi])
		if s != "" {
			p.guard = g
			err := p.cStmt(th, s, i)
			p.guard = Guard{}
			if err != nil {
				return err
			}
		}
		i += semi + 1
	}
	return nil
}

// cIf reads an if statement at src[i:] (within to) of thread th, inside
// guard outer, and returns the offset after it (and its else branch).
func (p *parser) cIf(th, i, to int, outer Guard) (int, error) {
	if outer.On {
		return i, p.errf(i, "an if inside an if is not supported")
	}
	open := i + strings.IndexByte(p.src[i:], '(')
	close := p.closing(open+1, '(', ')')
	if close < 0 || close >= to {
		return i, p.errf(open, "'(' is not closed by ')'")
	}
	cond := strings.TrimSpace(p.src[open+1 : close])
	m := cGuard.FindStringSubmatch(cond)
	if m == nil || m[1] != "" && m[3] != "" {
		return i, p.errf(open+1, "condition %q: want REG == V, REG != V, REG or !REG", cond)
	}
	r, ok := p.regs[regKey(th, m[2])]
	if !ok {
		return i, p.errf(open+1, "condition %q: %q is not a register of P%d", cond, m[2], th)
	}
	g := Guard{On: true, Reg: r, Ne: m[3] != "=="}
	switch {
	case m[3] != "":
		v, err := p.number(m[4], open+1)
		if err != nil {
			return i, err
		}
		g.Val = v
	case m[1] != "": // !r: r == 0
		g.Ne = false
	}
	branch := func(j int, g Guard) (int, error) {
		j = p.skipSpace(j)
		if j >= to {
			return j, p.errf(j, "if without a statement")
		}
		if p.src[j] == '{' {
			end := p.closing(j+1, '{', '}')
			if end < 0 || end >= to {
				return j, p.errf(j, "'{' is not closed by '}'")
			}
			return end + 1, p.cBlock(th, j+1, end, g)
		}
		if cIf.MatchString(p.src[j:to]) {
			return j, p.errf(j, "an if inside an if is not supported")
		}
		semi := strings.IndexByte(p.src[j:to], ';')
		if semi < 0 {
			return j, p.errf(j, "missing ';' after the statement")
		}
		return j + semi + 1, p.cBlock(th, j, j+semi+1, g)
	}
	j, err := branch(close+1, g)
	if err != nil {
		return j, err
	}
	if k := p.skipSpace(j); k < to && cElse.MatchString(p.src[k:to]) {
		g.Ne = !g.Ne
		return branch(k+len("else"), g)
	}
	return j, nil
}

// args splits a call's arguments at top-level commas.
func args(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for k := range parts {
		parts[k] = strings.TrimSpace(parts[k])
	}
	return parts
}

// cValue is a value operand: an integer or a register of thread th.
func (p *parser) cValue(th int, in *Instr, s string, off int) error {
	if ident.MatchString(s) {
		if _, ok := p.regs[regKey(th, s)]; !ok {
			return p.errf(off, "%q is neither an integer nor a register of P%d", s, th)
		}
		in.FromReg, in.Src = true, p.reg(th, s, off)
		return nil
	}
	v, err := p.number(s, off)
	in.Val = v
	return err
}

func regKey(th int, name string) string { return strconv.Itoa(th) + ":" + name }

// cLoc resolves a location argument (x, *x or &x).
func (p *parser) cLoc(s string, deref bool, off int) (int, error) {
	re := cPtr
	if deref {
		re = cDeref
	}
	m := re.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		if deref {
			return 0, p.errf(off, "location %q: want *x", s)
		}
		return 0, p.errf(off, "location %q: want x", s)
	}
	return p.loc(m[1], off)
}

func (p *parser) cStmt(th int, s string, off int) error {
	bad := func() error { return p.errf(off, "unsupported statement %q (supported: %s)", s, cSupported) }
	if m := cDecl.FindStringSubmatch(s); m != nil {
		for _, r := range strings.Split(m[1], ",") {
			p.reg(th, strings.TrimSpace(r), off)
		}
		return nil
	}
	if m := cPlainSt.FindStringSubmatch(s); m != nil {
		l, err := p.loc(m[1], off)
		if err != nil {
			return err
		}
		in := Instr{Kind: Store, Loc: l}
		if err := p.cValue(th, &in, strings.TrimSpace(m[2]), off); err != nil {
			return err
		}
		return p.addInstr(th, in, off)
	}
	if m := cAssign.FindStringSubmatch(s); m != nil {
		return p.cAssign(th, m[1], strings.TrimSpace(m[2]), s, off)
	}
	m := cCall.FindStringSubmatch(s)
	if m == nil {
		return bad()
	}
	fn, a := m[1], args(m[2])
	nargs := func(n int) error {
		if len(a) != n {
			return p.errf(off, "%s takes %d argument(s), got %d", fn, n, len(a))
		}
		return nil
	}
	switch fn {
	case "smp_mb", "smp_wmb", "smp_rmb", "smp_mb__before_atomic", "smp_mb__after_atomic":
		if err := nargs(0); err != nil {
			return err
		}
		k := map[string]Kind{"smp_wmb": FenceW, "smp_rmb": FenceR}[fn]
		if k == 0 {
			k = Fence
		}
		return p.addInstr(th, Instr{Kind: k}, off)
	case "WRITE_ONCE", "smp_store_release":
		if err := nargs(2); err != nil {
			return err
		}
		l, err := p.cLoc(a[0], fn == "WRITE_ONCE", off)
		if err != nil {
			return err
		}
		in := Instr{Kind: Store, Loc: l}
		if err := p.cValue(th, &in, a[1], off); err != nil {
			return err
		}
		if fn == "smp_store_release" { // release: earlier accesses before the store
			if err := p.addInstr(th, Instr{Kind: FenceW}, off); err != nil {
				return err
			}
		}
		return p.addInstr(th, in, off)
	case "xchg", "xchg_relaxed", "xchg_acquire", "xchg_release", "atomic_xchg":
		return p.cAtomic(th, -1, fn, a, off)
	case "atomic_add", "atomic_inc", "atomic_dec", "atomic_sub":
		return p.cAtomic(th, -1, fn, a, off)
	}
	return bad()
}

// cAtomic adds an atomic read-modify-write; dst < 0 drops the old value.
func (p *parser) cAtomic(th, dst int, fn string, a []string, off int) error {
	in := Instr{Reg: max(dst, 0), NoReg: dst < 0}
	var locArg, valArg string
	switch fn {
	case "xchg", "xchg_relaxed", "xchg_acquire", "xchg_release", "atomic_xchg":
		in.Kind = Swap
		if len(a) != 2 {
			return p.errf(off, "%s takes 2 arguments, got %d", fn, len(a))
		}
		locArg, valArg = a[0], a[1]
	case "atomic_add", "atomic_fetch_add", "atomic_fetch_add_relaxed", "atomic_sub":
		in.Kind = Add
		if len(a) != 2 {
			return p.errf(off, "%s takes 2 arguments, got %d", fn, len(a))
		}
		valArg, locArg = a[0], a[1]
	case "atomic_inc", "atomic_dec":
		in.Kind = Add
		if len(a) != 1 {
			return p.errf(off, "%s takes 1 argument, got %d", fn, len(a))
		}
		locArg, in.Val = a[0], 1
		if fn == "atomic_dec" {
			in.Val = ^uint64(0)
		}
	default:
		return p.errf(off, "unsupported atomic %s", fn)
	}
	l, err := p.cLoc(locArg, false, off)
	if err != nil {
		return err
	}
	in.Loc = l
	if valArg != "" {
		if err := p.cValue(th, &in, valArg, off); err != nil {
			return err
		}
		if fn == "atomic_sub" {
			if in.FromReg {
				return p.errf(off, "atomic_sub of a register is not supported")
			}
			in.Val = -in.Val
		}
	}
	return p.addInstr(th, in, off)
}

func (p *parser) cAssign(th int, reg, rhs, s string, off int) error {
	r := p.reg(th, reg, off)
	if m := cDeref.FindStringSubmatch(rhs); m != nil {
		l, err := p.loc(m[1], off)
		if err != nil {
			return err
		}
		return p.addInstr(th, Instr{Kind: Load, Loc: l, Reg: r}, off)
	}
	if m := cCall.FindStringSubmatch(rhs); m != nil {
		fn, a := m[1], args(m[2])
		switch fn {
		case "READ_ONCE", "smp_load_acquire":
			if len(a) != 1 {
				return p.errf(off, "%s takes 1 argument, got %d", fn, len(a))
			}
			l, err := p.cLoc(a[0], fn == "READ_ONCE", off)
			if err != nil {
				return err
			}
			if err := p.addInstr(th, Instr{Kind: Load, Loc: l, Reg: r}, off); err != nil {
				return err
			}
			if fn == "smp_load_acquire" { // acquire: the load before later accesses
				return p.addInstr(th, Instr{Kind: FenceR}, off)
			}
			return nil
		case "spin_until":
			if len(a) != 2 {
				return p.errf(off, "spin_until takes 2 arguments (*x, value), got %d", len(a))
			}
			l, err := p.cLoc(a[0], true, off)
			if err != nil {
				return err
			}
			v, err := p.number(a[1], off)
			if err != nil {
				return err
			}
			return p.addInstr(th, Instr{Kind: Spin, Loc: l, Reg: r, Val: v}, off)
		case "xchg", "xchg_relaxed", "xchg_acquire", "xchg_release", "atomic_xchg", "atomic_fetch_add", "atomic_fetch_add_relaxed":
			return p.cAtomic(th, r, fn, a, off)
		case "cmpxchg", "cmpxchg_relaxed", "cmpxchg_acquire", "cmpxchg_release", "atomic_cmpxchg":
			if len(a) != 3 {
				return p.errf(off, "%s takes 3 arguments (x, old, new), got %d", fn, len(a))
			}
			l, err := p.cLoc(a[0], false, off)
			if err != nil {
				return err
			}
			in := Instr{Kind: CAS, Loc: l}
			var exp Instr
			if err := p.cValue(th, &exp, a[1], off); err != nil {
				return err
			}
			in.Exp, in.ExpFromReg, in.ExpSrc = exp.Val, exp.FromReg, exp.Src
			if err := p.cValue(th, &in, a[2], off); err != nil {
				return err
			}
			in.Reg = r
			return p.addInstr(th, in, off)
		}
		return p.errf(off, "unsupported statement %q (supported: %s)", s, cSupported)
	}
	in := Instr{Kind: Move, Reg: r}
	if err := p.cValue(th, &in, rhs, off); err != nil {
		return err
	}
	return p.addInstr(th, in, off)
}

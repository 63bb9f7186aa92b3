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
	"xchg (and _relaxed/_acquire/_release, atomic_xchg), atomic_add/inc/dec, atomic_fetch_add, *x = V, r = *x, r = V, spin_until (msgsim)"

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
		close := strings.IndexByte(p.src[body:], '}')
		if close < 0 {
			return i, p.errf(i, "P%d: '{' is not closed by '}'", th)
		}
		end := body + close
		offs, stmts := p.items(body, end, ';')
		if last := strings.LastIndexByte(p.src[body:end], ';'); strings.TrimSpace(p.src[body+last+1:end]) != "" {
			o := body + last + 1
			return i, p.errf(p.skipSpace(o), "missing ';' after the statement")
		}
		for k, s := range stmts {
			if err := p.cStmt(th, s, offs[k]); err != nil {
				return i, err
			}
		}
		i = end + 1
	}
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
		}
		return p.errf(off, "unsupported statement %q (supported: %s)", s, cSupported)
	}
	in := Instr{Kind: Move, Reg: r}
	if err := p.cValue(th, &in, rhs, off); err != nil {
		return err
	}
	return p.addInstr(th, in, off)
}

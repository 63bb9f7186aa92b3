package trace

import (
	"fmt"
	"strconv"
)

// An expression of a hand-written program: integers, the variables rank,
// size and the loop variables, parentheses, the operators of C (unary -
// and !; * / %; + -; << >>; < <= > >=; == !=; &; ^ (xor); |; &&; ||) and
// the functions min(a, b), max(a, b), abs(a), log2(a) (floor) and
// sqrt(a) (floor).
type expr interface {
	eval(env map[string]int64) (int64, error)
}

type (
	num   int64
	ident string
	unary struct {
		op string
		x  expr
	}
	binop struct {
		op   string
		x, y expr
	}
	call struct {
		fn   string
		args []expr
	}
)

func (n num) eval(map[string]int64) (int64, error) { return int64(n), nil }

func (v ident) eval(env map[string]int64) (int64, error) {
	x, ok := env[string(v)]
	if !ok {
		return 0, fmt.Errorf("unknown name %q (rank, size and the loop variables are known)", string(v))
	}
	return x, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (u unary) eval(env map[string]int64) (int64, error) {
	x, err := u.x.eval(env)
	if err != nil {
		return 0, err
	}
	if u.op == "-" {
		return -x, nil
	}
	return b2i(x == 0), nil
}

func (b binop) eval(env map[string]int64) (int64, error) {
	x, err := b.x.eval(env)
	if err != nil {
		return 0, err
	}
	// && and || do not evaluate y when x decides.
	switch {
	case b.op == "&&" && x == 0:
		return 0, nil
	case b.op == "||" && x != 0:
		return 1, nil
	}
	y, err := b.y.eval(env)
	if err != nil {
		return 0, err
	}
	switch b.op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if b.op == "/" {
			return x / y, nil
		}
		return x % y, nil
	case "<<", ">>":
		if y < 0 || y > 62 {
			return 0, fmt.Errorf("shift by %d", y)
		}
		if b.op == "<<" {
			return x << y, nil
		}
		return x >> y, nil
	case "<":
		return b2i(x < y), nil
	case "<=":
		return b2i(x <= y), nil
	case ">":
		return b2i(x > y), nil
	case ">=":
		return b2i(x >= y), nil
	case "==":
		return b2i(x == y), nil
	case "!=":
		return b2i(x != y), nil
	case "&":
		return x & y, nil
	case "^":
		return x ^ y, nil
	case "|":
		return x | y, nil
	case "&&", "||":
		return b2i(y != 0), nil
	}
	return 0, fmt.Errorf("unknown operator %q", b.op)
}

func (c call) eval(env map[string]int64) (int64, error) {
	v := make([]int64, len(c.args))
	for i, a := range c.args {
		x, err := a.eval(env)
		if err != nil {
			return 0, err
		}
		v[i] = x
	}
	switch c.fn {
	case "min":
		return min(v[0], v[1]), nil
	case "max":
		return max(v[0], v[1]), nil
	case "abs":
		return max(v[0], -v[0]), nil
	case "log2", "sqrt":
		if v[0] <= 0 {
			return 0, fmt.Errorf("%s(%d)", c.fn, v[0])
		}
		r := int64(0)
		if c.fn == "log2" {
			for x := v[0]; x > 1; x >>= 1 {
				r++
			}
			return r, nil
		}
		for (r+1)*(r+1) <= v[0] {
			r++
		}
		return r, nil
	}
	return 0, fmt.Errorf("unknown function %q", c.fn)
}

// arity of the functions.
var funcs = map[string]int{"min": 2, "max": 2, "abs": 1, "log2": 1, "sqrt": 1}

// precedence of the binary operators (higher binds tighter).
var precedence = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

// exprParser parses one expression; pos is the byte offset of an error.
type exprParser struct {
	s   string
	i   int
	err error
	at  int
}

// parseExpr parses s; on error it returns the byte offset of the problem.
func parseExpr(s string) (expr, int, error) {
	p := &exprParser{s: s}
	e := p.binary(1)
	p.space()
	if p.err == nil && p.i < len(s) {
		p.fail("unexpected %q", s[p.i:])
	}
	if p.err != nil {
		return nil, p.at, p.err
	}
	return e, 0, nil
}

func (p *exprParser) fail(format string, a ...any) {
	if p.err == nil {
		p.err, p.at = fmt.Errorf(format, a...), p.i
	}
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// op returns the binary operator at the cursor, if any.
func (p *exprParser) op() string {
	p.space()
	for _, n := range []int{2, 1} {
		if p.i+n <= len(p.s) {
			if _, ok := precedence[p.s[p.i:p.i+n]]; ok {
				return p.s[p.i : p.i+n]
			}
		}
	}
	return ""
}

func (p *exprParser) binary(min int) expr {
	x := p.unary()
	for p.err == nil {
		op := p.op()
		prec, ok := precedence[op]
		if !ok || prec < min {
			return x
		}
		p.i += len(op)
		y := p.binary(prec + 1)
		x = binop{op, x, y}
	}
	return x
}

func (p *exprParser) unary() expr {
	p.space()
	if p.i < len(p.s) && (p.s[p.i] == '-' || p.s[p.i] == '!') {
		op := p.s[p.i : p.i+1]
		p.i++
		return unary{op, p.unary()}
	}
	return p.primary()
}

func isLetter(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (p *exprParser) primary() expr {
	p.space()
	if p.i >= len(p.s) {
		p.fail("expression ends where a value was expected")
		return num(0)
	}
	c := p.s[p.i]
	switch {
	case c == '(':
		p.i++
		e := p.binary(1)
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			p.fail("missing )")
			return e
		}
		p.i++
		return e
	case isDigit(c):
		j := p.i
		for j < len(p.s) && isDigit(p.s[j]) {
			j++
		}
		v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			p.fail("number %s is too large", p.s[p.i:j])
		}
		p.i = j
		return num(v)
	case isLetter(c):
		j := p.i
		for j < len(p.s) && (isLetter(p.s[j]) || isDigit(p.s[j])) {
			j++
		}
		name := p.s[p.i:j]
		start := p.i
		p.i = j
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '(' {
			n, ok := funcs[name]
			if !ok {
				p.i = start
				p.fail("unknown function %q (min, max, abs, log2, sqrt)", name)
				return num(0)
			}
			p.i++
			var args []expr
			for p.err == nil {
				args = append(args, p.binary(1))
				p.space()
				if p.i < len(p.s) && p.s[p.i] == ',' {
					p.i++
					continue
				}
				break
			}
			if p.i >= len(p.s) || p.s[p.i] != ')' {
				p.fail("missing ) after the arguments of %s", name)
				return num(0)
			}
			p.i++
			if len(args) != n {
				p.i = start
				p.fail("%s takes %d arguments, got %d", name, n, len(args))
			}
			return call{name, args}
		}
		return ident(name)
	}
	p.fail("unexpected %q", string(c))
	return num(0)
}

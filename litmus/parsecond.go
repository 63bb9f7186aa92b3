package litmus

import (
	"strconv"
	"strings"
)

// token of a final condition.
type token struct {
	off  int
	text string
}

func (p *parser) condTokens(i int) ([]token, error) {
	var toks []token
	for {
		i = p.skipSpace(i)
		if i == len(p.src) {
			return toks, nil
		}
		s := p.src[i:]
		switch {
		case strings.HasPrefix(s, `/\`), strings.HasPrefix(s, `\/`), strings.HasPrefix(s, "=="):
			toks = append(toks, token{i, s[:2]})
			i += 2
		case strings.ContainsRune("()~:=[]*;", rune(s[0])):
			toks = append(toks, token{i, s[:1]})
			i++
		case s[0] == '_' || s[0] == '$' || s[0] >= '0' && s[0] <= '9' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z':
			j := 1
			for j < len(s) && (s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			toks = append(toks, token{i, s[:j]})
			i += j
		default:
			return nil, p.errf(i, "unexpected character %q in the final condition", s[:1])
		}
	}
}

// condParser parses a proposition from tokens.
type condParser struct {
	p    *parser
	toks []token
	k    int
	end  int // offset of the end of input
}

func (c *condParser) peek() string {
	if c.k < len(c.toks) {
		return c.toks[c.k].text
	}
	return ""
}

func (c *condParser) off() int {
	if c.k < len(c.toks) {
		return c.toks[c.k].off
	}
	return c.end
}

func (c *condParser) expect(s string) error {
	if c.peek() != s {
		got := c.peek()
		if got == "" {
			got = "end of file"
		}
		return c.p.errf(c.off(), "want %q, got %q", s, got)
	}
	c.k++
	return nil
}

func (c *condParser) or(depth int) (*Prop, error) {
	return c.binary(depth, `\/`, OpOr, c.and)
}

func (c *condParser) and(depth int) (*Prop, error) {
	return c.binary(depth, `/\`, OpAnd, c.unary)
}

func (c *condParser) binary(depth int, sep string, op Op, next func(int) (*Prop, error)) (*Prop, error) {
	l, err := next(depth)
	if err != nil {
		return nil, err
	}
	if c.peek() != sep {
		return l, nil
	}
	n := &Prop{Op: op, Kids: []*Prop{l}}
	for c.peek() == sep {
		c.k++
		r, err := next(depth)
		if err != nil {
			return nil, err
		}
		n.Kids = append(n.Kids, r)
	}
	return n, nil
}

func (c *condParser) unary(depth int) (*Prop, error) {
	if depth > 100 {
		return nil, c.p.errf(c.off(), "condition nested too deeply")
	}
	switch c.peek() {
	case "~":
		c.k++
		k, err := c.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Prop{Op: OpNot, Kids: []*Prop{k}}, nil
	case "(":
		c.k++
		e, err := c.or(depth + 1)
		if err != nil {
			return nil, err
		}
		return e, c.expect(")")
	case "true":
		c.k++
		return &Prop{Op: OpTrue}, nil
	case "false":
		c.k++
		return &Prop{Op: OpFalse}, nil
	}
	return c.atom()
}

// atom parses P:REG=V, x=V, [x]=V or *x=V.
func (c *condParser) atom() (*Prop, error) {
	off := c.off()
	thread := -1
	if k := c.k; k+1 < len(c.toks) && c.toks[k+1].text == ":" {
		th, err := strconv.Atoi(c.toks[k].text)
		if err != nil || th < 0 || th >= maxThreads {
			return nil, c.p.errf(off, "thread %q: want 0..%d", c.toks[k].text, maxThreads-1)
		}
		thread = th
		c.k += 2
	}
	bracket := false
	switch c.peek() {
	case "[":
		bracket = true
		c.k++
	case "*":
		c.k++
	}
	name := c.peek()
	if !ident.MatchString(name) {
		return nil, c.p.errf(c.off(), "want a register or location name, got %q", name)
	}
	nameOff := c.off()
	c.k++
	if bracket {
		if err := c.expect("]"); err != nil {
			return nil, err
		}
	}
	if c.peek() == "==" {
		c.k++
	} else if err := c.expect("="); err != nil {
		return nil, err
	}
	vOff := c.off()
	v, err := c.p.number(c.peek(), vOff)
	if err != nil {
		return nil, err
	}
	c.k++
	if thread >= 0 {
		return &Prop{Op: OpTerm, Reg: c.p.reg(thread, name, nameOff), Val: v}, nil
	}
	l, err := c.p.loc(name, nameOff)
	if err != nil {
		return nil, err
	}
	return &Prop{Op: OpTerm, Reg: -1, Loc: l, Val: v}, nil
}

func (p *parser) parseCond(i int) error {
	toks, err := p.condTokens(i)
	if err != nil {
		return err
	}
	c := &condParser{p: p, toks: toks, end: len(p.src)}
	if c.peek() == "locations" {
		c.k++
		if err := c.expect("["); err != nil {
			return err
		}
		for c.peek() != "]" {
			if c.peek() == "" {
				return p.errf(c.off(), "locations list is not closed by ']'")
			}
			if c.peek() == ";" {
				c.k++
				continue
			}
			if c.k+1 < len(toks) && toks[c.k+1].text == ":" { // a register: already in the state
				c.k += 3
				continue
			}
			l, err := p.loc(c.peek(), c.off())
			if err != nil {
				return err
			}
			p.t.observe(l)
			c.k++
		}
		c.k++
	}
	if c.peek() == "filter" {
		c.k++
		f, err := c.or(0)
		if err != nil {
			return err
		}
		p.t.Filter = f
	}
	switch c.peek() {
	case "exists":
		c.k++
	case "forall":
		c.k++
		p.t.Cond.Quant = Forall
	case "~":
		c.k++
		if c.peek() != "exists" {
			return p.errf(c.off(), "want \"exists\" after '~'")
		}
		c.k++
		p.t.Cond.Quant = NotExists
	case "":
		return p.errf(c.off(), "missing the final condition (exists, ~exists or forall)")
	default:
		return p.errf(c.off(), "want the final condition (exists, ~exists or forall), got %q", c.peek())
	}
	prop, err := c.or(0)
	if err != nil {
		return err
	}
	if c.peek() != "" {
		return p.errf(c.off(), "unexpected %q after the final condition", c.peek())
	}
	p.t.Cond.Prop = prop
	obs := make([]bool, len(p.t.Locs))
	prop.markLocs(obs)
	for l, o := range obs {
		if o {
			p.t.observe(l)
		}
	}
	return nil
}

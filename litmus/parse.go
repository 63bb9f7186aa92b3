package litmus

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Limits on a parsed test, so that a hostile file cannot make the runner or
// the exhaustive explorer allocate without bound.
const (
	maxThreads = 8
	maxInstrs  = 32 // per thread
	maxLocs    = 16
)

// ParseError is a syntax or semantic error in a litmus file, at a line and
// column (both from 1).
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

// parser reads one file. src is the file with its comments blanked out
// (so offsets are still line:column positions of the file).
type parser struct {
	file   string
	src    string
	lines  []int // offset of the start of each line
	t      Test
	regs   map[string]int // "thread:name" -> index into t.Regs
	regOff []int          // offset where each register first appeared
	locs   map[string]int
	guard  Guard // the guard of the C statements being read (if)
}

// Parse reads a litmus test in herdtools7's format: the header line
// ("X86 NAME" or "C NAME"), an optional quoted description and key=value
// lines, the initial state in braces, the programs (X86: columns separated
// by '|', rows ended by ';', headed by P0 | P1 ...; C: one
// "P0(int *x, ...) { ... }" function per thread) and the final condition
// (exists, ~exists or forall, with /\, \/, ~, parentheses, P:REG=V and
// x=V), optionally preceded by a "locations [x; y;]" line. Errors name
// file:line:column.
func Parse(file string, data []byte) (Test, error) {
	text := string(data)
	f := strings.Fields(text)
	isC := len(f) > 0 && strings.EqualFold(f[0], "C")
	p := &parser{file: file, src: blankComments(text, isC), regs: map[string]int{}, locs: map[string]int{}}
	p.lines = []int{0}
	for i := 0; i < len(p.src); i++ {
		if p.src[i] == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	p.t.Source = string(data)
	if err := p.parse(); err != nil {
		return Test{}, err
	}
	return p.t, nil
}

func (p *parser) errf(off int, format string, args ...any) error {
	line := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	line = max(line, 0)
	col := len([]rune(p.src[p.lines[line]:min(off, len(p.src))])) + 1
	return &ParseError{File: p.file, Line: line + 1, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// blankComments replaces comments by spaces, keeping newlines, so that
// offsets keep their line and column: OCaml (* *) comments, or in a C test
// (where "(*x" is code) C's /* */ and // comments.
func blankComments(s string, isC bool) string {
	b := []byte(s)
	blank := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	inQuote := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			inQuote = !inQuote
		case inQuote:
		case !isC && strings.HasPrefix(string(b[i:min(i+2, len(b))]), "(*"), isC && strings.HasPrefix(string(b[i:min(i+2, len(b))]), "/*"):
			end := "*)"
			if b[i] == '/' {
				end = "*/"
			}
			j := strings.Index(string(b[i+2:]), end)
			if j < 0 {
				blank(i, len(b))
				return string(b)
			}
			blank(i, i+2+j+2)
			i += 2 + j + 1
		case isC && b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			j := strings.IndexByte(string(b[i:]), '\n')
			if j < 0 {
				j = len(b) - i
			}
			blank(i, i+j)
			i += j - 1
		}
	}
	return string(b)
}

func (p *parser) skipSpace(i int) int {
	for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\t' || p.src[i] == '\n' || p.src[i] == '\r') {
		i++
	}
	return i
}

func (p *parser) lineEnd(i int) int {
	if j := strings.IndexByte(p.src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(p.src)
}

func (p *parser) parse() error {
	i := p.skipSpace(0)
	if i == len(p.src) {
		return p.errf(i, "empty file: want a header line such as \"X86 SB\" or \"C MP\"")
	}
	end := p.lineEnd(i)
	f := strings.Fields(p.src[i:end])
	if len(f) < 2 {
		return p.errf(i, "header %q: want an architecture and a name, e.g. \"X86 SB\"", strings.TrimSpace(p.src[i:end]))
	}
	switch strings.ToUpper(f[0]) {
	case "X86":
		p.t.Arch = "X86"
	case "C":
		p.t.Arch = "C"
	default:
		return p.errf(i, "architecture %q is not supported (X86, C)", f[0])
	}
	p.t.Name = f[1]
	i = p.skipSpace(end)
	if i < len(p.src) && p.src[i] == '"' {
		j := strings.IndexByte(p.src[i+1:], '"')
		if j < 0 {
			return p.errf(i, "unterminated quoted description")
		}
		p.t.Doc = p.src[i+1 : i+1+j]
		i = p.skipSpace(i + 1 + j + 1)
	}
	for i < len(p.src) && p.src[i] != '{' {
		end := p.lineEnd(i)
		if !strings.Contains(p.src[i:end], "=") {
			return p.errf(i, "want a key=value line or the initial state '{', got %q", strings.TrimSpace(p.src[i:end]))
		}
		i = p.skipSpace(end)
	}
	if i == len(p.src) {
		return p.errf(i, "missing the initial state block '{ ... }'")
	}
	close := strings.IndexByte(p.src[i:], '}')
	if close < 0 {
		return p.errf(i, "initial state block '{' is not closed by '}'")
	}
	if err := p.parseInit(i+1, i+close); err != nil {
		return err
	}
	i += close + 1
	var err error
	if p.t.Arch == "X86" {
		i, err = p.parseX86(i)
	} else {
		i, err = p.parseC(i)
	}
	if err != nil {
		return err
	}
	if len(p.t.Threads) == 0 {
		return p.errf(i, "no program: want at least one thread")
	}
	if err := p.parseCond(i); err != nil {
		return err
	}
	for k, r := range p.t.Regs {
		if r.Thread >= len(p.t.Threads) {
			return p.errf(p.regOff[k], "register %d:%s names thread %d, but the test has %d thread(s)", r.Thread, r.Name, r.Thread, len(p.t.Threads))
		}
	}
	return nil
}

// items splits src[from:to] at sep, returning each piece's start offset
// and text, skipping blank ones; last reports the trailing piece (after the
// last separator) if not blank.
func (p *parser) items(from, to int, sep byte) (offs []int, texts []string) {
	start := from
	for k := from; k <= to; k++ {
		if k == to || p.src[k] == sep {
			s := p.src[start:k]
			if t := strings.TrimSpace(s); t != "" {
				offs = append(offs, start+strings.Index(s, t))
				texts = append(texts, t)
			}
			start = k + 1
		}
	}
	return offs, texts
}

var (
	typePrefix = regexp.MustCompile(`^(?:(?:const|volatile|unsigned|signed|int|long|char|short|atomic_t|u?int(?:8|16|32|64)_t)\b\s*\**\s*)+`)
	initItem   = regexp.MustCompile(`^(?:(\d+)\s*:\s*)?(?:\*\s*)?(?:\[\s*)?([A-Za-z_]\w*)(?:\s*\])?\s*(?:=\s*(\S+))?$`)
	ident      = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

func (p *parser) loc(name string, off int) (int, error) {
	if i, ok := p.locs[name]; ok {
		return i, nil
	}
	if len(p.t.Locs) == maxLocs {
		return 0, p.errf(off, "too many locations (at most %d)", maxLocs)
	}
	p.locs[name] = len(p.t.Locs)
	p.t.Locs = append(p.t.Locs, name)
	p.t.LocInit = append(p.t.LocInit, 0)
	return len(p.t.Locs) - 1, nil
}

func (p *parser) reg(thread int, name string, off int) int {
	key := fmt.Sprintf("%d:%s", thread, name)
	if i, ok := p.regs[key]; ok {
		return i
	}
	p.regs[key] = len(p.t.Regs)
	p.t.Regs = append(p.t.Regs, Reg{Thread: thread, Name: name})
	p.regOff = append(p.regOff, off)
	return len(p.t.Regs) - 1
}

func (p *parser) number(s string, off int) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "$"), 0, 64)
	if err != nil {
		return 0, p.errf(off, "value %q: want a non-negative integer (addresses as values are not supported)", s)
	}
	return v, nil
}

func (p *parser) parseInit(from, to int) error {
	offs, items := p.items(from, to, ';')
	for k, it := range items {
		off := offs[k]
		if m := typePrefix.FindString(it); m != "" {
			it = it[len(m):]
			off += len(m)
		}
		m := initItem.FindStringSubmatch(it)
		if m == nil {
			return p.errf(off, "initial state item %q: want x=V or P:REG=V", it)
		}
		var v uint64
		if m[3] != "" {
			var err error
			if v, err = p.number(m[3], off+strings.LastIndex(it, m[3])); err != nil {
				return err
			}
		}
		if m[1] != "" {
			th, err := strconv.Atoi(m[1])
			if err != nil || th >= maxThreads {
				return p.errf(off, "thread %s: at most %d threads", m[1], maxThreads)
			}
			p.t.Regs[p.reg(th, m[2], off)].Init = v
			continue
		}
		l, err := p.loc(m[2], off)
		if err != nil {
			return err
		}
		p.t.LocInit[l] = v
	}
	return nil
}

// condStart reports whether the text at i starts the final section.
func (p *parser) condStart(i int) bool {
	s := p.src[i:]
	for _, kw := range []string{"exists", "~", "forall", "locations", "filter"} {
		if strings.HasPrefix(s, kw) {
			return true
		}
	}
	return false
}

func (p *parser) addInstr(th int, in Instr, off int) error {
	if len(p.t.Threads[th]) == maxInstrs {
		return p.errf(off, "thread %d: too many instructions (at most %d)", th, maxInstrs)
	}
	in.If = p.guard
	p.t.Threads[th] = append(p.t.Threads[th], in)
	return nil
}

func (p *parser) parseX86(i int) (int, error) {
	header := true
	type cell struct {
		off  int
		text string
	}
	var cols [][]cell // the cells of each thread, parsed thread by thread at the end
	for {
		i = p.skipSpace(i)
		if i == len(p.src) || p.condStart(i) {
			for k, col := range cols { // registers are numbered thread by thread
				for _, c := range col {
					if err := p.x86Instr(k, c.text, c.off); err != nil {
						return i, err
					}
				}
			}
			return i, nil
		}
		end := p.lineEnd(i)
		row := strings.TrimRight(p.src[i:end], " \t\r")
		if !strings.HasSuffix(row, ";") {
			return i, p.errf(i+len(row), "program row must end with ';'")
		}
		offs, cells := p.cells(i, i+len(row)-1)
		if header {
			for k, c := range cells {
				if c != fmt.Sprintf("P%d", k) {
					return i, p.errf(offs[k], "program header: want P%d, got %q", k, c)
				}
			}
			if len(cells) > maxThreads {
				return i, p.errf(i, "too many threads (at most %d)", maxThreads)
			}
			p.t.Threads = make([][]Instr, len(cells))
			cols = make([][]cell, len(cells))
			header = false
		} else {
			if len(cells) != len(p.t.Threads) {
				return i, p.errf(i, "program row has %d column(s), the header %d", len(cells), len(p.t.Threads))
			}
			for k, c := range cells {
				if c != "" {
					cols[k] = append(cols[k], cell{offs[k], c})
				}
			}
		}
		i = end
	}
}

// cells splits a program row src[from:to] at '|', keeping blank cells.
func (p *parser) cells(from, to int) (offs []int, texts []string) {
	start := from
	for k := from; k <= to; k++ {
		if k == to || p.src[k] == '|' {
			s := p.src[start:k]
			t := strings.TrimSpace(s)
			off := start
			if t != "" {
				off += strings.Index(s, t)
			}
			offs, texts = append(offs, off), append(texts, t)
			start = k + 1
		}
	}
	return offs, texts
}

// x86 operand kinds.
type operand struct {
	mem, imm bool
	name     string
	val      uint64
}

func (p *parser) x86Operand(s string, off int) (operand, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") && ident.MatchString(strings.TrimSpace(s[1:len(s)-1])):
		return operand{mem: true, name: strings.TrimSpace(s[1 : len(s)-1])}, nil
	case strings.HasPrefix(s, "$"):
		v, err := p.number(s, off)
		return operand{imm: true, val: v}, err
	case ident.MatchString(s):
		return operand{name: s}, nil
	}
	return operand{}, p.errf(off, "operand %q: want [x], $V or a register", s)
}

const x86Supported = "MOV, MFENCE, SFENCE, LFENCE, XCHG, LOCK ADD/INC/DEC/XADD/XCHG/CMPXCHG"

// x86 is one X86 instruction being parsed: thread th's, at offset off of
// the source, its mnemonic, whether LOCK prefixes it, and its operands.
type x86 struct {
	p      *parser
	th     int
	text   string
	off    int
	mn     string
	locked bool
	ops    []operand
}

func (p *parser) x86Instr(th int, s string, off int) error {
	fields := strings.Fields(s)
	x := &x86{p: p, th: th, text: s, off: off, mn: strings.ToUpper(fields[0])}
	rest := strings.TrimSpace(s[len(fields[0]):])
	restOff := off + len(s) - len(rest)
	if x.mn == "LOCK" {
		if len(fields) < 2 {
			return p.errf(off, "LOCK without an instruction")
		}
		x.locked = true
		x.mn = strings.ToUpper(fields[1])
		rest = strings.TrimSpace(rest[len(fields[1]):])
		restOff = off + len(s) - len(rest)
	}
	if rest != "" {
		o := restOff
		for _, part := range strings.Split(rest, ",") {
			op, err := p.x86Operand(part, o+len(part)-len(strings.TrimLeft(part, " \t")))
			if err != nil {
				return err
			}
			x.ops = append(x.ops, op)
			o += len(part) + 1
		}
	}
	var in Instr
	var err error
	switch x.mn {
	case "MFENCE", "SFENCE", "LFENCE":
		if err := x.want(0); err != nil {
			return err
		}
		in.Kind = map[string]Kind{"MFENCE": Fence, "SFENCE": FenceW, "LFENCE": FenceR}[x.mn]
	case "MOV":
		in, err = x.mov()
	case "XCHG", "XADD":
		in, err = x.xchg()
	case "CMPXCHG":
		in, err = x.cmpxchg()
	case "ADD", "INC", "DEC":
		in, err = x.add()
	default:
		return p.errf(off, "unsupported instruction %q (supported: %s)", fields[0], x86Supported)
	}
	if err != nil {
		return err
	}
	return p.addInstr(th, in, off)
}

// want checks that the instruction has n operands.
func (x *x86) want(n int) error {
	if len(x.ops) != n {
		return x.p.errf(x.off, "%s takes %d operand(s), got %d", x.mn, n, len(x.ops))
	}
	return nil
}

// bad is the error of operands the instruction does not take.
func (x *x86) bad() error {
	return x.p.errf(x.off, "unsupported operands for %s in %q", x.mn, x.text)
}

// src sets in's source operand: an immediate or a register.
func (x *x86) src(in *Instr, op operand) {
	if op.imm {
		in.Val = op.val
	} else {
		in.FromReg, in.Src = true, x.p.reg(x.th, op.name, x.off)
	}
}

// loc sets in's location to memory operand op's.
func (x *x86) loc(in *Instr, op operand) error {
	l, err := x.p.loc(op.name, x.off)
	if err != nil {
		return err
	}
	in.Loc = l
	return nil
}

// mov is MOV: a store, a load, or a move between registers.
func (x *x86) mov() (Instr, error) {
	var in Instr
	if err := x.want(2); err != nil {
		return in, err
	}
	if x.locked {
		return in, x.p.errf(x.off, "LOCK MOV is not an x86 instruction")
	}
	d, o := x.ops[0], x.ops[1]
	switch {
	case d.mem && !o.mem:
		in.Kind = Store
		x.src(&in, o)
	case !d.mem && !d.imm && o.mem:
		in.Kind, in.Reg = Load, x.p.reg(x.th, d.name, x.off)
	case !d.mem && !d.imm && !o.mem:
		in.Kind, in.Reg = Move, x.p.reg(x.th, d.name, x.off)
		x.src(&in, o)
	default:
		return in, x.bad()
	}
	ml := d
	if o.mem {
		ml = o
	}
	if in.Kind != Move {
		return in, x.loc(&in, ml)
	}
	return in, nil
}

// xchg is XCHG (a swap, atomic on x86) or LOCK XADD (a fetch-and-add).
func (x *x86) xchg() (Instr, error) {
	var in Instr
	if err := x.want(2); err != nil {
		return in, err
	}
	m, r := x.ops[0], x.ops[1]
	if r.mem && x.mn == "XCHG" {
		m, r = r, m
	}
	if !m.mem || r.mem || r.imm {
		return in, x.bad()
	}
	in.Kind = Swap
	if x.mn == "XADD" {
		if !x.locked {
			return in, x.p.errf(x.off, "XADD to memory is atomic only with LOCK")
		}
		in.Kind = Add
	}
	in.Reg = x.p.reg(x.th, r.name, x.off)
	in.FromReg, in.Src = true, in.Reg
	return in, x.loc(&in, m)
}

// cmpxchg is LOCK CMPXCHG [x],r: if [x] = EAX then [x] = r; EAX = the old
// [x] (EAX already holds it when they were equal).
func (x *x86) cmpxchg() (Instr, error) {
	var in Instr
	if !x.locked {
		return in, x.p.errf(x.off, "CMPXCHG to memory is atomic only with LOCK (write LOCK CMPXCHG)")
	}
	if err := x.want(2); err != nil {
		return in, err
	}
	if !x.ops[0].mem || x.ops[1].mem || x.ops[1].imm {
		return in, x.bad()
	}
	eax := x.p.reg(x.th, "EAX", x.off)
	in.Kind, in.Reg = CAS, eax
	in.ExpFromReg, in.ExpSrc = true, eax
	in.FromReg, in.Src = true, x.p.reg(x.th, x.ops[1].name, x.off)
	return in, x.loc(&in, x.ops[0])
}

// add is LOCK ADD, INC or DEC of memory: an atomic add whose old value
// goes to no register.
func (x *x86) add() (Instr, error) {
	var in Instr
	if !x.locked {
		return in, x.p.errf(x.off, "%s to memory is atomic only with LOCK (write LOCK %s)", x.mn, x.mn)
	}
	n := 2
	if x.mn != "ADD" {
		n = 1
	}
	if err := x.want(n); err != nil {
		return in, err
	}
	if !x.ops[0].mem {
		return in, x.bad()
	}
	in.Kind, in.NoReg = Add, true
	switch x.mn {
	case "ADD":
		if x.ops[1].mem {
			return in, x.bad()
		}
		x.src(&in, x.ops[1])
	case "INC":
		in.Val = 1
	case "DEC":
		in.Val = ^uint64(0)
	}
	return in, x.loc(&in, x.ops[0])
}

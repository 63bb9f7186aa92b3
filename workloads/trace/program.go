package trace

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A hand-written program is a YAML list of ops that every rank runs, each
// with its own rank: peers and sizes are expressions in rank, size and
// the variables of the loops around them (expr.go), for example
//
//	- repeat: 10
//	  var: step
//	  do:
//	    - irecv: {from: "(rank+size-1) % size", bytes: 1024}
//	    - send: {to: "(rank+1) % size", bytes: 1024}
//	    - waitall:
//	    - compute: {flops: 1e6}
//	- allreduce: {bytes: 8}
//
// An op may carry if: EXPR (it runs on the ranks where EXPR is not 0).
// The actions and their args (tag defaults to 0, root to 0):
//
//	send, isend   to, bytes, tag        recv, irecv  from, bytes, tag
//	sendrecv      to, from, bytes, recv_bytes (default bytes)
//	wait, test    src, dst, tag         waitall, barrier, init, finalize: none
//	bcast, reduce, gather, scatter   bytes, root
//	allreduce, alltoall, allgather, scan, exscan   bytes
//	compute       flops                 sleep        seconds
//
// bytes of alltoall, allgather, gather and scatter are per rank. A program
// compiles to the op stream a trace gives (CompileProgram).

// programArgs are the args each action of a program takes.
var programArgs = map[Kind][]string{
	Init: nil, Finalize: nil, Barrier: nil, WaitAll: nil,
	Send: {"to", "bytes", "tag"}, Isend: {"to", "bytes", "tag"},
	Recv: {"from", "bytes", "tag"}, Irecv: {"from", "bytes", "tag"},
	SendRecv: {"to", "from", "bytes", "recv_bytes"},
	Wait:     {"src", "dst", "tag"}, Test: {"src", "dst", "tag"},
	Bcast: {"bytes", "root"}, Reduce: {"bytes", "root"}, Gather: {"bytes", "root"}, Scatter: {"bytes", "root"},
	Allreduce: {"bytes"}, Alltoall: {"bytes"}, Allgather: {"bytes"}, Scan: {"bytes"}, Exscan: {"bytes"},
	Compute: {"flops"}, Sleep: {"seconds"},
}

// maxProgramOps bounds the ops a program compiles to, over every rank.
const maxProgramOps = 2_000_000

// stmt is a compiled program item: an op or a loop.
type stmt struct {
	kind  Kind
	at    Pos
	cond  *value
	args  map[string]*value
	loop  *value // repeat count; body set for a loop
	v     string
	body  []stmt
	float bool
}

// value is an arg: an integer expression, or a number for flops and
// seconds.
type value struct {
	e   expr
	f   float64
	isF bool
	at  Pos
	src string
}

// programCompiler collects errors and emits ops.
type programCompiler struct {
	l     *errList
	file  string
	seen  map[Pos]bool // errors of evaluation reported once per place
	ops   int
	steps int // items evaluated, loops' iterations included
}

// maxProgramSteps bounds the items a program evaluates over every rank
// (an op, an if that is false, a loop's iteration): a loop of empty or
// skipped bodies runs no op but must end.
const maxProgramSteps = 4 * maxProgramOps

// over reports whether the program ran past its bounds.
func (c *programCompiler) over() bool {
	return c.l.full() || c.ops > maxProgramOps || c.steps > maxProgramSteps
}

// CompileProgram compiles a program (a YAML list node, from file) for
// size ranks.
func CompileProgram(file string, node *yaml.Node, size int) (*Program, error) {
	var l errList
	c := &programCompiler{l: &l, file: file, seen: map[Pos]bool{}}
	if size < 1 || size > maxRanks {
		l.add(Pos{file, node.Line, node.Column}, "", "ranks must be between 1 and %d, got %d", maxRanks, size)
		return nil, l.err()
	}
	body := c.list(node)
	if len(l.errs) > 0 {
		return nil, l.err()
	}
	p := &Program{Source: file, Ranks: make([][]Op, size)}
	for r := range size {
		env := map[string]int64{"rank": int64(r), "size": int64(size)}
		p.Ranks[r] = c.run(body, env, r, size, nil)
		if c.over() {
			break
		}
	}
	if c.ops > maxProgramOps || c.steps > maxProgramSteps {
		l.add(Pos{file, node.Line, node.Column}, "", "the program runs more than %d ops (or %d steps of its loops) over its %d ranks", maxProgramOps, maxProgramSteps, size)
	}
	if len(l.errs) == 0 {
		checkProgram(&l, p)
	}
	if len(l.errs) > 0 {
		return nil, l.err()
	}
	return p, nil
}

func (c *programCompiler) pos(n *yaml.Node) Pos { return Pos{c.file, n.Line, n.Column} }

func (c *programCompiler) list(n *yaml.Node) []stmt {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.SequenceNode {
		c.l.add(c.pos(n), "", "a program is a list of ops (- send: {to: ..., bytes: ...}), got %s", kindOf(n))
		return nil
	}
	var out []stmt
	for _, item := range n.Content {
		if s, ok := c.item(item); ok {
			out = append(out, s)
		}
	}
	return out
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// item compiles one list item.
func (c *programCompiler) item(n *yaml.Node) (stmt, bool) {
	if n.Kind != yaml.MappingNode {
		c.l.add(c.pos(n), "", "an op is a mapping (e.g. send: {to: 1, bytes: 8}), got %s", kindOf(n))
		return stmt{}, false
	}
	s := stmt{at: c.pos(n)}
	var action *yaml.Node
	var actionVal *yaml.Node
	var do *yaml.Node
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "if":
			s.cond = c.value(v, k.Value, false)
		case "repeat":
			s.loop = c.value(v, k.Value, false)
		case "var":
			if v.Kind != yaml.ScalarNode || v.Value == "" || !isLetter(v.Value[0]) || slices.Contains([]string{"rank", "size"}, v.Value) {
				c.l.add(c.pos(v), "", "var must be a name other than rank and size, got %s", kindOf(v))
				ok = false
			}
			s.v = v.Value
		case "do":
			do = v
		default:
			kd, known := kindByName(k.Value)
			_, prog := programArgs[kd]
			if !known || !prog {
				c.l.add(c.pos(k), "", "unknown op %q (the ops are %s; repeat, var, do, if)", k.Value, programOps())
				ok = false
				continue
			}
			if action != nil {
				c.l.add(c.pos(k), k.Value, "an item holds one op, this one has %s too", action.Value)
				ok = false
				continue
			}
			action, actionVal, s.kind = k, v, kd
		}
	}
	switch {
	case !ok:
		return s, false
	case s.loop != nil || do != nil:
		if s.loop == nil || do == nil || action != nil {
			c.l.add(s.at, "", "a loop is repeat: COUNT, do: [ops] (and optionally var: NAME), with no op beside them")
			return s, false
		}
		s.body = c.list(do)
		return s, true
	case action == nil:
		c.l.add(s.at, "", "the item names no op (the ops are %s)", programOps())
		return s, false
	case s.v != "":
		c.l.add(s.at, action.Value, "var belongs to a loop (repeat, var, do)")
		return s, false
	}
	s.at = c.pos(action)
	s.args = map[string]*value{}
	want := programArgs[s.kind]
	switch {
	case actionVal.Kind == yaml.ScalarNode && (actionVal.Value == "" || actionVal.Tag == "!!null"):
	case actionVal.Kind != yaml.MappingNode:
		c.l.add(c.pos(actionVal), action.Value, "the args are a mapping (%s), got %s", strings.Join(want, ", "), kindOf(actionVal))
		return s, false
	default:
		for i := 0; i+1 < len(actionVal.Content); i += 2 {
			k, v := actionVal.Content[i], actionVal.Content[i+1]
			if !slices.Contains(want, k.Value) {
				c.l.add(c.pos(k), action.Value, "unknown arg %q (%s takes %s)", k.Value, action.Value, argList(want))
				ok = false
				continue
			}
			s.args[k.Value] = c.value(v, k.Value, k.Value == "flops" || k.Value == "seconds")
		}
	}
	for _, a := range want {
		if _, given := s.args[a]; !given && a != "tag" && a != "root" && a != "recv_bytes" {
			c.l.add(c.pos(actionVal), action.Value, "missing arg %s", a)
			ok = false
		}
	}
	return s, ok
}

func argList(a []string) string {
	if len(a) == 0 {
		return "no args"
	}
	return strings.Join(a, ", ")
}

func programOps() string {
	var names []string
	for _, k := range Kinds() {
		if _, ok := programArgs[k]; ok {
			names = append(names, k.String())
		}
	}
	return strings.Join(names, ", ")
}

// value compiles an arg: a number, or an expression.
func (c *programCompiler) value(n *yaml.Node, name string, float bool) *value {
	v := &value{at: c.pos(n), src: n.Value}
	if n.Kind != yaml.ScalarNode {
		c.l.add(c.pos(n), "", "%s must be a number or an expression, got %s", name, kindOf(n))
		return v
	}
	if float {
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
				c.l.add(c.pos(n), "", "%s must be a non-negative number, got %s", name, n.Value)
			}
			v.f, v.isF = f, true
			return v
		}
	}
	e, off, err := parseExpr(n.Value)
	if err != nil {
		col := n.Column + off
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			col++
		}
		c.l.add(Pos{c.file, n.Line, col}, "", "%s: %v in %q", name, err, n.Value)
		return v
	}
	v.e = e
	return v
}

// evalAt evaluates v for rank; an error is reported once per place.
func (c *programCompiler) eval(v *value, env map[string]int64, rank int, what string) (int64, bool) {
	if v.isF {
		return int64(v.f), true
	}
	x, err := v.e.eval(env)
	if err != nil {
		if !c.seen[v.at] {
			c.seen[v.at] = true
			c.l.add(v.at, "", "%s %q on rank %d: %v", what, v.src, rank, err)
		}
		return 0, false
	}
	return x, true
}

// bad reports a value out of range once per place.
func (c *programCompiler) bad(v *value, action, format string, a ...any) {
	if !c.seen[v.at] {
		c.seen[v.at] = true
		c.l.add(v.at, action, format, a...)
	}
}

// run emits the ops of body for rank.
func (c *programCompiler) run(body []stmt, env map[string]int64, rank, size int, out []Op) []Op {
	for _, s := range body {
		c.steps++
		if c.over() {
			return out
		}
		if s.cond != nil {
			x, ok := c.eval(s.cond, env, rank, "if")
			if !ok || x == 0 {
				continue
			}
		}
		if s.loop != nil {
			n, ok := c.eval(s.loop, env, rank, "repeat")
			if !ok {
				continue
			}
			if n < 0 || n > maxProgramOps {
				c.bad(s.loop, "", "repeat must be between 0 and %d, got %d on rank %d", maxProgramOps, n, rank)
				continue
			}
			saved, had := env[s.v]
			for i := range n {
				if s.v != "" {
					env[s.v] = i
				}
				c.steps++
				out = c.run(s.body, env, rank, size, out)
				if c.over() {
					break
				}
			}
			if s.v != "" {
				if had {
					env[s.v] = saved
				} else {
					delete(env, s.v)
				}
			}
			continue
		}
		if op, ok := c.op(s, env, rank, size); ok {
			out = append(out, op)
			c.ops++
		}
	}
	return out
}

// op evaluates one op's args for rank.
func (c *programCompiler) op(s stmt, env map[string]int64, rank, size int) (Op, bool) {
	op := Op{Kind: s.kind, At: s.at}
	ok := true
	get := func(name string, lo, hi int64, def int64) int {
		v, given := s.args[name]
		if !given {
			return int(def)
		}
		x, good := c.eval(v, env, rank, name)
		if !good {
			ok = false
			return 0
		}
		if x < lo || x > hi {
			c.bad(v, s.kind.String(), "%s %q is %d on rank %d, must be between %d and %d", name, v.src, x, rank, lo, hi)
			ok = false
			return 0
		}
		return int(x)
	}
	flt := func(name string) float64 {
		v := s.args[name]
		if v.isF {
			return v.f
		}
		x, good := c.eval(v, env, rank, name)
		if !good || x < 0 {
			if good {
				c.bad(v, s.kind.String(), "%s %q is %d on rank %d, must not be negative", name, v.src, x, rank)
			}
			ok = false
		}
		return float64(x)
	}
	last := int64(size - 1)
	switch s.kind {
	case Send, Isend:
		op.Peer, op.Bytes, op.Tag = get("to", 0, last, 0), get("bytes", 0, maxOpBytes, 0), get("tag", 0, 1<<30, 0)
	case Recv, Irecv:
		op.Peer, op.Bytes, op.Tag = get("from", 0, last, 0), get("bytes", 0, maxOpBytes, 0), get("tag", 0, 1<<30, 0)
	case SendRecv:
		op.Peer, op.Src, op.Bytes = get("to", 0, last, 0), get("from", 0, last, 0), get("bytes", 0, maxOpBytes, 0)
		op.RecvBytes = get("recv_bytes", 0, maxOpBytes, int64(op.Bytes))
	case Wait, Test:
		op.Src, op.Peer, op.Tag = get("src", 0, last, 0), get("dst", 0, last, 0), get("tag", 0, 1<<30, 0)
		if ok && op.Src != rank && op.Peer != rank {
			c.bad(s.args["src"], s.kind.String(), "the request (src %d, dst %d) is not rank %d's", op.Src, op.Peer, rank)
			ok = false
		}
	case Bcast, Reduce:
		op.Bytes, op.Peer = get("bytes", 0, maxOpBytes, 0), get("root", 0, last, 0)
	case Gather, Scatter:
		op.Bytes, op.Peer = get("bytes", 0, maxOpBytes, 0), get("root", 0, last, 0)
		op.RecvBytes = op.Bytes
	case Alltoall, Allgather:
		op.Bytes = get("bytes", 0, maxOpBytes, 0)
		op.RecvBytes = op.Bytes
	case Allreduce, Scan, Exscan:
		op.Bytes = get("bytes", 0, maxOpBytes, 0)
	case Compute:
		op.Flops = flt("flops")
	case Sleep:
		op.Seconds = flt("seconds")
	}
	return op, ok
}

package trace

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
)

// SimGrid's time-independent trace format, as its version 3.32 writes it
// (smpirun -trace-ti; src/instr/instr_private.hpp, the TIData classes) and
// replays it (src/smpi/internals/smpi_replay.cpp):
//
//   - the index file (tracing/filename) lists one file per rank, in rank
//     order, one path a line; smpirun writes them relative to its working
//     directory, under a directory named after the index plus "_files".
//     A relative path resolves against the index file's own directory, so
//     a trace directory can be moved; a path that does not exist there
//     but names the index's "_files" directory resolves to that directory
//     beside the index (how smpirun writes it from another directory).
//   - each line of a rank's file is "RANK ACTION ARGS...", RANK counted
//     from 0; counts are in elements of the datatype the action names (a
//     number: datatypeBytes), MPI_BYTE when it names none (MPI_DOUBLE
//     when the trace's init has an argument).
//
// The arguments of each action (n is the number of ranks; [x] optional):
//
//	init [x]                          finalize
//	comm_size [n]  comm_split  comm_dup
//	send|isend|recv|irecv PEER TAG COUNT [DT]   (recv, irecv: PEER -333 any source, TAG -444 any tag)
//	sendRecv SCOUNT DST RCOUNT SRC [SDT [RDT]]
//	test|wait SRC DST TAG             waitall [COUNT]
//	barrier                           bcast COUNT [ROOT [DT]]
//	reduce COUNT FLOPS [ROOT [DT]]    allreduce|scan|exscan COUNT FLOPS [DT]
//	alltoall SCOUNT RCOUNT [SDT [RDT]]
//	alltoallv SSUM SCOUNTS(n) RSUM RCOUNTS(n) [SDT [RDT]]
//	gather|scatter SCOUNT RCOUNT [ROOT [SDT [RDT]]]
//	gatherv SCOUNT RCOUNTS(n) ROOT [SDT [RDT]]
//	scatterv SCOUNTS(n) RCOUNT ROOT [SDT [RDT]]
//	allgather SCOUNT RCOUNT [SDT [RDT]]
//	allgatherv SCOUNT RCOUNTS(n) [SDT [RDT]]
//	reducescatter RCOUNTS(n) FLOPS [DT]
//	compute FLOPS                     sleep SECONDS

// Error is an error at a place of a trace or program: file, line,
// column, the action it is in, and what was wrong.
type Error struct {
	At     Pos
	Action string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.At.File)
	if e.At.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.At.Line)
		if e.At.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.At.Col)
		}
	}
	b.WriteString(": ")
	if e.Action != "" {
		b.WriteString("action " + e.Action + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// MaxErrors is the most errors one parse reports.
const MaxErrors = 50

// errList collects errors up to MaxErrors.
type errList struct{ errs []error }

func (l *errList) add(at Pos, action, format string, a ...any) {
	if len(l.errs) < MaxErrors {
		l.errs = append(l.errs, &Error{At: at, Action: action, Msg: fmt.Sprintf(format, a...)})
	} else if len(l.errs) == MaxErrors {
		l.errs = append(l.errs, fmt.Errorf("%s: too many errors (the first %d are listed)", at.File, MaxErrors))
	}
}

func (l *errList) full() bool { return len(l.errs) > MaxErrors }

func (l *errList) err() error { return errors.Join(l.errs...) }

// Reader reads a file by name (os.ReadFile, or an embedded tree's).
type Reader func(name string) ([]byte, error)

// maxRanks bounds a trace's ranks (a typo in an index must not allocate
// millions); the machine says how many it can hold.
const maxRanks = 1 << 16

// maxOpBytes bounds one op's bytes: a larger message is a typo, or a
// machine's memory would refuse it anyway.
const maxOpBytes = 1 << 30

// ParseIndex reads the index file index with read, then every rank's
// file, and returns the program, or every error found (each a *Error,
// file:line:col and the action).
func ParseIndex(read Reader, index string) (*Program, error) {
	data, err := read(index)
	if err != nil {
		return nil, fmt.Errorf("trace index: %w", err)
	}
	var l errList
	var files []string
	var lines []int
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.TrimSpace(line) != line {
			l.add(Pos{index, i + 1, 1}, "", "a rank's file name has leading or trailing blanks: %q", line)
			continue
		}
		files = append(files, line)
		lines = append(lines, i+1)
	}
	if len(files) == 0 && len(l.errs) == 0 {
		l.add(Pos{index, 1, 1}, "", "the index lists no rank's file (one path a line, in rank order)")
	}
	if len(files) > maxRanks {
		l.add(Pos{index, lines[maxRanks], 1}, "", "more than %d ranks", maxRanks)
		return nil, l.err()
	}
	if len(l.errs) > 0 {
		return nil, l.err()
	}
	dir := path.Dir(index)
	contents := make([][]byte, len(files))
	names := make([]string, len(files))
	for r, f := range files {
		name := resolve(read, index, dir, f)
		names[r] = name
		b, err := read(name)
		if err != nil {
			l.add(Pos{index, lines[r], 1}, "", "rank %d's file %s: %v", r, f, err)
			continue
		}
		contents[r] = b
	}
	if len(l.errs) > 0 {
		return nil, l.err()
	}
	return parseRanks(index, names, contents)
}

// resolve is the name of a rank's file f listed in index (in dir).
func resolve(read Reader, index, dir, f string) string {
	if path.IsAbs(f) {
		return f
	}
	name := path.Join(dir, f)
	if _, err := read(name); err == nil {
		return name
	}
	// smpirun run elsewhere: "out/app.txt_files/rank-1.txt" for index
	// out/app.txt.
	files := path.Base(index) + "_files"
	if i := strings.Index(f, files+"/"); i == 0 || (i > 0 && f[i-1] == '/') {
		return path.Join(dir, f[i:])
	}
	return name
}

// ParseRanks parses rank files given by name and content (rank r's file
// is names[r]), for tests and the fuzz target: index names the trace in
// errors that concern it as a whole.
func parseRanks(index string, names []string, contents [][]byte) (*Program, error) {
	var l errList
	p := &Program{Source: index, Ranks: make([][]Op, len(names))}
	dt := dtByte
	for r := range names {
		if l.full() {
			break
		}
		p.Ranks[r] = parseRank(&l, names[r], contents[r], r, len(names), &dt)
	}
	if len(l.errs) == 0 {
		checkProgram(&l, p)
	}
	if len(l.errs) > 0 {
		return nil, l.err()
	}
	return p, nil
}

// token is a word of a line and its 1-based column.
type token struct {
	s   string
	col int
}

func tokens(line string) []token {
	var out []token
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			out = append(out, token{line[i:j], i + 1})
		}
		i = j
	}
	return out
}

// lineParser parses the arguments of one action.
type lineParser struct {
	l      *errList
	file   string
	line   int
	action string
	args   []token
	end    int // column after the line's last character
	bad    bool
	dt     *int
	size   int
	rank   int
}

func (lp *lineParser) errorf(col int, format string, a ...any) {
	lp.bad = true
	lp.l.add(Pos{lp.file, lp.line, col}, lp.action, format, a...)
}

// arg returns argument i's token, or reports it missing as what.
func (lp *lineParser) arg(i int, what string) (token, bool) {
	if i < len(lp.args) {
		return lp.args[i], true
	}
	lp.errorf(lp.end, "missing %s (argument %d)", what, i+1)
	return token{}, false
}

func (lp *lineParser) int(i int, what string, lo, hi int) int {
	t, ok := lp.arg(i, what)
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(t.s)
	if err != nil {
		lp.errorf(t.col, "%s must be an integer, got %q", what, t.s)
		return 0
	}
	if v < lo || v > hi {
		lp.errorf(t.col, "%s must be between %d and %d, got %d", what, lo, hi, v)
		return 0
	}
	return v
}

// peer is a rank number, or the wildcard any when any is not 0.
func (lp *lineParser) peer(i int, what string, any int) int {
	t, ok := lp.arg(i, what)
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(t.s)
	switch {
	case err != nil:
		lp.errorf(t.col, "%s must be a rank, got %q", what, t.s)
	case any != 0 && v == any:
	case v < 0 || v >= lp.size:
		if any != 0 {
			lp.errorf(t.col, "%s must be a rank from 0 to %d or %d (any), got %d", what, lp.size-1, any, v)
		} else {
			lp.errorf(t.col, "%s must be a rank from 0 to %d, got %d", what, lp.size-1, v)
		}
	}
	return v
}

func (lp *lineParser) tag(i int, any bool) int {
	t, ok := lp.arg(i, "tag")
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(t.s)
	switch {
	case err != nil:
		lp.errorf(t.col, "tag must be an integer, got %q", t.s)
	case any && v == AnyTag:
	case v < 0 || v > 1<<30:
		lp.errorf(t.col, "tag must be between 0 and %d, got %d", 1<<30, v)
	}
	return v
}

// count is argument i, a count of elements (checked later against the
// datatype) as an int.
func (lp *lineParser) count(i int, what string) int { return lp.int(i, what, 0, maxOpBytes) }

// dtype is the size of the datatype at argument i, or of the default
// datatype when the line has no argument i.
func (lp *lineParser) dtype(i int) int {
	if i >= len(lp.args) {
		return datatypeBytes[*lp.dt]
	}
	t := lp.args[i]
	v, err := strconv.Atoi(t.s)
	if err != nil {
		lp.errorf(t.col, "datatype must be a number (SimGrid's datatype id), got %q", t.s)
		return 1
	}
	n, ok := datatypeBytes[v]
	if !ok {
		lp.errorf(t.col, "datatype %d is not one of MPI's predefined datatypes (a derived datatype has no size a replay can know)", v)
		return 1
	}
	return n
}

func (lp *lineParser) float(i int, what string) float64 {
	t, ok := lp.arg(i, what)
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(t.s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		lp.errorf(t.col, "%s must be a non-negative number, got %q", what, t.s)
		return 0
	}
	return v
}

// bytes is count elements of dt bytes, bounded.
func (lp *lineParser) bytes(i, count, dt int) int {
	b := int64(count) * int64(dt)
	if b > maxOpBytes {
		col := lp.end
		if i < len(lp.args) {
			col = lp.args[i].col
		}
		lp.errorf(col, "%d elements of %d bytes is more than %d bytes", count, dt, maxOpBytes)
		return 0
	}
	return int(b)
}

// counts are n counts from argument i, in bytes of dt (applied by the
// caller once the datatype is known).
func (lp *lineParser) counts(i, n int, what string) []int {
	out := make([]int, n)
	for k := range n {
		out[k] = lp.count(i+k, fmt.Sprintf("%s[%d]", what, k))
	}
	return out
}

func (lp *lineParser) scale(i int, c []int, dt int) []int {
	out := make([]int, len(c))
	for k, v := range c {
		out[k] = lp.bytes(i, v, dt)
	}
	return out
}

// nargs checks that the line has from lo to hi arguments.
func (lp *lineParser) nargs(lo, hi int) bool {
	switch {
	case len(lp.args) > hi:
		lp.errorf(lp.args[hi].col, "%d arguments, at most %d (extra %q)", len(lp.args), hi, lp.args[hi].s)
		return false
	case len(lp.args) < lo:
		lp.errorf(lp.end, "%d arguments, at least %d", len(lp.args), lo)
		return false
	}
	return true
}

// parseRank parses rank r's file.
func parseRank(l *errList, name string, data []byte, r, size int, dt *int) []Op {
	var ops []Op
	for i, line := range strings.Split(string(data), "\n") {
		if l.full() {
			break
		}
		line = strings.TrimRight(line, "\r")
		toks := tokens(line)
		if len(toks) == 0 {
			continue
		}
		at := Pos{name, i + 1, toks[0].col}
		if len(toks) < 2 {
			l.add(at, "", "a line is RANK ACTION ARGS..., got %q", line)
			continue
		}
		act := toks[1].s
		if v, err := strconv.Atoi(toks[0].s); err != nil || v != r {
			l.add(at, "", "the line's rank is %q, but this is rank %d's file (the index's line %d)", toks[0].s, r, r+1)
			continue
		}
		k, ok := kindByName(act)
		if !ok {
			l.add(Pos{name, i + 1, toks[1].col}, "", "unknown action %q (the actions are %s)", act, strings.Join(kindNames[:], ", "))
			continue
		}
		lp := &lineParser{l: l, file: name, line: i + 1, action: act, args: toks[2:], end: len(line) + 1, dt: dt, size: size, rank: r}
		op, ok := lp.parse(k)
		if ok && !lp.bad {
			op.At = Pos{name, i + 1, toks[1].col}
			ops = append(ops, op)
		}
	}
	return ops
}

// parse parses the arguments of an action of kind k.
func (lp *lineParser) parse(k Kind) (Op, bool) {
	op := Op{Kind: k}
	n := lp.size
	// Optional trailing datatypes: sdt and rdt at argument i.
	two := func(i int) (int, int) {
		s := lp.dtype(i)
		rd := lp.dtype(i + 1)
		if i+1 >= len(lp.args) && i < len(lp.args) {
			rd = s
		}
		return s, rd
	}
	switch k {
	case Init:
		if !lp.nargs(0, 1) {
			return op, false
		}
		if len(lp.args) == 1 {
			*lp.dt = dtDouble
		}
	case Finalize, CommSplit, CommDup, Barrier:
		if !lp.nargs(0, 0) {
			return op, false
		}
	case CommSize:
		if !lp.nargs(0, 1) {
			return op, false
		}
		if len(lp.args) == 1 {
			op.Size = lp.int(0, "size", 1, maxRanks)
		}
	case Send, Isend, Recv, Irecv:
		if !lp.nargs(3, 4) {
			return op, false
		}
		recv := k == Recv || k == Irecv
		anySrc := 0
		if recv {
			anySrc = AnySource
		}
		op.Peer = lp.peer(0, map[bool]string{true: "source", false: "destination"}[recv], anySrc)
		op.Tag = lp.tag(1, recv)
		op.Bytes = lp.bytes(2, lp.count(2, "count"), lp.dtype(3))
	case SendRecv:
		if !lp.nargs(4, 6) {
			return op, false
		}
		sc := lp.count(0, "send count")
		op.Peer = lp.peer(1, "destination", 0)
		rc := lp.count(2, "receive count")
		op.Src = lp.peer(3, "source", AnySource)
		s, r := two(4)
		op.Bytes, op.RecvBytes = lp.bytes(0, sc, s), lp.bytes(2, rc, r)
	case Test, Wait:
		if !lp.nargs(3, 3) {
			return op, false
		}
		op.Src = lp.peer(0, "source", AnySource)
		op.Peer = lp.peer(1, "destination", 0)
		op.Tag = lp.tag(2, true)
		if !lp.bad && op.Src != lp.rank && op.Peer != lp.rank {
			lp.errorf(lp.args[0].col, "the request (source %d, destination %d) is not rank %d's", op.Src, op.Peer, lp.rank)
		}
	case WaitAll:
		if !lp.nargs(0, 1) {
			return op, false
		}
		if len(lp.args) == 1 {
			op.Size = lp.int(0, "count", 0, 1<<30)
		}
	case Bcast:
		if !lp.nargs(1, 3) {
			return op, false
		}
		c := lp.count(0, "count")
		if len(lp.args) > 1 {
			op.Peer = lp.peer(1, "root", 0)
		}
		op.Bytes = lp.bytes(0, c, lp.dtype(2))
	case Reduce:
		if !lp.nargs(2, 4) {
			return op, false
		}
		c := lp.count(0, "count")
		op.Flops = lp.float(1, "computation (flops)")
		if len(lp.args) > 2 {
			op.Peer = lp.peer(2, "root", 0)
		}
		op.Bytes = lp.bytes(0, c, lp.dtype(3))
	case Allreduce, Scan, Exscan:
		if !lp.nargs(2, 3) {
			return op, false
		}
		c := lp.count(0, "count")
		op.Flops = lp.float(1, "computation (flops)")
		op.Bytes = lp.bytes(0, c, lp.dtype(2))
	case Alltoall, Allgather:
		if !lp.nargs(2, 4) {
			return op, false
		}
		sc, rc := lp.count(0, "send count"), lp.count(1, "receive count")
		s, r := two(2)
		op.Bytes, op.RecvBytes = lp.bytes(0, sc, s), lp.bytes(1, rc, r)
	case Gather, Scatter:
		if !lp.nargs(2, 5) {
			return op, false
		}
		sc, rc := lp.count(0, "send count"), lp.count(1, "receive count")
		if len(lp.args) > 2 {
			op.Peer = lp.peer(2, "root", 0)
		}
		s, r := two(3)
		op.Bytes, op.RecvBytes = lp.bytes(0, sc, s), lp.bytes(1, rc, r)
	case Alltoallv:
		if !lp.nargs(2+2*n, 4+2*n) {
			return op, false
		}
		ssum := lp.count(0, "send total")
		sc := lp.counts(1, n, "send counts")
		rsum := lp.count(1+n, "receive total")
		rc := lp.counts(2+n, n, "receive counts")
		lp.sum(0, ssum, sc, "send")
		lp.sum(1+n, rsum, rc, "receive")
		s, r := two(2 + 2*n)
		op.Counts, op.RecvCounts = lp.scale(1, sc, s), lp.scale(2+n, rc, r)
	case Gatherv:
		if !lp.nargs(2+n, 4+n) {
			return op, false
		}
		sc := lp.count(0, "send count")
		rc := lp.counts(1, n, "receive counts")
		op.Peer = lp.peer(1+n, "root", 0)
		s, r := two(2 + n)
		op.Bytes, op.RecvCounts = lp.bytes(0, sc, s), lp.scale(1, rc, r)
	case Scatterv:
		if !lp.nargs(2+n, 4+n) {
			return op, false
		}
		sc := lp.counts(0, n, "send counts")
		rc := lp.count(n, "receive count")
		op.Peer = lp.peer(n+1, "root", 0)
		s, r := two(2 + n)
		op.Counts, op.RecvBytes = lp.scale(0, sc, s), lp.bytes(n, rc, r)
	case Allgatherv:
		if !lp.nargs(1+n, 3+n) {
			return op, false
		}
		sc := lp.count(0, "send count")
		rc := lp.counts(1, n, "receive counts")
		s, r := two(1 + n)
		op.Bytes, op.RecvCounts = lp.bytes(0, sc, s), lp.scale(1, rc, r)
	case ReduceScatter:
		if !lp.nargs(1+n, 2+n) {
			return op, false
		}
		rc := lp.counts(0, n, "receive counts")
		op.Flops = lp.float(n, "computation (flops)")
		op.RecvCounts = lp.scale(0, rc, lp.dtype(n+1))
	case Compute:
		if !lp.nargs(1, 1) {
			return op, false
		}
		op.Flops = lp.float(0, "flops")
	case Sleep:
		if !lp.nargs(1, 1) {
			return op, false
		}
		op.Seconds = lp.float(0, "seconds")
	}
	return op, true
}

// sum checks a v-variant's total (argument i) against its counts.
func (lp *lineParser) sum(i, total int, counts []int, what string) {
	s := 0
	for _, c := range counts {
		s += c
	}
	if !lp.bad && s != total {
		lp.errorf(lp.args[i].col, "%s total %d is not the sum of the %s counts (%d)", what, total, what, s)
	}
}

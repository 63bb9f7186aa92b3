package net

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// A transcript (testdata/*.txt) is one small network case: its input (the
// network, its configuration, the messages injected, the faults), then a
// separator line, then the outcome the network gives (every handler call
// and route in time order, each message's summary, every link's and
// channel's occupancy). The input is written by hand; go test -update
// rewrites the outcome from a run.
//
// Input lines ('#' starts a comment; times take a unit: ps, ns, us, ms):
//
//	net t3d dims=XxYxZ latency=T mbps=F port-latency=T
//	    a torus with two traffic classes whose node n carries PEs 2n and
//	    2n+1, each with an injection and an ejection port (links
//	    "portK" of port-latency, one virtual channel per class on one
//	    physical channel "inP"/"outP" per PE): the T3D's network; the
//	    endpoints of send are PEs
//	net torus dims=XxYxZ latency=T mbps=F [classes=N]
//	net ringtorus size=WxH latency=T mbps=F
//	net multistage nodes=N radix=R latency=T mbps=F
//	config [mtu=N] [header=N] [unit=N] [packets] [jitter=T]
//	seed N
//	send AT SRC->DST bytes=N [class=C] [rate=MB/s] [reply=N] [quiet]
//	    reply: when delivered, DST sends N bytes back to SRC on class 1
//	    from inside the handler; quiet: the handler ignores Sent
//	down AT LINK [for=T]        (for good without for)
//	crc LINK count=N retry=T    (the next N units crossing LINK)
//	crc-rate LINK p=F retry=T   (each unit, drawn from the seed)
//	order AT x,y,z | x-first | y-first   (a torus's dimension order, a
//	                                      ring torus's ring order)
//
// Link names are the network's, with the spaces of a torus link's
// coordinates written as commas: t[1,0,0]+x.c0vc0 is virtual channel 0
// of class 0 of the channel leaving node (1,0,0) in the +x direction.
type transcript struct {
	file  string
	input string // the input part, separator line included, verbatim
	want  string // the outcome part
	net   netSpec
	cfg   Config
	seed  uint64
	sends []sendSpec
	fault []faultSpec
}

type netSpec struct {
	line        int
	kind        string // t3d, torus, ringtorus, multistage
	dims        [3]int // torus, t3d; ringtorus: w, h
	nodes       int    // multistage
	radix       int    // multistage
	classes     int    // torus
	latency     sim.Time
	portLatency sim.Time // t3d
	mbps        float64
}

type sendSpec struct {
	line                    int
	at                      sim.Time
	src, dst, class, nbytes int
	rate                    float64 // MB/s
	reply                   int
	quiet                   bool
}

type faultSpec struct {
	line      int
	kind      string // down, crc, crc-rate, order
	link      string
	at, d     sim.Time
	retry     sim.Time
	count     int
	p         float64
	order     [3]int    // torus
	ringOrder RingOrder // ringtorus
	ring      bool      // the order is a ring torus's
	text      string    // the order as written
}

// separator ends a transcript's input.
const separator = "=== outcome (go test ./sim/net -run TestTranscripts -update rewrites what follows)"

// parseError is an error at a line of a transcript.
func parseError(file string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...))
}

// parseTranscript reads a transcript; file names it in errors.
func parseTranscript(file string, data []byte) (*transcript, error) {
	tc := &transcript{file: file}
	text := string(data)
	lines := strings.SplitAfter(text, "\n")
	seen := map[string]int{}
	end := -1
	for i, raw := range lines {
		ln := i + 1
		line := strings.TrimRight(raw, "\r\n")
		if line == separator {
			end = i
			break
		}
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "net", "config", "seed":
			if prev, ok := seen[f[0]]; ok {
				return nil, parseError(file, ln, "second %q line (the first is line %d)", f[0], prev)
			}
			seen[f[0]] = ln
		}
		var err error
		switch f[0] {
		case "net":
			err = tc.parseNet(f[1:], ln)
		case "config":
			err = tc.parseConfig(f[1:])
		case "seed":
			if len(f) != 2 {
				err = errors.New("want: seed N")
				break
			}
			tc.seed, err = strconv.ParseUint(f[1], 10, 64)
		case "send":
			err = tc.parseSend(f[1:], ln)
		case "down", "crc", "crc-rate", "order":
			err = tc.parseFault(f[0], f[1:], ln)
		default:
			err = fmt.Errorf("unknown directive %q (want net, config, seed, send, down, crc, crc-rate or order)", f[0])
		}
		if err != nil {
			return nil, parseError(file, ln, "%v", err)
		}
	}
	if end < 0 {
		return nil, parseError(file, len(lines), "no separator line %q", separator)
	}
	if _, ok := seen["net"]; !ok {
		return nil, parseError(file, 1, "no net line")
	}
	if len(tc.sends) == 0 {
		return nil, parseError(file, 1, "no send line")
	}
	tc.input = strings.Join(lines[:end+1], "")
	if !strings.HasSuffix(tc.input, "\n") {
		tc.input += "\n"
	}
	tc.want = strings.Join(lines[end+1:], "")
	return tc, nil
}

// kv splits key=value arguments; a bare word is a flag (value "").
// Every key must be in allowed, at most once.
func kv(args []string, allowed ...string) (map[string]string, error) {
	m := map[string]string{}
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("unknown argument %q (want %s)", a, strings.Join(allowed, ", "))
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("argument %q given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

// need fails unless every key is in m.
func need(m map[string]string, keys ...string) error {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("missing %s=", k)
		}
	}
	return nil
}

// parseTime reads a time with its unit (0 may go without).
func parseTime(s string) (sim.Time, error) {
	if s == "0" {
		return 0, nil
	}
	units := []struct {
		suffix string
		unit   sim.Time
	}{{"ps", sim.Picosecond}, {"ns", sim.Nanosecond}, {"us", sim.Microsecond}, {"ms", sim.Millisecond}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("time %q: %w", s, err)
			}
			if v > 1e6 { // 1,000 s: more than any case runs
				return 0, fmt.Errorf("time %q is too large", s)
			}
			t, err := sim.FromFloat(v, u.unit)
			if err != nil {
				return 0, fmt.Errorf("time %q: %w", s, err)
			}
			return t, nil
		}
	}
	return 0, fmt.Errorf("time %q has no unit (ps, ns, us, ms)", s)
}

// parseInt reads a whole number in [lo, hi].
func parseInt(what, s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", what, s)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s %d out of range [%d, %d]", what, v, lo, hi)
	}
	return v, nil
}

// parseFloat reads a finite number in [lo, hi].
func parseFloat(what, s string, lo, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q is not a number in [%g, %g]", what, s, lo, hi)
	}
	return v, nil
}

// parseShape reads AxB or AxBxC, each size in [1, 16] (a case to check
// by hand is small).
func parseShape(s string, n int) ([3]int, error) {
	d := [3]int{1, 1, 1}
	parts := strings.Split(s, "x")
	if len(parts) != n {
		return d, fmt.Errorf("shape %q: want %d sizes separated by x", s, n)
	}
	for i, p := range parts {
		v, err := parseInt("size", p, 1, 16)
		if err != nil {
			return d, fmt.Errorf("shape %q: %w", s, err)
		}
		d[i] = v
	}
	return d, nil
}

func (tc *transcript) parseNet(args []string, ln int) error {
	if len(args) == 0 {
		return errors.New("want: net t3d|torus|ringtorus|multistage KEY=VALUE...")
	}
	ns := netSpec{line: ln, kind: args[0], classes: 1}
	var m map[string]string
	var err error
	switch ns.kind {
	case "t3d":
		if m, err = kv(args[1:], "dims", "latency", "mbps", "port-latency"); err == nil {
			err = need(m, "dims", "latency", "mbps", "port-latency")
		}
		ns.classes = 2
	case "torus":
		if m, err = kv(args[1:], "dims", "latency", "mbps", "classes"); err == nil {
			err = need(m, "dims", "latency", "mbps")
		}
	case "ringtorus":
		if m, err = kv(args[1:], "size", "latency", "mbps"); err == nil {
			err = need(m, "size", "latency", "mbps")
		}
	case "multistage":
		if m, err = kv(args[1:], "nodes", "radix", "latency", "mbps"); err == nil {
			err = need(m, "nodes", "radix", "latency", "mbps")
		}
	default:
		return fmt.Errorf("unknown network %q (want t3d, torus, ringtorus or multistage)", ns.kind)
	}
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "dims":
			ns.dims, err = parseShape(v, 3)
		case "size":
			ns.dims, err = parseShape(v, 2)
		case "latency":
			ns.latency, err = parseTime(v)
		case "port-latency":
			ns.portLatency, err = parseTime(v)
		case "mbps":
			ns.mbps, err = parseFloat("mbps", v, 0, 1e6)
		case "classes":
			ns.classes, err = parseInt("classes", v, 1, 4)
		case "nodes":
			ns.nodes, err = parseInt("nodes", v, 2, 256)
		case "radix":
			ns.radix, err = parseInt("radix", v, 2, 16)
		}
		if err != nil {
			return err
		}
	}
	tc.net = ns
	return nil
}

func (tc *transcript) parseConfig(args []string) error {
	m, err := kv(args, "mtu", "header", "unit", "packets", "jitter")
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "mtu":
			tc.cfg.MTU, err = parseInt("mtu", v, 0, 1<<20)
		case "header":
			tc.cfg.Header, err = parseInt("header", v, 0, 1<<20)
		case "unit":
			tc.cfg.Unit, err = parseInt("unit", v, 0, 1<<24)
		case "packets":
			if v != "" {
				err = fmt.Errorf("packets takes no value")
			}
			tc.cfg.Packets = true
		case "jitter":
			tc.cfg.Jitter, err = parseTime(v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (tc *transcript) parseSend(args []string, ln int) error {
	if len(args) < 2 {
		return errors.New("want: send AT SRC->DST bytes=N [class=C] [rate=MB/s] [reply=N] [quiet]")
	}
	s := sendSpec{line: ln}
	var err error
	if s.at, err = parseTime(args[0]); err != nil {
		return err
	}
	a, b, ok := strings.Cut(args[1], "->")
	if !ok {
		return fmt.Errorf("endpoints %q: want SRC->DST", args[1])
	}
	if s.src, err = parseInt("source", a, 0, 1<<16); err != nil {
		return err
	}
	if s.dst, err = parseInt("destination", b, 0, 1<<16); err != nil {
		return err
	}
	m, err := kv(args[2:], "bytes", "class", "rate", "reply", "quiet")
	if err == nil {
		err = need(m, "bytes")
	}
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "bytes":
			s.nbytes, err = parseInt("bytes", v, 0, 1<<24)
		case "class":
			s.class, err = parseInt("class", v, 0, 3)
		case "rate":
			s.rate, err = parseFloat("rate", v, 1e-3, 1e6)
		case "reply":
			s.reply, err = parseInt("reply", v, 0, 1<<24)
		case "quiet":
			if v != "" {
				err = fmt.Errorf("quiet takes no value")
			}
			s.quiet = true
		}
		if err != nil {
			return err
		}
	}
	tc.sends = append(tc.sends, s)
	return nil
}

func (tc *transcript) parseFault(kind string, args []string, ln int) error {
	f := faultSpec{line: ln, kind: kind}
	var err error
	switch kind {
	case "down":
		if len(args) < 2 {
			return errors.New("want: down AT LINK [for=T]")
		}
		if f.at, err = parseTime(args[0]); err != nil {
			return err
		}
		f.link = args[1]
		m, err := kv(args[2:], "for")
		if err != nil {
			return err
		}
		if v, ok := m["for"]; ok {
			if f.d, err = parseTime(v); err != nil {
				return err
			}
			if f.d == 0 {
				return errors.New("for=0: leave it out to take the link down for good")
			}
		}
	case "crc", "crc-rate":
		if len(args) < 1 {
			return fmt.Errorf("want: %s LINK ...", kind)
		}
		f.link = args[0]
		want := "count"
		if kind == "crc-rate" {
			want = "p"
		}
		m, err := kv(args[1:], want, "retry")
		if err == nil {
			err = need(m, want, "retry")
		}
		if err != nil {
			return err
		}
		if f.retry, err = parseTime(m["retry"]); err != nil {
			return err
		}
		if kind == "crc" {
			f.count, err = parseInt("count", m["count"], 1, 1<<20)
		} else {
			f.p, err = parseFloat("p", m["p"], 0, 1)
		}
		if err != nil {
			return err
		}
	case "order":
		if len(args) != 2 {
			return errors.New("want: order AT x,y,z|x-first|y-first")
		}
		if f.at, err = parseTime(args[0]); err != nil {
			return err
		}
		f.text = args[1]
		switch args[1] {
		case "x-first":
			f.ring, f.ringOrder = true, XFirst
		case "y-first":
			f.ring, f.ringOrder = true, YFirst
		default:
			dims := strings.Split(args[1], ",")
			if len(dims) != 3 {
				return fmt.Errorf("order %q: want a permutation of x,y,z, x-first or y-first", args[1])
			}
			var used [3]bool
			for i, d := range dims {
				k := strings.Index("xyz", d)
				if len(d) != 1 || k < 0 || used[k] {
					return fmt.Errorf("order %q: want a permutation of x,y,z", args[1])
				}
				used[k], f.order[i] = true, k
			}
		}
	}
	tc.fault = append(tc.fault, f)
	return nil
}

// TestTranscriptErrors: a bad transcript is rejected with its file and
// line.
func TestTranscriptErrors(t *testing.T) {
	const net = "net torus dims=2x1x1 latency=20ns mbps=100\n"
	const send = "send 0 0->1 bytes=8\n"
	const sep = separator + "\n"
	cases := []struct {
		name, text, want string
	}{
		{"no separator", net + send, "x.txt:3: no separator line"},
		{"no net", send + sep, "x.txt:1: no net line"},
		{"no send", net + sep, "x.txt:1: no send line"},
		{"unknown directive", net + "sned 0 0->1 bytes=8\n" + sep, `x.txt:2: unknown directive "sned"`},
		{"second net", net + net + send + sep, `x.txt:2: second "net" line (the first is line 1)`},
		{"unknown network", "net mesh\n" + send + sep, `x.txt:1: unknown network "mesh"`},
		{"missing key", "net torus dims=2x1x1 mbps=100\n" + send + sep, "x.txt:1: missing latency="},
		{"bad shape", "net torus dims=2x1 latency=20ns mbps=100\n" + send + sep, `x.txt:1: shape "2x1": want 3 sizes`},
		{"too large", "net torus dims=17x1x1 latency=20ns mbps=100\n" + send + sep, `x.txt:1: shape "17x1x1": size 17 out of range [1, 16]`},
		{"time without unit", net + "send 5 0->1 bytes=8\n" + sep, `x.txt:2: time "5" has no unit`},
		{"negative time", net + "send -5ns 0->1 bytes=8\n" + sep, "must not be negative"},
		{"bad endpoints", net + "send 0 0-1 bytes=8\n" + sep, `x.txt:2: endpoints "0-1": want SRC->DST`},
		{"no bytes", net + "send 0 0->1\n" + sep, "x.txt:2: missing bytes="},
		{"twice", net + "send 0 0->1 bytes=8 bytes=9\n" + sep, `x.txt:2: argument "bytes" given twice`},
		{"unknown argument", net + "send 0 0->1 bytes=8 colour=red\n" + sep, `x.txt:2: unknown argument "colour=red"`},
		{"bad order", net + send + "order 1us x,x,z\n" + sep, `x.txt:3: order "x,x,z": want a permutation`},
		{"crc without retry", net + send + "crc t[0,0,0]+x.c0vc0 count=1\n" + sep, "x.txt:3: missing retry="},
		{"bad p", net + send + "crc-rate l p=2 retry=1ns\n" + sep, `x.txt:3: p "2" is not a number in [0, 1]`},
		{"down for 0", net + send + "down 1us l for=0\n" + sep, "x.txt:3: for=0"},
		{"seed", net + "seed x\n" + send + sep, `x.txt:2: strconv.ParseUint: parsing "x"`},
		{"packets=yes", net + "config packets=yes\n" + send + sep, "x.txt:2: packets takes no value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseTranscript("x.txt", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	// Errors found when the network is built or run name the line too.
	play := []struct {
		name, text, want string
	}{
		{"no such link", net + send + "down 1us t[5,0,0]+x.c0vc0\n" + sep, `x.txt:3: no link "t[5,0,0]+x.c0vc0"`},
		{"ring order on a torus", net + send + "order 1us y-first\n" + sep, "x.txt:3: order"},
		{"ring torus of one column", "net ringtorus size=1x3 latency=20ns mbps=100\n" + send + sep, "x.txt:1: ring torus r: 1x3 nodes"},
	}
	for _, c := range play {
		t.Run(c.name, func(t *testing.T) {
			tc, err := parseTranscript("x.txt", []byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			_, err = tc.play(false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FuzzParseTranscript: the parser never panics, and an error always
// names the file and a line of it.
func FuzzParseTranscript(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("net t3d dims=2x1x1 latency=1ns mbps=1 port-latency=1ns\nsend 0 0->1 bytes=1 rate=1 reply=1 quiet\n" + separator + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tc, err := parseTranscript("f.txt", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.txt:") {
				t.Fatalf("error without its file and line: %v", err)
			}
			return
		}
		if !strings.HasSuffix(tc.input, separator+"\n") {
			t.Fatalf("input part %q does not end with the separator", tc.input)
		}
		if tc.input+tc.want != string(data) && tc.input+tc.want != string(data)+"\n" {
			t.Fatalf("input and outcome parts do not make the transcript")
		}
	})
}

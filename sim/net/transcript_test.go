package net

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

var update = flag.Bool("update", false, "rewrite the outcome part of the transcripts in testdata/")

// t3dLike is a torus of the given shape with two classes of traffic and,
// per node, two endpoints, each with an injection and an ejection port
// whose virtual channels (one per class) share one physical channel: the
// T3D's network.
type t3dLike struct {
	tor            *Torus
	inject, eject  [][2]*Link
	injCh, ejectCh []*Channel
}

func newT3DLike(dims [3]int, latency, portLatency sim.Time, mbps float64) (*t3dLike, error) {
	tor, err := NewTorusClasses("t", dims, latency, mbps, 2)
	if err != nil {
		return nil, err
	}
	x := &t3dLike{tor: tor}
	ports := NewLinkKind(NewNames(func(id uint32) string { return fmt.Sprint("port", id) }), portLatency, mbps)
	for pe := 0; pe < 2*tor.Nodes(); pe++ {
		in, out := NewChannel(fmt.Sprint("in", pe)), NewChannel(fmt.Sprint("out", pe))
		var inj, ej [2]*Link
		for c := range 2 {
			inj[c], ej[c] = ports.Link(uint32(4*pe+c)), ports.Link(uint32(4*pe+2+c))
			inj[c].Phys, ej[c].Phys = in, out
		}
		x.inject, x.eject = append(x.inject, inj), append(x.eject, ej)
		x.injCh, x.ejectCh = append(x.injCh, in), append(x.ejectCh, out)
	}
	return x, nil
}

func (x *t3dLike) Route(route []*Link, a, b, class int) ([]*Link, error) {
	if a < 0 || a >= len(x.inject) || b < 0 || b >= len(x.eject) || class < 0 || class > 1 {
		return route, fmt.Errorf("t3d: no PE %d or %d or class %d", a, b, class)
	}
	route = append(route, x.inject[a][class])
	route, err := x.tor.Route(route, a/2, b/2, class)
	if err != nil {
		return route, err
	}
	return append(route, x.eject[b][class]), nil
}

// torusLinks lists every virtual and physical channel of the torus,
// building them, in one order whatever the traffic builds first.
func torusLinks(tor *Torus) (links []*Link, chans []*Channel) {
	for node := 0; node < tor.Nodes(); node++ {
		for dim := range 3 {
			for _, dir := range []int{1, -1} {
				if ch := tor.Channel(node, dim, dir); ch != nil {
					chans = append(chans, ch)
				}
				for class := range tor.classes {
					for vc := range 2 {
						if l := tor.LinkClassVC(node, dim, dir, class, vc); l != nil {
							links = append(links, l)
						}
					}
				}
			}
		}
	}
	return links, chans
}

type ringTorusRouter struct{ t *RingTorus }

func (r ringTorusRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	if src < 0 || src >= r.t.Nodes() || dst < 0 || dst >= r.t.Nodes() {
		return route, fmt.Errorf("ring torus: no node %d or %d (%d nodes)", src, dst, r.t.Nodes())
	}
	return r.t.Route(route, src, dst, class)
}

type multistageRouter struct{ m *Multistage }

func (r multistageRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	return r.m.Route(route, src, dst, class)
}

type checkedTorusRouter struct{ t *Torus }

func (r checkedTorusRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	if src < 0 || src >= r.t.Nodes() || dst < 0 || dst >= r.t.Nodes() {
		return route, fmt.Errorf("torus: no node %d or %d (%d nodes)", src, dst, r.t.Nodes())
	}
	return r.t.Route(route, src, dst, class)
}

// fixedRouter declares its router's routes fixed: the network remembers
// them.
type fixedRouter struct{ Router }

func (fixedRouter) FixedRoutes() {}

// built is a transcript's network with what the outcome lists.
type built struct {
	router Router
	tor    *Torus     // torus, t3d
	rt     *RingTorus // ringtorus
	links  []*Link
	chans  []*Channel
}

func (tc *transcript) build() (*built, error) {
	ns := tc.net
	b := &built{}
	var err error
	switch ns.kind {
	case "t3d":
		var x *t3dLike
		if x, err = newT3DLike(ns.dims, ns.latency, ns.portLatency, ns.mbps); err != nil {
			break
		}
		b.router, b.tor = x, x.tor
		b.links, b.chans = torusLinks(x.tor)
		for pe := range x.inject {
			b.links = append(b.links, x.inject[pe][0], x.inject[pe][1], x.eject[pe][0], x.eject[pe][1])
			b.chans = append(b.chans, x.injCh[pe], x.ejectCh[pe])
		}
	case "torus":
		var tor *Torus
		if tor, err = NewTorusClasses("t", ns.dims, ns.latency, ns.mbps, ns.classes); err != nil {
			break
		}
		b.router, b.tor = checkedTorusRouter{tor}, tor
		b.links, b.chans = torusLinks(tor)
	case "ringtorus":
		var rt *RingTorus
		if rt, err = NewRingTorus("r", ns.dims[0], ns.dims[1], ns.latency, ns.mbps); err != nil {
			break
		}
		b.router, b.rt = ringTorusRouter{rt}, rt
		for y := range ns.dims[1] {
			for i := range ns.dims[0] {
				b.links = append(b.links, rt.Row(y).Out(i))
			}
		}
		for x := range ns.dims[0] {
			for i := range ns.dims[1] {
				b.links = append(b.links, rt.Col(x).Out(i))
			}
		}
	case "multistage":
		var ms *Multistage
		if ms, err = NewMultistage("s", ns.nodes, ns.radix, ns.latency, ns.mbps); err != nil {
			break
		}
		b.router = multistageRouter{ms}
		for i := range ns.nodes {
			b.links = append(b.links, ms.In(i))
		}
		size := 1
		for range ms.Stages() {
			size *= ns.radix
		}
		for s := range ms.Stages() {
			for a := range size {
				b.links = append(b.links, ms.Out(s, a))
			}
		}
	}
	if err != nil {
		return nil, parseError(tc.file, ns.line, "%v", err)
	}
	return b, nil
}

// linkName is a link's name as a transcript writes it: no spaces.
func linkName(l *Link) string { return strings.ReplaceAll(l.Name(), " ", ",") }

// fmtTime writes t in nanoseconds, with picoseconds when there are any.
func fmtTime(t sim.Time) string {
	if t%sim.Nanosecond == 0 {
		return fmt.Sprintf("%dns", t/sim.Nanosecond)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%03d", t/sim.Nanosecond, t%sim.Nanosecond), "0") + "ns"
}

// player runs a transcript and writes its outcome.
type player struct {
	eng     *sim.Engine
	n       *Network
	events  bytes.Buffer
	msgs    []*played
	current int // the message Send is routing, -1: none
}

// played is what became of a message.
type played struct {
	id        int
	msg       Msg
	reply     int
	from      int // the message this one replies to, -1: none
	sent      sim.Time
	done      sim.Time
	delivered bool
	err       error
	arrivals  int
	hops      int // the links of its first route
}

func (p *player) logf(format string, args ...any) {
	fmt.Fprintf(&p.events, "%12s  %s\n", fmtTime(p.eng.Now()), fmt.Sprintf(format, args...))
}

// loggingRouter logs every route the network asks for.
type loggingRouter struct {
	p *player
	r Router
}

func (lr loggingRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	base := len(route)
	route, err := lr.r.Route(route, src, dst, class)
	p := lr.p
	// Send asks for the first unit's route; a unit resent, or a later
	// unit after a link went down or up, asks from an event.
	who := fmt.Sprintf("route %d->%d c%d (a resent or later unit)", src, dst, class)
	if p.current >= 0 {
		who = fmt.Sprintf("route #%d", p.current)
		if err == nil {
			p.msgs[p.current].hops = len(route) - base
		}
	}
	if err != nil {
		p.logf("%s: none (%v)", who, err)
		return route, err
	}
	names := make([]string, 0, len(route)-base)
	for _, l := range route[base:] {
		names = append(names, linkName(l))
	}
	p.logf("%s: %s", who, strings.Join(names, " "))
	return route, nil
}

type playHandler struct {
	p  *player
	pm *played
}

type quietPlayHandler struct{ playHandler }

func (quietPlayHandler) IgnoresSent() {}

func (h *playHandler) Sent(m *Message) {
	h.pm.sent = h.p.eng.Now()
	h.p.logf("sent #%d", h.pm.id)
}

func (h *playHandler) Arrived(m *Message, off, n int) {
	h.pm.arrivals++
	h.p.logf("arrived #%d bytes [%d,%d)", h.pm.id, off, off+n)
}

func (h *playHandler) Delivered(m *Message) {
	pm, p := h.pm, h.p
	pm.done, pm.delivered = p.eng.Now(), true
	p.logf("delivered #%d", pm.id)
	if pm.reply > 0 {
		p.send(Msg{Src: pm.msg.Dst, Dst: pm.msg.Src, Class: 1, Bytes: pm.reply}, 0, pm.id, false)
	}
}

func (h *playHandler) Failed(m *Message, err error) {
	h.pm.done, h.pm.err = h.p.eng.Now(), err
	h.p.logf("failed #%d: %v", h.pm.id, err)
}

func (p *player) send(msg Msg, reply, from int, quiet bool) {
	pm := &played{id: len(p.msgs), msg: msg, reply: reply, from: from, sent: -1, done: -1}
	p.msgs = append(p.msgs, pm)
	what := ""
	if msg.Rate > 0 {
		what += fmt.Sprintf(" at %gMB/s", msg.Rate/1e6)
	}
	if from >= 0 {
		what += fmt.Sprintf(" (reply to #%d)", from)
	}
	if quiet {
		what += " quiet"
	}
	p.logf("send #%d %d->%d c%d %dB%s", pm.id, msg.Src, msg.Dst, msg.Class, msg.Bytes, what)
	h := &playHandler{p: p, pm: pm}
	p.current = pm.id
	if quiet {
		p.n.Send(msg, &quietPlayHandler{*h})
	} else {
		p.n.Send(msg, h)
	}
	p.current = -1
}

// play runs the transcript and returns its outcome; fixed: the network
// remembers the routes its router gives (FixedRouter).
func (tc *transcript) play(fixed bool) (string, error) {
	b, err := tc.build()
	if err != nil {
		return "", err
	}
	eng := sim.NewEngine(tc.seed)
	p := &player{eng: eng, current: -1}
	var router Router = loggingRouter{p: p, r: b.router}
	if fixed {
		router = fixedRouter{router}
	}
	n, err := New(eng, router, tc.cfg)
	if err != nil {
		return "", parseError(tc.file, tc.net.line, "%v", err)
	}
	p.n = n
	byName := map[string]*Link{}
	for _, l := range b.links {
		byName[linkName(l)] = l
	}
	for _, f := range tc.fault {
		var l *Link
		if f.kind != "order" {
			if l = byName[f.link]; l == nil {
				return "", parseError(tc.file, f.line, "no link %q in this network", f.link)
			}
		}
		switch f.kind {
		case "down":
			eng.At(f.at, func() { p.logf("link %s down", f.link) })
			if f.d > 0 {
				eng.At(f.at+f.d, func() { p.logf("link %s up", f.link) })
			}
			n.LinkDown(l, f.at, f.d)
		case "crc":
			l.InjectCRC(f.count, f.retry)
		case "crc-rate":
			if err := l.SetCRCErrorRate(f.p, f.retry); err != nil {
				return "", parseError(tc.file, f.line, "%v", err)
			}
		case "order":
			switch {
			case f.ring && b.rt == nil, !f.ring && b.tor == nil:
				return "", parseError(tc.file, f.line, "order %s does not fit a %s network", f.text, tc.net.kind)
			}
			eng.At(f.at, func() {
				if f.ring {
					b.rt.SetOrder(f.ringOrder)
					p.logf("ring order %s", map[RingOrder]string{XFirst: "x-first", YFirst: "y-first"}[f.ringOrder])
				} else {
					if err := b.tor.SetOrder(f.order); err != nil {
						panic(err) // parseFault accepts only permutations
					}
					p.logf("dimension order %c,%c,%c", "xyz"[f.order[0]], "xyz"[f.order[1]], "xyz"[f.order[2]])
				}
				n.SetRouter(n.router)
			})
		}
	}
	for _, s := range tc.sends {
		msg := Msg{Src: s.src, Dst: s.dst, Class: s.class, Bytes: s.nbytes, Rate: s.rate * 1e6}
		eng.At(s.at, func() { p.send(msg, s.reply, -1, s.quiet) })
	}
	if err := eng.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", tc.file, err)
	}
	return p.outcome(b), nil
}

// outcome writes the events, a summary per message and the occupancy of
// every link and channel that carried something.
func (p *player) outcome(b *built) string {
	var out bytes.Buffer
	fmt.Fprintf(&out, "\nevents (time, what; a route lists its links from source to destination):\n")
	out.Write(p.events.Bytes())
	fmt.Fprintf(&out, "\nmessages (units: arrivals; hops: the links of its first route):\n")
	for _, pm := range p.msgs {
		fmt.Fprintf(&out, "  #%d %d->%d c%d %dB:", pm.id, pm.msg.Src, pm.msg.Dst, pm.msg.Class, pm.msg.Bytes)
		if pm.sent >= 0 {
			fmt.Fprintf(&out, " sent %s,", fmtTime(pm.sent))
		}
		switch {
		case pm.delivered:
			fmt.Fprintf(&out, " delivered %s,", fmtTime(pm.done))
		case pm.err != nil:
			fmt.Fprintf(&out, " failed %s,", fmtTime(pm.done))
		default:
			fmt.Fprintf(&out, " never delivered,")
		}
		fmt.Fprintf(&out, " units %d, hops %d\n", pm.arrivals, pm.hops)
	}
	fmt.Fprintf(&out, "\nlinks (units, bytes with headers, busy: held, waits, waited, most waiting, crc errors, units aborted):\n")
	for _, l := range b.links {
		if s := l.Stats(); s != (LinkStats{}) {
			fmt.Fprintf(&out, "  %s: units %d, bytes %d, busy %s", linkName(l), s.Units, s.Bytes, fmtTime(s.Busy))
			if s.Waits > 0 {
				fmt.Fprintf(&out, ", waits %d, waited %s, most waiting %d", s.Waits, fmtTime(s.Waited), s.MaxQueue)
			}
			if s.CRC > 0 {
				fmt.Fprintf(&out, ", crc %d", s.CRC)
			}
			if s.Aborted > 0 {
				fmt.Fprintf(&out, ", aborted %d", s.Aborted)
			}
			fmt.Fprintln(&out)
		}
	}
	if len(b.chans) > 0 {
		fmt.Fprintf(&out, "\nphysical channels (grants, busy: bytes flowing, waits, waited, most waiting):\n")
		for _, ch := range b.chans {
			if s := ch.Stats(); s != (ChannelStats{}) {
				fmt.Fprintf(&out, "  %s: grants %d, busy %s", strings.ReplaceAll(ch.Name(), " ", ","), s.Grants, fmtTime(s.Busy))
				if s.Waits > 0 {
					fmt.Fprintf(&out, ", waits %d, waited %s, most waiting %d", s.Waits, fmtTime(s.Waited), s.MaxQueue)
				}
				fmt.Fprintln(&out)
			}
		}
	}
	st := p.n.Stats()
	fmt.Fprintf(&out, "\nnetwork: messages %d, units %d, resent %d, failed %d, delivered %d; end %s, %d engine events\n",
		st.Messages, st.Units, st.Resent, st.Failed, st.Delivered, fmtTime(p.eng.Now()), p.eng.Events())
	return out.String()
}

// withoutRoutes drops the route lines of an outcome and the hops of its
// messages (a network that remembers routes does not ask its router
// again).
func withoutRoutes(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "route" {
			continue
		}
		if i := strings.Index(line, ", hops "); i >= 0 {
			line = line[:i]
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// TestTranscripts plays every transcript in testdata and compares the
// outcome with the one it records: every handler call at the same
// simulated time in the same order, the same routes, the same link and
// channel occupancy. Each case is small enough to check by hand against
// the model (see the comments at the top of each file). Run with -update
// to record a change that is meant to move an outcome (and say why).
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tc, err := parseTranscript(file, data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.play(false)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := tc.play(false); err != nil || again != got {
				t.Fatalf("two runs of one seed differ (%v)", err)
			}
			// The torus's routes are fixed but for its links going down
			// and its routing changes (SetRouter): a network that
			// remembers them gives the same outcome.
			if tc.net.kind == "t3d" || tc.net.kind == "torus" {
				fixed, err := tc.play(true)
				if err != nil {
					t.Fatal(err)
				}
				if g, f := withoutRoutes(got), withoutRoutes(fixed); g != f {
					t.Errorf("with routes remembered: %s", firstDiff([]byte(g), []byte(f)))
				}
			}
			if *update {
				if err := os.WriteFile(file, []byte(tc.input+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != tc.want {
				gotFile := filepath.Join(os.TempDir(), "msgsim-net-"+filepath.Base(file))
				if err := os.WriteFile(gotFile, []byte(tc.input+got), 0o644); err != nil {
					t.Log(err)
				}
				t.Errorf("%s: outcome differs (this run's in %s; run with -update to record it): %s", file, gotFile, firstDiff([]byte(tc.input+tc.want), []byte(tc.input+got)))
			}
		})
	}
}

// firstDiff describes the first line where got differs from want.
func firstDiff(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, a, b)
		}
	}
	return "no difference"
}

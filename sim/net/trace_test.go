package net

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

var update = flag.Bool("update", false, "rewrite the traffic traces in testdata/")

// traceCase is random traffic on one network: everything its handlers are
// told, when, and what every link and channel counted is its trace.
type traceCase struct {
	name  string
	seed  uint64
	msgs  int
	build func(eng *sim.Engine) (*Network, *traceNet)
	// maxBytes bounds a message's payload (sizes are log-uniform from 1).
	maxBytes int
	// span is the time the sends are spread over, in steps of grid (a
	// coarse grid makes many events fall at the same time: ties).
	span, grid sim.Time
	// faults, when set, injects faults once the network is built.
	faults func(eng *sim.Engine, n *Network, tn *traceNet)
}

// traceNet is what a case's topology exposes: its router's node count and
// its links and channels, for statistics.
type traceNet struct {
	nodes int
	links []*Link
	chans []*Channel
	tor   *Torus
}

// tracer writes a trace line per handler call.
type tracer struct {
	eng   *sim.Engine
	n     *Network
	out   bytes.Buffer
	nodes int
	sends int
}

type traceMsg struct {
	tr    *tracer
	id    int
	msg   Msg
	reply bool
}

// quietMsg ignores Sent.
type quietMsg struct{ traceMsg }

func (quietMsg) IgnoresSent() {}

func (h *traceMsg) Sent(m *Message) {
	fmt.Fprintf(&h.tr.out, "%d S %d\n", h.tr.eng.Now(), h.id)
}

func (h *traceMsg) Arrived(m *Message, off, n int) {
	fmt.Fprintf(&h.tr.out, "%d A %d %d %d\n", h.tr.eng.Now(), h.id, off, n)
}

func (h *traceMsg) Delivered(m *Message) {
	tr := h.tr
	fmt.Fprintf(&tr.out, "%d D %d\n", tr.eng.Now(), h.id)
	if h.reply {
		// An answer sent from inside the handler, at the same time.
		tr.send(Msg{Src: h.msg.Dst, Dst: h.msg.Src, Class: 1, Bytes: 8 + h.id%64}, false, h.id%3 == 0)
	}
}

func (h *traceMsg) Failed(m *Message, err error) {
	fmt.Fprintf(&h.tr.out, "%d F %d %v\n", h.tr.eng.Now(), h.id, err)
}

func (tr *tracer) send(msg Msg, reply, quiet bool) {
	id := tr.sends
	tr.sends++
	fmt.Fprintf(&tr.out, "%d send %d %d->%d c%d %dB %.0f\n", tr.eng.Now(), id, msg.Src, msg.Dst, msg.Class, msg.Bytes, msg.Rate)
	h := &traceMsg{tr: tr, id: id, msg: msg, reply: reply}
	if quiet {
		tr.n.Send(msg, &quietMsg{*h})
		return
	}
	tr.n.Send(msg, h)
}

// t3dLike is a torus of the given shape with two classes of traffic and,
// per node, two endpoints, each with an injection and an ejection port
// whose virtual channels (one per class) share one physical channel: the
// T3D's network.
type t3dLike struct {
	tor            *Torus
	inject, eject  [][2]*Link
	injCh, ejectCh []*Channel
}

func newT3DLike(dims [3]int, latency sim.Time, mbps float64) (*t3dLike, error) {
	tor, err := NewTorusClasses("t", dims, latency, mbps, 2)
	if err != nil {
		return nil, err
	}
	x := &t3dLike{tor: tor}
	ports := NewLinkKind(NewNames(func(id uint32) string { return fmt.Sprint("port", id) }), sim.Nano(150), mbps)
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
	route = append(route, x.inject[a][class])
	route, err := x.tor.Route(route, a/2, b/2, class)
	if err != nil {
		return route, err
	}
	return append(route, x.eject[b][class]), nil
}

func (x *t3dLike) traceNet() *traceNet {
	tn := &traceNet{nodes: 2 * x.tor.Nodes(), tor: x.tor}
	// Every link and channel, built now so that the statistics list them
	// in one order whatever traffic builds first.
	for node := 0; node < x.tor.Nodes(); node++ {
		for dim := range 3 {
			for _, dir := range []int{1, -1} {
				if ch := x.tor.Channel(node, dim, dir); ch != nil {
					tn.chans = append(tn.chans, ch)
				}
				for class := range 2 {
					for vc := range 2 {
						if l := x.tor.LinkClassVC(node, dim, dir, class, vc); l != nil {
							tn.links = append(tn.links, l)
						}
					}
				}
			}
		}
	}
	for pe := range x.inject {
		tn.links = append(tn.links, x.inject[pe][0], x.inject[pe][1], x.eject[pe][0], x.eject[pe][1])
		tn.chans = append(tn.chans, x.injCh[pe], x.ejectCh[pe])
	}
	return tn
}

func t3dCase(dims [3]int, cfg Config) func(eng *sim.Engine) (*Network, *traceNet) {
	return func(eng *sim.Engine) (*Network, *traceNet) {
		x, err := newT3DLike(dims, sim.Nano(20), 150)
		if err != nil {
			panic(err)
		}
		n, err := New(eng, x, cfg)
		if err != nil {
			panic(err)
		}
		return n, x.traceNet()
	}
}

type ringTorusRouter struct{ t *RingTorus }

func (r ringTorusRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	return r.t.Route(route, src, dst, class)
}

type multistageRouter struct{ m *Multistage }

func (r multistageRouter) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	return r.m.Route(route, src, dst, class)
}

var traceCases = []traceCase{
	{name: "torus-units", seed: 1, msgs: 150, maxBytes: 1 << 16, span: sim.Micro(300), grid: sim.Nano(100),
		build: t3dCase([3]int{4, 2, 2}, Config{MTU: 32, Header: 16, Unit: 4096})},
	{name: "torus-units-small", seed: 2, msgs: 300, maxBytes: 1 << 12, span: sim.Micro(100), grid: sim.Nano(50),
		build: t3dCase([3]int{4, 4, 1}, Config{MTU: 32, Header: 16, Unit: 512})},
	{name: "torus-packets", seed: 3, msgs: 100, maxBytes: 1 << 11, span: sim.Micro(50), grid: sim.Nano(100),
		build: t3dCase([3]int{3, 3, 2}, Config{MTU: 64, Header: 16, Packets: true})},
	{name: "torus-whole", seed: 4, msgs: 200, maxBytes: 1 << 14, span: sim.Micro(200), grid: sim.Nano(200),
		build: t3dCase([3]int{4, 2, 2}, Config{MTU: 32, Header: 16})},
	{name: "torus-faults", seed: 5, msgs: 150, maxBytes: 1 << 14, span: sim.Micro(200), grid: sim.Nano(100),
		build: t3dCase([3]int{4, 4, 1}, Config{MTU: 32, Header: 16, Unit: 1024, Jitter: sim.Nano(300)}),
		faults: func(eng *sim.Engine, n *Network, tn *traceNet) {
			tor := tn.tor
			tor.LinkClassVC(5, 0, 1, 0, 0).InjectCRC(3, sim.Nano(500))
			if err := tor.LinkClassVC(6, 1, -1, 1, 0).SetCRCErrorRate(0.05, sim.Nano(300)); err != nil {
				panic(err)
			}
			n.LinkDown(tor.LinkClassVC(1, 0, 1, 0, 0), sim.Micro(20), sim.Micro(40))
			n.LinkDown(tor.LinkClassVC(9, 1, 1, 1, 0), sim.Micro(60), sim.Micro(30))
			n.LinkDown(tor.LinkClassVC(10, 0, -1, 0, 0), sim.Micro(150), 0)
			eng.At(sim.Micro(100), func() {
				if err := tor.SetOrder([3]int{1, 0, 2}); err != nil {
					panic(err)
				}
				n.SetRouter(n.router)
			})
		}},
	{name: "ring-torus", seed: 6, msgs: 200, maxBytes: 1 << 13, span: sim.Micro(200), grid: sim.Nano(100),
		build: func(eng *sim.Engine) (*Network, *traceNet) {
			rt, err := NewRingTorus("r", 4, 3, sim.Nano(30), 200)
			if err != nil {
				panic(err)
			}
			n, err := New(eng, ringTorusRouter{rt}, Config{MTU: 64, Header: 16, Jitter: sim.Nano(40)})
			if err != nil {
				panic(err)
			}
			tn := &traceNet{nodes: rt.Nodes()}
			for y := range 3 {
				for i := range 4 {
					tn.links = append(tn.links, rt.Row(y).Out(i))
				}
			}
			for x := range 4 {
				for i := range 3 {
					tn.links = append(tn.links, rt.Col(x).Out(i))
				}
			}
			return n, tn
		}},
	{name: "multistage", seed: 7, msgs: 150, maxBytes: 1 << 12, span: sim.Micro(100), grid: sim.Nano(100),
		build: func(eng *sim.Engine) (*Network, *traceNet) {
			ms, err := NewMultistage("s", 16, 4, sim.Nano(50), 40)
			if err != nil {
				panic(err)
			}
			n, err := New(eng, multistageRouter{ms}, Config{MTU: 1024, Header: 16, Packets: true, Jitter: sim.Nano(100)})
			if err != nil {
				panic(err)
			}
			tn := &traceNet{nodes: 16}
			for i := range 16 {
				tn.links = append(tn.links, ms.In(i))
			}
			for s := range ms.Stages() {
				for a := range 16 {
					tn.links = append(tn.links, ms.Out(s, a))
				}
			}
			return n, tn
		}},
}

func isT3DLike(r Router) bool { _, ok := r.(*t3dLike); return ok }

// fixedRouter declares its router's routes fixed: the network remembers
// them.
type fixedRouter struct{ Router }

func (fixedRouter) FixedRoutes() {}

// runTrace runs a case and returns its trace; fixed: the network
// remembers the routes its router gives (FixedRouter).
func runTrace(t *testing.T, c traceCase, fixed bool) []byte {
	eng := sim.NewEngine(c.seed)
	n, tn := c.build(eng)
	if fixed {
		n.SetRouter(fixedRouter{n.router})
	}
	if c.faults != nil {
		c.faults(eng, n, tn)
	}
	tr := &tracer{eng: eng, n: n, nodes: tn.nodes}
	rng := eng.Rand()
	steps := int64(c.span / c.grid)
	for range c.msgs {
		src, dst := rng.IntN(tn.nodes), rng.IntN(tn.nodes)
		bytes := 1 << rng.IntN(20)
		bytes = 1 + rng.IntN(min(bytes, c.maxBytes))
		msg := Msg{Src: src, Dst: dst, Class: rng.IntN(2), Bytes: bytes}
		if rng.IntN(4) == 0 {
			msg.Rate = float64(50+rng.IntN(200)) * 1e6
		}
		reply, quiet := rng.IntN(3) == 0, rng.IntN(2) == 0
		at := sim.Time(rng.Int64N(steps)) * c.grid
		eng.At(at, func() { tr.send(msg, reply, quiet) })
	}
	if err := eng.Run(); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	st := n.Stats()
	fmt.Fprintf(&tr.out, "end %d events %d stats %+v\n", eng.Now(), eng.Events(), st)
	for _, l := range tn.links {
		if s := l.Stats(); s != (LinkStats{}) {
			fmt.Fprintf(&tr.out, "link %s %+v\n", l.Name(), s)
		}
	}
	for _, ch := range tn.chans {
		if s := ch.Stats(); s != (ChannelStats{}) {
			fmt.Fprintf(&tr.out, "channel %s %+v\n", ch.Name(), s)
		}
	}
	return tr.out.Bytes()
}

// TestTrafficTraces: random traffic on every topology, with units,
// packets, whole messages, source rates, jitter, replies sent from inside
// handlers, CRC errors, links going down and a routing change, gives the
// trace recorded in testdata: every handler call at the same simulated
// time in the same order, the same number of engine events and the same
// link and channel statistics. It pins the network's behaviour, tie order
// included, so that a change meant only to make it faster (fewer
// instructions per event) shows any simulated difference. Run with
// -update to record a change that is meant to move it (and say why).
func TestTrafficTraces(t *testing.T) {
	for _, c := range traceCases {
		t.Run(c.name, func(t *testing.T) {
			got := runTrace(t, c, false)
			if again := runTrace(t, c, false); !bytes.Equal(got, again) {
				t.Fatal("two runs of one seed differ")
			}
			// The t3d-like torus's routes are fixed but for its links
			// going down and its one routing change (SetRouter): a
			// network that remembers them gives the same trace.
			if n, _ := c.build(sim.NewEngine(c.seed)); isT3DLike(n.router) {
				if fixed := runTrace(t, c, true); !bytes.Equal(got, fixed) {
					t.Errorf("with routes remembered: %s", firstDiff(got, fixed))
				}
			}
			file := filepath.Join("testdata", c.name+".trace")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to record it)", err)
			}
			if !bytes.Equal(got, want) {
				gotFile := filepath.Join(os.TempDir(), "msgsim-net-"+c.name+".trace")
				if err := os.WriteFile(gotFile, got, 0o644); err != nil {
					t.Log(err)
				}
				t.Errorf("trace differs from %s (this run's in %s): %s", file, gotFile, firstDiff(want, got))
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

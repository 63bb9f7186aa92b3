package net

import (
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// routes is a Router of fixed routes: routes[[2]int{src, dst}]. A route with
// a link down has no alternative.
type routes map[[2]int][]*Link

func (r routes) Route(route []*Link, src, dst, class int) ([]*Link, error) {
	rt, ok := r[[2]int{src, dst}]
	if !ok {
		return route, fmt.Errorf("no route from %d to %d", src, dst)
	}
	return append(route, rt...), nil
}

// record is a Handler that copies real bytes from src to dst as packets
// arrive and notes the times.
type record struct {
	t         *testing.T
	eng       *sim.Engine
	src, dst  []byte
	sent      sim.Time
	delivered sim.Time
	arrivals  []int // packet offsets in arrival order
	err       error
	done      bool
	onDeliver func()
}

func newRecord(t *testing.T, eng *sim.Engine, n int) *record {
	r := &record{t: t, eng: eng, src: make([]byte, n), dst: make([]byte, n), sent: -1, delivered: -1}
	for i := range r.src {
		r.src[i] = byte(i*31 + 7)
	}
	return r
}

func (r *record) Sent(m *Message) { r.sent = r.eng.Now() }
func (r *record) Arrived(m *Message, off, n int) {
	copy(r.dst[off:off+n], r.src[off:off+n])
	r.arrivals = append(r.arrivals, off)
}
func (r *record) Delivered(m *Message) {
	r.delivered = r.eng.Now()
	r.done = true
	if string(r.dst) != string(r.src) {
		r.t.Errorf("message delivered with wrong bytes")
	}
	if r.onDeliver != nil {
		r.onDeliver()
	}
}
func (r *record) Failed(m *Message, err error) { r.err = err; r.done = true }

func mustNet(t *testing.T, eng *sim.Engine, r Router, cfg Config) *Network {
	t.Helper()
	n, err := New(eng, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// line is n links of latency lat at mbps.
func line(name string, n int, lat sim.Time, mbps float64) []*Link {
	ls := make([]*Link, n)
	for i := range ls {
		ls[i] = NewLink(fmt.Sprintf("%s%d", name, i), lat, mbps)
	}
	return ls
}

// sendAt sends a message at time at and returns its record.
func sendAt(t *testing.T, eng *sim.Engine, n *Network, at sim.Time, src, dst, bytes int, rate float64) *record {
	r := newRecord(t, eng, bytes)
	eng.At(at, func() { n.Send(Msg{Src: src, Dst: dst, Bytes: bytes, Rate: rate}, r) })
	return r
}

func run(t *testing.T, eng *sim.Engine) {
	t.Helper()
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
}

package net

import (
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// BenchmarkPacketsOnTorus: 64 nodes of a 4x4x4 torus each send a message
// of 64 packets to the node opposite; reports events per second.
func BenchmarkPacketsOnTorus(b *testing.B) {
	eng := sim.NewEngine(1)
	tor, err := NewTorus("t", [3]int{4, 4, 4}, sim.Nano(20), 300)
	if err != nil {
		b.Fatal(err)
	}
	nw, err := New(eng, torusRouter{tor}, Config{MTU: 64, Header: 16, Packets: true})
	if err != nil {
		b.Fatal(err)
	}
	h := &nopHandler{}
	b.ReportAllocs()
	start := eng.Events()
	for b.Loop() {
		for src := 0; src < 64; src++ {
			nw.Send(Msg{Src: src, Dst: 63 - src, Bytes: 64 * 64}, h)
		}
		if err := eng.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(eng.Events()-start)/b.Elapsed().Seconds(), "events/s")
}

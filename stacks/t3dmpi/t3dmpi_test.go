package t3dmpi

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

var _ stacks.Comm = (*Rank)(nil)

func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 9))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// TestRandomMessages: short, eager and rendezvous messages with random
// tags, sent nonblocking all at once and received in a per-receiver order
// by (source, tag), across seeds; every byte checked.
func TestRandomMessages(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		pes := []int{2, 4, 8, 5}[seed-1]
		eng := sim.NewEngine(seed)
		m, err := t3d.New(eng, pes, t3d.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		w, err := New(m, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 3))
		type msg struct{ src, dst, n, tag int }
		var ms []msg
		for k := 0; k < 60; k++ {
			s, d := rng.IntN(pes), rng.IntN(pes-1)
			if d >= s {
				d++
			}
			n := []int{0, 8, 900, 5000, 40000}[rng.IntN(5)]
			ms = append(ms, msg{s, d, n, rng.IntN(3)})
		}
		got := 0
		for me := 0; me < pes; me++ {
			r := w.Rank(me)
			eng.Spawn(fmt.Sprint("rank", me), func(p *sim.Proc) {
				var sends []stacks.Request
				for k, x := range ms {
					if x.src == me {
						b, _ := r.Buffer(x.n)
						fill(b.Bytes(), seed*100+uint64(k))
						q, err := r.Isend(p, b, x.dst, x.tag)
						if err != nil {
							t.Error(err)
							return
						}
						sends = append(sends, q)
					}
				}
				buf, _ := r.Buffer(40000)
				for k, x := range ms {
					if x.dst != me {
						continue
					}
					st, err := r.Recv(p, buf, x.src, x.tag)
					if err != nil {
						t.Error(err)
						return
					}
					want := make([]byte, x.n)
					fill(want, seed*100+uint64(k))
					if st.Len != x.n || string(buf.Bytes()[:x.n]) != string(want) {
						t.Errorf("seed %d: message %d (%d->%d, %d bytes, tag %d) corrupted: %+v", seed, k, x.src, x.dst, x.n, x.tag, st)
					}
					got++
				}
				for _, q := range sends {
					if _, err := q.Wait(p); err != nil {
						t.Error(err)
					}
				}
			})
		}
		if err := eng.Run(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got != len(ms) {
			t.Errorf("seed %d: %d of %d delivered", seed, got, len(ms))
		}
	}
}

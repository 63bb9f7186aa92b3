package collective

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// latencyIters is the number of timed round trips (after one warm-up).
const latencyIters = 10

// latencyWord is the word PE src sends in round i.
func (pt *point) latencyWord(src, i int) []byte {
	w := pt.stream().Word(src) ^ uint64(i+1)
	return binary.LittleEndian.AppendUint64(nil, w)
}

// latency: PEs 0 and 1 bounce one word (a new value each round, checked at
// every delivery); the value is half a round trip.
func (pt *point) latency(p *sim.Proc, pe int) error {
	y := pt.sys
	if pe > 1 {
		return nil
	}
	// Raw puts need the word at the same address on both PEs: symmetric
	// memory.
	var buf mem.Region
	var err error
	if y.oneSided() {
		buf, err = y.ones[pe].Symmetric(8)
	} else {
		buf, err = y.buffer(pe, 8)
	}
	if err != nil {
		return err
	}
	cpu := y.cpu(pe)
	other := 1 - pe
	for i := 0; i <= latencyIters; i++ {
		if i == 1 && pe == 0 {
			pt.t0 = p.Now()
		}
		for turn := 0; turn < 2; turn++ {
			from := turn // PE 0 sends first, then PE 1 replies
			word := pt.latencyWord(from, i)
			if from == pe {
				if y.oneSided() {
					y.ones[pe].PutWord(p, other, buf.Addr, binary.LittleEndian.Uint64(word))
					continue
				}
				cpu.Poke(buf.Addr, word)
				if err := y.send(p, pe, buf, other); err != nil {
					return err
				}
				continue
			}
			if y.oneSided() {
				// Spin (uncached: remote writes leave the cache stale)
				// until the round's word is there.
				want := binary.LittleEndian.Uint64(word)
				cpu.SpinUntil(p, sim.Reason("SHMEM latency: waiting for the word"), func() bool {
					return cpu.LoadUncached(p, buf.Addr, 8) == want
				}, buf.Addr)
				continue
			}
			st, err := y.recv(p, pe, buf, other)
			if err != nil {
				return err
			}
			pt.checkStatus(p, pe, st, other)
			pt.compare(p, pe, pt.view(pe, buf), word, fmt.Sprintf("word of round %d from PE %d", i, other))
		}
	}
	if pe == 0 {
		pt.t1 = p.Now()
	}
	return nil
}

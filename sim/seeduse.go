package sim

import (
	"math/rand/v2"
	"sync/atomic"
)

// drawSource is the engine's PCG source, noting the first number drawn
// (the sequence is PCG's own: same seed, same numbers).
type drawSource struct {
	pcg  rand.PCG
	seen bool
	flag *atomic.Bool // set on the first draw; nil: nobody asked
}

// Uint64 draws the next number.
func (s *drawSource) Uint64() uint64 {
	if !s.seen {
		s.seen = true
		if s.flag != nil {
			s.flag.Store(true)
		}
	}
	return s.pcg.Uint64()
}

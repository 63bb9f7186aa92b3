package armci

import (
	"math"

	"github.com/msgsim/msgsim/sim/mem"
)

func mathBits64(v float64) uint64      { return math.Float64bits(v) }
func mathBits32(v float64) uint32      { return math.Float32bits(float32(v)) }
func float64frombits(b uint64) float64 { return math.Float64frombits(b) }
func float32frombits(b uint32) float32 { return math.Float32frombits(b) }

type memAddr = mem.Addr

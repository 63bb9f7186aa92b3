package armci

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// seg is one contiguous block of a transfer: src to dst, n bytes.
type seg struct {
	src, dst mem.Addr
	n        int
}

// stridedSegs lists the blocks of s in Fortran order (level 1 fastest).
func stridedSegs(s stacks.Strided) ([]seg, error) {
	lv := len(s.Count) - 1
	if lv < 0 || len(s.SrcStride) < lv || len(s.DstStride) < lv {
		return nil, fmt.Errorf("armci: strided section with %d counts, %d source and %d destination strides (want levels+1, levels, levels)", len(s.Count), len(s.SrcStride), len(s.DstStride))
	}
	for i, c := range s.Count {
		if c < 0 || (i == 0 && c == 0) {
			return nil, fmt.Errorf("armci: strided section count[%d] = %d", i, c)
		}
	}
	n := 1
	for _, c := range s.Count[1:] {
		n *= c
	}
	segs := make([]seg, 0, n)
	idx := make([]int, lv)
	for k := 0; k < n; k++ {
		so, do := 0, 0
		for l := 0; l < lv; l++ {
			so += idx[l] * s.SrcStride[l]
			do += idx[l] * s.DstStride[l]
		}
		segs = append(segs, seg{src: s.Src + mem.Addr(so), dst: s.Dst + mem.Addr(do), n: s.Count[0]})
		for l := 0; l < lv; l++ {
			idx[l]++
			if idx[l] < s.Count[l+1] {
				break
			}
			idx[l] = 0
		}
	}
	return segs, nil
}

// vectorSegs lists the blocks of a generalized I/O vector.
func vectorSegs(v []stacks.GIOV) ([]seg, error) {
	var segs []seg
	for i, d := range v {
		if len(d.Src) != len(d.Dst) || d.Bytes <= 0 {
			return nil, fmt.Errorf("armci: I/O vector element %d: %d sources, %d destinations, %d bytes", i, len(d.Src), len(d.Dst), d.Bytes)
		}
		for j := range d.Src {
			segs = append(segs, seg{src: d.Src[j], dst: d.Dst[j], n: d.Bytes})
		}
	}
	return segs, nil
}

func total(segs []seg) int {
	n := 0
	for _, s := range segs {
		n += s.n
	}
	return n
}

// Descriptors: what an active message tells the remote rank about the
// remote side of a transfer (the addresses there), as real bytes. A
// strided descriptor is compact (Figure 2's arrays); a vector descriptor
// lists every remote address (Figure 1).
const (
	descStrided = 1
	descVector  = 2
)

// encodeStrided describes the remote side of s (remote is s.Src for a
// get, s.Dst otherwise).
func encodeStrided(b []byte, remote mem.Addr, stride []int, count []int) []byte {
	b = append(b, descStrided, byte(len(count)-1))
	b = binary.LittleEndian.AppendUint64(b, uint64(remote))
	for _, c := range count {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	for _, st := range stride[:len(count)-1] {
		b = binary.LittleEndian.AppendUint32(b, uint32(st))
	}
	return b
}

// encodeVector describes the remote addresses of segs (their src for a
// get, dst otherwise).
func encodeVector(b []byte, segs []seg, get bool) []byte {
	b = append(b, descVector, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(segs)))
	for _, s := range segs {
		a := s.dst
		if get {
			a = s.src
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(a))
		b = binary.LittleEndian.AppendUint32(b, uint32(s.n))
	}
	return b
}

// decode returns the remote blocks a descriptor names (address, size) and
// the descriptor's length.
func decode(b []byte) (blocks []seg, used int, err error) {
	if len(b) < 2 {
		return nil, 0, fmt.Errorf("armci: descriptor of %d bytes", len(b))
	}
	switch b[0] {
	case descStrided:
		lv := int(b[1])
		need := 2 + 8 + 4*(lv+1) + 4*lv
		if len(b) < need {
			return nil, 0, fmt.Errorf("armci: strided descriptor of %d bytes, want %d", len(b), need)
		}
		base := mem.Addr(binary.LittleEndian.Uint64(b[2:]))
		count := make([]int, lv+1)
		stride := make([]int, lv)
		for i := range count {
			count[i] = int(binary.LittleEndian.Uint32(b[10+4*i:]))
		}
		for i := range stride {
			stride[i] = int(binary.LittleEndian.Uint32(b[10+4*(lv+1)+4*i:]))
		}
		segs, err := stridedSegs(stacks.Strided{Src: base, SrcStride: stride, Dst: base, DstStride: stride, Count: count})
		return segs, need, err
	case descVector:
		n := int(binary.LittleEndian.Uint32(b[2:]))
		need := 6 + 12*n
		if len(b) < need {
			return nil, 0, fmt.Errorf("armci: vector descriptor of %d bytes, want %d", len(b), need)
		}
		segs := make([]seg, n)
		for i := range segs {
			a := mem.Addr(binary.LittleEndian.Uint64(b[6+12*i:]))
			segs[i] = seg{src: a, dst: a, n: int(binary.LittleEndian.Uint32(b[14+12*i:]))}
		}
		return segs, need, nil
	}
	return nil, 0, fmt.Errorf("armci: unknown descriptor kind %d", b[0])
}

// accumulate computes x = x + a*y element by element over bytes of type t
// (little-endian).
func accumulate(t stacks.AccType, a complex128, x, y []byte) {
	le := binary.LittleEndian
	switch t {
	case stacks.AccInt:
		s := int32(real(a))
		for i := 0; i+4 <= len(x); i += 4 {
			le.PutUint32(x[i:], uint32(int32(le.Uint32(x[i:]))+s*int32(le.Uint32(y[i:]))))
		}
	case stacks.AccDbl:
		s := real(a)
		for i := 0; i+8 <= len(x); i += 8 {
			v := math.Float64frombits(le.Uint64(x[i:])) + s*math.Float64frombits(le.Uint64(y[i:]))
			le.PutUint64(x[i:], math.Float64bits(v))
		}
	case stacks.AccCplx:
		s := complex64(a)
		for i := 0; i+8 <= len(x); i += 8 {
			xv := complex(math.Float32frombits(le.Uint32(x[i:])), math.Float32frombits(le.Uint32(x[i+4:])))
			yv := complex(math.Float32frombits(le.Uint32(y[i:])), math.Float32frombits(le.Uint32(y[i+4:])))
			v := xv + s*yv
			le.PutUint32(x[i:], math.Float32bits(real(v)))
			le.PutUint32(x[i+4:], math.Float32bits(imag(v)))
		}
	case stacks.AccDcpl:
		for i := 0; i+16 <= len(x); i += 16 {
			xv := complex(math.Float64frombits(le.Uint64(x[i:])), math.Float64frombits(le.Uint64(x[i+8:])))
			yv := complex(math.Float64frombits(le.Uint64(y[i:])), math.Float64frombits(le.Uint64(y[i+8:])))
			v := xv + a*yv
			le.PutUint64(x[i:], math.Float64bits(real(v)))
			le.PutUint64(x[i+8:], math.Float64bits(imag(v)))
		}
	}
}

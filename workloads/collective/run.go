package collective

import (
	"errors"
	"fmt"

	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// patternStride separates the windows of the shared pattern that different
// sources send (an odd stride, so that no two windows are aligned alike).
const patternStride = 61

// point is one run: a fresh engine, machine and stack.
type point struct {
	s       workloads.Spec
	params  Params
	eng     *sim.Engine
	sys     *system
	pes, n  int
	pat     []byte
	fails   []workloads.Failure
	t0, t1  sim.Time
	elapsed sim.Time
}

func newPoint(s workloads.Spec, params Params, pes, n int) (*point, error) {
	eng := s.NewEngine(s.Seed)
	sys, err := openSystem(eng, s, params, pes)
	if err != nil {
		return nil, err
	}
	pt := &point{s: s, params: params, eng: eng, sys: sys, pes: pes, n: n}
	pt.pat = make([]byte, n+pes*patternStride+8)
	r := eng.Rand()
	for i := 0; i < len(pt.pat); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(pt.pat); j++ {
			pt.pat[i+j] = byte(v >> (8 * j))
		}
	}
	return pt, nil
}

// window is what source src sends.
func (pt *point) window(src int) []byte { return pt.pat[src*patternStride : src*patternStride+pt.n] }

// verify compares a delivery at PE pe with what src sent.
func (pt *point) verify(p *sim.Proc, pe int, got []byte, src int, what string) {
	want := pt.window(src)
	if string(got) == string(want) {
		return
	}
	off := 0
	for off < len(got) && off < len(want) && got[off] == want[off] {
		off++
	}
	pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: %s from PE %d (%d bytes) differs at offset %d at %v", pe, what, src, len(want), off, p.Now()))
}

func (pt *point) fail(kind, detail string) {
	if len(pt.fails) < 20 {
		pt.fails = append(pt.fails, workloads.Failure{Kind: kind, Detail: detail})
	}
}

// run spawns one process per PE running body between two barriers and
// measures the time between them at PE 0.
func (pt *point) run(body func(p *sim.Proc, pe int) error) error {
	for pe := 0; pe < pt.pes; pe++ {
		pt.eng.Spawn(fmt.Sprintf("pe%d", pe), func(p *sim.Proc) {
			if err := body(p, pe); err != nil {
				pt.eng.Fail(fmt.Errorf("PE %d at %v: %w", pe, p.Now(), err))
			}
		})
	}
	if err := pt.eng.Run(); err != nil {
		return err
	}
	pt.elapsed = pt.t1 - pt.t0
	return nil
}

// barrier is the harness's hardware barrier; PE 0 records the times.
func (pt *point) barrier(p *sim.Proc, pe int, start bool) {
	pt.sys.m.Barrier(p, pe)
	if pe == 0 {
		if start {
			pt.t0 = p.Now()
		} else {
			pt.t1 = p.Now()
		}
	}
}

// setup allocates a send buffer holding pe's window and a receive buffer.
func (pt *point) setup(pe int) (send, recv mem.Region, err error) {
	if send, err = pt.sys.buffer(pe, pt.n); err != nil {
		return
	}
	copy(send.Bytes(), pt.window(pe))
	recv, err = pt.sys.buffer(pe, pt.n)
	return
}

// Run functions of the cases, as workloads.Runner.

// RunOneToAll runs the one-to-all case.
func RunOneToAll(s workloads.Spec) (workloads.Result, error) { return sweep(s, "onetoall") }

// RunAllToOne runs the all-to-one case.
func RunAllToOne(s workloads.Spec) (workloads.Result, error) { return sweep(s, "alltoone") }

// RunAllToAll runs the all-to-all case.
func RunAllToAll(s workloads.Spec) (workloads.Result, error) { return sweep(s, "alltoall") }

// RunBcast runs the broadcast case.
func RunBcast(s workloads.Spec) (workloads.Result, error) { return sweep(s, "bcast") }

// RunReduce runs the reduce case.
func RunReduce(s workloads.Spec) (workloads.Result, error) { return sweep(s, "reduce") }

// RunLatency runs the one-word latency case.
func RunLatency(s workloads.Spec) (workloads.Result, error) { return sweep(s, "latency") }

// RunTable runs the five cases of Table 2 at one size and partition.
func RunTable(s workloads.Spec) (workloads.Result, error) { return sweep(s, "table") }

// Check decodes a series' params without running it.
func Check(kind string) func(workloads.Spec) error {
	return func(s workloads.Spec) error {
		_, err := parseParams(s, kind)
		if err != nil {
			return err
		}
		if _, err := t3d.ParseParams(s.File, s.Machine.ParamsField("machine"), s.Machine.Params); err != nil {
			return err
		}
		return nil
	}
}

var metrics = map[string]struct{ metric, unit string }{
	"onetoall": {"throughput_MBps", "MB/s"}, "alltoone": {"throughput_MBps", "MB/s"}, "alltoall": {"throughput_MBps", "MB/s"},
	"bcast": {"time_s", "s"}, "reduce": {"time_s", "s"}, "latency": {"latency_us", "us"},
}

func sweep(s workloads.Spec, kind string) (workloads.Result, error) {
	var res workloads.Result
	params, err := parseParams(s, kind)
	if err != nil {
		return res, err
	}
	if s.Stack.Name == StackShmem && (kind == "bcast" || kind == "reduce") {
		return res, fmt.Errorf("%s: workload %s: raw SHMEM has no %s here (the paper shows SHMEM for the point-to-point patterns only)", s.File, kind, kind)
	}
	xname := "bytes"
	if len(params.PEs) > 1 {
		xname = "pes"
	}
	cases := []string{kind}
	if kind == "table" {
		cases = []string{"alltoall", "alltoone", "onetoall", "bcast", "reduce"}
		if s.Stack.Name == StackShmem {
			cases = cases[:3]
			res.Notes = append(res.Notes, s.Series+": raw SHMEM has no broadcast or reduce in this benchmark")
		}
	}
	for _, pes := range params.PEs {
		for _, n := range params.Bytes {
			x := float64(n)
			if xname == "pes" {
				x = float64(pes)
			}
			for _, c := range cases {
				if kind == "latency" {
					n = 8
				}
				v, unit, pt, err := runCase(s, params, c, pes, n)
				if pt != nil {
					res.Events += pt.eng.Events()
					res.SimTime += pt.eng.Now()
					res.Failures = append(res.Failures, pt.fails...)
				}
				if errors.Is(err, t3d.ErrMemoryFull) {
					res.Notes = append(res.Notes, fmt.Sprintf("%s: %s on %d PEs with %d-byte messages stopped: %v", s.Series, c, pes, n, err))
					return res, nil
				}
				if err != nil {
					return res, fmt.Errorf("%s: series %s: %s on %d PEs, %d bytes: %w", s.File, s.Series, c, pes, n, err)
				}
				metric := metrics[c].metric
				if kind == "table" {
					metric = c + "_" + map[string]string{"MB/s": "MBps", "s": "s"}[unit]
				}
				res.Rows = append(res.Rows, report.Row{Series: s.Series, XName: xname, X: x, Metric: metric, Value: v, Unit: unit})
				if s.Progress != nil {
					s.Progress(fmt.Sprintf("%s %s pes=%d bytes=%d: %.4g %s", s.Series, c, pes, n, v, unit))
				}
			}
		}
	}
	return res, nil
}

// runCase runs one case at one point and returns its value.
func runCase(s workloads.Spec, params Params, kind string, pes, n int) (float64, string, *point, error) {
	pt, err := newPoint(s, params, pes, n)
	if err != nil {
		return 0, "", nil, err
	}
	var body func(p *sim.Proc, pe int) error
	switch kind {
	case "onetoall":
		body = pt.oneToAll
	case "alltoone":
		body = pt.allToOne
	case "alltoall":
		body = pt.allToAll
	case "bcast":
		body = pt.bcast
	case "reduce":
		body = pt.reduce
	case "latency":
		body = pt.latency
	}
	if err := pt.run(body); err != nil {
		return 0, "", pt, err
	}
	if pt.sys.shmem() && kind != "latency" {
		pt.checkReceived(kind)
	}
	mu := metrics[kind]
	switch mu.unit {
	case "MB/s":
		if pt.elapsed <= 0 {
			return 0, mu.unit, pt, nil
		}
		return float64((pes-1)*n) / pt.elapsed.Seconds() / 1e6, mu.unit, pt, nil
	case "s":
		return pt.elapsed.Seconds(), mu.unit, pt, nil
	}
	return pt.elapsed.Micros(), mu.unit, pt, nil
}

// checkReceived detects lost SHMEM puts: every PE must have received the
// bytes its pattern sends it.
func (pt *point) checkReceived(kind string) {
	for pe := 0; pe < pt.pes; pe++ {
		want := 0
		switch {
		case kind == "alltoall":
			want = (pt.pes - 1) * pt.n
		case kind == "alltoone" && pe == 0, kind == "onetoall" && pe != 0:
			want = (pt.pes - 1) * pt.n
			if kind == "onetoall" {
				want = pt.n
			}
		}
		if got := int(pt.sys.m.Received(pe)); got != want {
			pt.fail(workloads.Loss, fmt.Sprintf("PE %d: received %d bytes by put, want %d, at %v", pe, got, want, pt.eng.Now()))
		}
	}
}

// shmemSrc is the window raw SHMEM senders all send: puts from several
// sources land in one region, so they carry the same bytes.
const shmemSrc = 0

// oneToAll: PE 0 sends a message to PEs 1..P-1 in turn.
func (pt *point) oneToAll(p *sim.Proc, pe int) error {
	send, recv, err := pt.setup(pe)
	if err != nil {
		return err
	}
	y := pt.sys
	pt.barrier(p, pe, true)
	switch {
	case y.shmem() && pe == 0:
		for d := 1; d < pt.pes; d++ {
			y.m.Put(p, 0, d, recv.Addr, send.Addr, pt.n)
		}
		y.m.Quiet(p, 0)
	case y.shmem():
	case pe == 0 && y.mode == ModeAsync:
		reqs := make([]stacks.Request, 0, pt.pes)
		for d := 1; d < pt.pes; d++ {
			r, err := y.comms[0].Isend(p, send, d, 0)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		for _, r := range reqs {
			if _, err := r.Wait(p); err != nil {
				return err
			}
		}
	case pe == 0:
		for d := 1; d < pt.pes; d++ {
			if err := y.send(p, 0, send, d); err != nil {
				return err
			}
		}
	default:
		if _, err := y.recv(p, pe, recv, 0); err != nil {
			return err
		}
		pt.verify(p, pe, recv.Bytes(), 0, "message")
	}
	pt.barrier(p, pe, false)
	if y.shmem() && pe != 0 {
		pt.verify(p, pe, recv.Bytes(), 0, "put")
	}
	return nil
}

// allToOne: PEs 1..P-1 each send a message to PE 0, which receives them in
// PE order (synchronous: it must name the sender) or as they come.
func (pt *point) allToOne(p *sim.Proc, pe int) error {
	send, recv, err := pt.setup(pe)
	if err != nil {
		return err
	}
	y := pt.sys
	pt.barrier(p, pe, true)
	switch {
	case y.shmem() && pe != 0:
		if pt.n > 0 {
			copy(send.Bytes(), pt.window(shmemSrc))
		}
		y.m.Put(p, pe, 0, recv.Addr, send.Addr, pt.n)
		y.m.Quiet(p, pe)
	case y.shmem():
	case pe != 0:
		if err := y.send(p, pe, send, 0); err != nil {
			return err
		}
	default:
		for s := 1; s < pt.pes; s++ {
			src := s
			if y.mode == ModeAsync {
				src = stacks.AnySource
			}
			st, err := y.recv(p, 0, recv, src)
			if err != nil {
				return err
			}
			pt.verify(p, 0, recv.Bytes(), st.Source, "message")
		}
	}
	pt.barrier(p, pe, false)
	if y.shmem() && pe == 0 && pt.pes > 1 {
		pt.verify(p, 0, recv.Bytes(), shmemSrc, "puts")
	}
	return nil
}

// allToAll: every PE sends a message to every other PE. Message passing
// goes in P-1 pairwise phases (send to PE+i, receive from PE-i); raw SHMEM
// puts to every PE in the order of shmem_order with no synchronization.
func (pt *point) allToAll(p *sim.Proc, pe int) error {
	send, recv, err := pt.setup(pe)
	if err != nil {
		return err
	}
	y := pt.sys
	P := pt.pes
	if y.shmem() && pt.n > 0 {
		copy(send.Bytes(), pt.window(shmemSrc))
	}
	pt.barrier(p, pe, true)
	if y.shmem() {
		for i := 0; i < P; i++ {
			d := i
			if pt.params.ShmemOrder == "shifted" {
				d = (pe + 1 + i) % P
			}
			if d != pe {
				y.m.Put(p, pe, d, recv.Addr, send.Addr, pt.n)
			}
		}
		y.m.Quiet(p, pe)
	} else {
		for i := 1; i < P; i++ {
			dst, src := (pe+i)%P, (pe-i+P)%P
			st, err := y.exchange(p, pe, send, dst, recv, src)
			if err != nil {
				return err
			}
			if st.Source != src && st.Source != stacks.AnySource && y.acl == nil {
				pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: message from PE %d reported as from PE %d at %v", pe, src, st.Source, p.Now()))
			}
			pt.verify(p, pe, recv.Bytes(), src, "message")
		}
	}
	pt.barrier(p, pe, false)
	if y.shmem() {
		pt.verify(p, pe, recv.Bytes(), shmemSrc, "puts")
	}
	return nil
}

func (pt *point) bcast(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	if pe == 0 {
		copy(buf.Bytes(), pt.window(0))
	}
	pt.barrier(p, pe, true)
	if err := pt.sys.bcast(p, pe, buf); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	pt.verify(p, pe, buf.Bytes(), 0, "broadcast")
	return nil
}

func (pt *point) reduce(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	var scratch mem.Region
	if pt.sys.acl == nil || pt.sys.mode != ModeSync { // ACLMPL has its own
		if scratch, err = pt.sys.buffer(pe, pt.n); err != nil {
			return err
		}
	}
	copy(buf.Bytes(), pt.window(pe))
	pt.barrier(p, pe, true)
	if err := pt.sys.reduce(p, pe, buf, scratch); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	if pe == 0 {
		want := make([]byte, pt.n)
		for q := 0; q < pt.pes; q++ {
			sumInto(want, pt.window(q))
		}
		if string(want) != string(buf.Bytes()) {
			off := 0
			for want[off] == buf.Bytes()[off] {
				off++
			}
			pt.fail(workloads.Corruption, fmt.Sprintf("PE 0: reduction result differs at offset %d at %v", off, p.Now()))
		}
	}
	return nil
}

func sumInto(acc, in []byte) {
	for i := 0; i+8 <= len(acc); i += 8 {
		var a, b uint64
		for j := 0; j < 8; j++ {
			a |= uint64(acc[i+j]) << (8 * j)
			b |= uint64(in[i+j]) << (8 * j)
		}
		a += b
		for j := 0; j < 8; j++ {
			acc[i+j] = byte(a >> (8 * j))
		}
	}
}

// latencyIters is the number of timed round trips (after one warm-up).
const latencyIters = 10

// latency: PEs 0 and 1 bounce one word; the value is half a round trip.
func (pt *point) latency(p *sim.Proc, pe int) error {
	y := pt.sys
	if pe > 1 {
		return nil
	}
	buf, err := y.buffer(pe, 8)
	if err != nil {
		return err
	}
	other := 1 - pe
	for i := 0; i <= latencyIters; i++ {
		if i == 1 && pe == 0 {
			pt.t0 = p.Now()
		}
		if y.shmem() {
			// Put the round number into the other PE's word, spin
			// (uncached: remote writes leave the cache stale) on ours.
			want := uint64(i + 1)
			cpu := y.m.CPU(pe)
			if pe == 0 {
				y.m.PutWord(p, 0, 1, buf.Addr, want)
			}
			cpu.SpinUntil(p, "SHMEM latency: waiting for the word", func() bool {
				return cpu.LoadUncached(p, buf.Addr, 8) == want
			}, buf.Addr)
			if pe == 1 {
				y.m.PutWord(p, 1, 0, buf.Addr, want)
			}
			continue
		}
		if pe == 0 {
			if err := y.send(p, 0, buf, other); err != nil {
				return err
			}
			if _, err := y.recv(p, 0, buf, other); err != nil {
				return err
			}
		} else {
			if _, err := y.recv(p, 1, buf, other); err != nil {
				return err
			}
			if err := y.send(p, 1, buf, other); err != nil {
				return err
			}
		}
	}
	if pe == 0 {
		pt.t1 = p.Now()
		pt.t1 = pt.t0 + (pt.t1-pt.t0)/(2*latencyIters)
	}
	return nil
}

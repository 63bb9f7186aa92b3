package collective

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// patternStride separates the windows of the shared pattern that different
// sources send (an odd stride, so that no two windows are aligned alike).
const patternStride = 61

// maxFailures is how many failures of one point are listed one by one; the
// rest are counted in a last "and N more" failure.
const maxFailures = 20

// point is one run: a fresh engine, machine and stack.
type point struct {
	s       workloads.Spec
	params  Params
	eng     *sim.Engine
	sys     *system
	pes, n  int
	pat     []byte
	got     []byte // what a verified buffer holds, as its PE's program sees it
	fails   []workloads.Failure
	dropped int // failures beyond maxFailures
	t0, t1  sim.Time
	elapsed sim.Time
	flip    *byteFlip // a test's injected corruption, or nil
	sym     mem.Addr  // raw SHMEM: the symmetric receive buffer's address
	symSet  bool
}

// byteFlip is an injected corruption, for tests only (no scenario sets
// it): the byte at offset of the first delivered buffer PE pe checks is
// flipped, as PE pe's program would see a corrupted delivery, just before
// the check.
type byteFlip struct {
	pe, offset int
	done       bool
}

func newPoint(s workloads.Spec, cfg config, pes, n int) (*point, error) {
	eng := s.NewEngine(s.Seed)
	sys, err := openSystem(eng, s, cfg, pes)
	if err != nil {
		return nil, err
	}
	pt := &point{s: s, params: cfg.params, eng: eng, sys: sys, pes: pes, n: n, flip: cfg.flip}
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

// fill writes src's window into buf as PE pe's program does (untimed set-up).
func (pt *point) fill(pe int, buf mem.Region, src int) {
	pt.sys.m.CPU(pe).Poke(buf.Addr, pt.window(src)[:buf.Len])
}

// view returns buf's bytes as PE pe's program sees them: through its
// cache, so that a stale line shows up as a corrupted delivery.
func (pt *point) view(pe int, buf mem.Region) []byte {
	if cap(pt.got) < buf.Len {
		pt.got = make([]byte, buf.Len)
	}
	b := pt.got[:buf.Len]
	cpu := pt.sys.m.CPU(pe)
	if f := pt.flip; f != nil && !f.done && f.pe == pe && f.offset < buf.Len {
		f.done = true
		a := buf.Addr + mem.Addr(f.offset)
		cpu.Peek(a, b[:1])
		b[0] ^= 0x5a
		cpu.Poke(a, b[:1])
	}
	cpu.Peek(buf.Addr, b)
	return b
}

// verify compares buf at PE pe, as pe's program sees it, with what src sent.
func (pt *point) verify(p *sim.Proc, pe int, buf mem.Region, src int, what string) {
	pt.compare(p, pe, pt.view(pe, buf), pt.window(src), fmt.Sprintf("%s from PE %d", what, src))
}

// compare reports the first byte where got differs from want.
func (pt *point) compare(p *sim.Proc, pe int, got, want []byte, what string) {
	if string(got) == string(want) {
		return
	}
	off := 0
	for off < len(got) && off < len(want) && got[off] == want[off] {
		off++
	}
	pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: %s (%d bytes) differs at offset %d at %v", pe, what, len(want), off, p.Now()))
}

// checkStatus reports a delivery whose envelope names another length or
// source than the one sent.
func (pt *point) checkStatus(p *sim.Proc, pe int, st stacks.Status, src int) {
	if st.Len != pt.n {
		pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: message from PE %d reported as %d bytes, %d sent, at %v", pe, src, st.Len, pt.n, p.Now()))
	}
	if src != stacks.AnySource && st.Source != src && st.Source != stacks.AnySource {
		pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: message from PE %d reported as from PE %d at %v", pe, src, st.Source, p.Now()))
	}
}

func (pt *point) fail(kind, detail string) {
	if len(pt.fails) < maxFailures {
		pt.fails = append(pt.fails, workloads.Failure{Kind: kind, Detail: detail})
		return
	}
	pt.dropped++
}

// failures are the point's failures, the ones beyond maxFailures counted.
func (pt *point) failures() []workloads.Failure {
	if pt.dropped == 0 {
		return pt.fails
	}
	return append(pt.fails, workloads.Failure{Kind: pt.fails[len(pt.fails)-1].Kind,
		Detail: fmt.Sprintf("and %d more failures on %d PEs with %d-byte messages", pt.dropped, pt.pes, pt.n)})
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

// symmetricRecv allocates PE pe's receive region of n bytes for raw SHMEM
// puts and records its address, which the putting PEs use: a symmetric
// buffer (the same allocations in the same order give it the same address
// on every PE that receives; the senders only need its address, so PEs
// that only send do not hold one). It is the first allocation of a PE.
func (pt *point) symmetricRecv(pe, n int) (mem.Region, error) {
	r, err := pt.sys.buffer(pe, n)
	if err != nil {
		return r, err
	}
	if pt.symSet && pt.sym != r.Addr {
		return r, fmt.Errorf("symmetric receive buffer at %#x, other PEs have it at %#x", r.Addr, pt.sym)
	}
	pt.sym, pt.symSet = r.Addr, true
	return r, nil
}

// symRegion is the symmetric receive region of n bytes as a PE that puts
// into it names it (at another PE).
func (pt *point) symRegion(n int) mem.Region { return mem.Region{Addr: pt.sym, Len: n} }

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

// Check decodes and validates a series' workload, machine and stack params
// and the memory every case needs, without running it.
func Check(kind string) func(workloads.Spec) error {
	return func(s workloads.Spec) error {
		_, err := configure(s, kind)
		return err
	}
}

// caseMetric is the metric and unit of a case's rows.
func caseMetric(kind string) (metric, unit string) {
	switch kind {
	case "onetoall", "alltoone", "alltoall":
		return "throughput_MBps", "MB/s"
	case "bcast", "reduce":
		return "time_s", "s"
	}
	return "latency_us", "us"
}

// tableMetric is a case's metric in the table workload (Table 2's columns).
func tableMetric(kind string) string {
	switch kind {
	case "bcast", "reduce":
		return kind + "_s"
	}
	return kind + "_MBps"
}

// cases are the cases a workload runs.
func cases(kind, stack string) []string {
	if kind != "table" {
		return []string{kind}
	}
	if stack == StackShmem {
		return []string{"alltoall", "alltoone", "onetoall"}
	}
	return []string{"alltoall", "alltoone", "onetoall", "bcast", "reduce"}
}

func sweep(s workloads.Spec, kind string) (workloads.Result, error) {
	cfg, err := configure(s, kind)
	if err != nil {
		return workloads.Result{}, err
	}
	return sweepConfig(s, cfg)
}

// sweepConfig runs every point of a configured series.
func sweepConfig(s workloads.Spec, cfg config) (workloads.Result, error) {
	var res workloads.Result
	kind, params := cfg.kind, cfg.params
	xname := "bytes"
	if len(params.PEs) > 1 {
		xname = "pes"
	}
	if kind == "table" && s.Stack.Name == StackShmem {
		res.Notes = append(res.Notes, s.Series+": raw SHMEM has no broadcast or reduce in this benchmark")
	}
	for _, pes := range params.PEs {
		for _, n := range params.Bytes {
			x := float64(n)
			if xname == "pes" {
				x = float64(pes)
			}
			for _, c := range cases(kind, s.Stack.Name) {
				v, pt, err := runCase(s, cfg, c, pes, n)
				if pt != nil {
					res.Events += pt.eng.Events()
					res.SimTime += pt.eng.Now()
					res.Failures = append(res.Failures, pt.failures()...)
				}
				if err != nil {
					return res, fmt.Errorf("%s: series %s: %s on %d PEs, %d bytes: %w", s.File, s.Series, c, pes, n, err)
				}
				metric, unit := caseMetric(c)
				if kind == "table" {
					metric = tableMetric(c)
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
func runCase(s workloads.Spec, cfg config, kind string, pes, n int) (float64, *point, error) {
	pt, err := newPoint(s, cfg, pes, n)
	if err != nil {
		return 0, nil, err
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
	default:
		return 0, nil, fmt.Errorf("collective: unknown case %q", kind)
	}
	if err := pt.run(body); err != nil {
		return 0, pt, err
	}
	if pt.sys.shmem() && kind != "latency" {
		pt.checkReceived(kind)
	}
	switch _, unit := caseMetric(kind); unit {
	case "MB/s":
		if pt.elapsed <= 0 {
			return 0, pt, fmt.Errorf("no simulated time elapsed between the barriers")
		}
		return float64((pes-1)*n) / pt.elapsed.Seconds() / 1e6, pt, nil
	case "s":
		return pt.elapsed.Seconds(), pt, nil
	}
	// latency: the time between the barriers is latencyIters round trips.
	return (pt.elapsed / (2 * latencyIters)).Micros(), pt, nil
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

// shmemSlotBytes bounds the receive space raw SHMEM gives each sender a
// slot of its own in: with (P-1) x bytes up to this, every put lands in its
// sender's slot and is verified there. Beyond it (a 128-PE all-to-all of
// 1 MB would need 127 MB per PE) the senders share one region: each still
// sends its own window, the puts overwrite each other, and the one that
// arrives last is what stays; the receiver checks that the region holds
// exactly one of its senders' windows, byte for byte (verifyLastPut: a
// corrupted, torn or stale region fails), and the byte count that every
// put arrived whole (checkReceived: a lost put fails). The contents of the
// puts that were overwritten cannot be checked: the benchmark overwrote
// them.
const shmemSlotBytes = 2 << 20

// slotted reports whether raw SHMEM senders get receive slots of their own.
func (pt *point) slotted() bool { return (pt.pes-1)*pt.n <= shmemSlotBytes }

// shmemRecvBytes is the receive space of a raw SHMEM receiver of senders
// messages.
func (pt *point) shmemRecvBytes(senders int) int {
	if pt.slotted() {
		return senders * pt.n
	}
	return pt.n
}

// shmemSlot is where src's put lands among a receiver's slots, skipping
// the receiver's own number (the shared region when not slotted).
func (pt *point) shmemSlot(recv mem.Region, src, dst int) mem.Region {
	if !pt.slotted() {
		return recv.Slice(0, pt.n)
	}
	k := src
	if src > dst {
		k--
	}
	return recv.Slice(k*pt.n, pt.n)
}

// verifyPuts checks the raw SHMEM puts PE pe received from senders: each
// in its own slot, or the last one to arrive in the shared region.
func (pt *point) verifyPuts(p *sim.Proc, pe int, recv mem.Region, senders []int) {
	if !pt.slotted() {
		pt.verifyLastPut(p, pe, recv.Slice(0, pt.n), senders)
		return
	}
	for _, s := range senders {
		pt.verify(p, pe, pt.shmemSlot(recv, s, pe), s, "put")
	}
}

// verifyLastPut checks a region every sender put its own window into: it
// must hold one of them exactly. The candidate is the sender whose window
// agrees longest with the region; a mismatch is reported against it.
func (pt *point) verifyLastPut(p *sim.Proc, pe int, region mem.Region, senders []int) {
	got := pt.view(pe, region)
	best, bestLen := senders[0], -1
	for _, s := range senders {
		w := pt.window(s)
		if string(got) == string(w) {
			return
		}
		k := 0
		for k < len(w) && got[k] == w[k] {
			k++
		}
		if k > bestLen {
			best, bestLen = s, k
		}
	}
	pt.compare(p, pe, got, pt.window(best), fmt.Sprintf("shared put region (nearest: PE %d's window)", best))
}

// others are the PEs other than pe.
func (pt *point) others(pe int) []int {
	o := make([]int, 0, pt.pes-1)
	for s := 0; s < pt.pes; s++ {
		if s != pe {
			o = append(o, s)
		}
	}
	return o
}

// recvSpaceBytes is the receive space a nonblocking benchmark program
// gives the receives it posts at once. A T3D PE had 16 or 64 MB
// (hardware.yaml t3d.local_mem_MB), so a root receiving 127 messages of
// 1 MB, let alone 10 MB, could not post them all into distinct buffers:
// like the real program it posts as many as fit and reuses each buffer for
// a later message once the delivery in it is verified. A workload choice,
// not a machine parameter; it bounds the host memory of large runs too.
const recvSpaceBytes = 4 << 20

// postDepth is how many nonblocking receives of n bytes a PE posts at once
// out of count: all of them when their buffers fit in recvSpaceBytes, else
// as many as fit, at least one.
func postDepth(n, count int) int {
	if n <= 0 {
		return count
	}
	return max(1, min(count, recvSpaceBytes/n))
}

// recvDepth is the number of receive buffers a PE of a message passing
// system uses for count incoming messages: one for blocking calls, which
// receive one message at a time, else postDepth.
func recvDepth(mode string, n, count int) int {
	if mode == ModeSync {
		return 1
	}
	return postDepth(n, count)
}

// buffers allocates k receive buffers of pt.n bytes on PE pe.
func (pt *point) buffers(pe, k int) ([]mem.Region, error) {
	bufs := make([]mem.Region, k)
	for j := range bufs {
		var err error
		if bufs[j], err = pt.sys.buffer(pe, pt.n); err != nil {
			return nil, err
		}
	}
	return bufs, nil
}

// sendBuffer allocates PE pe's send buffer and fills it with its window.
func (pt *point) sendBuffer(pe int) (mem.Region, error) {
	send, err := pt.sys.buffer(pe, pt.n)
	if err == nil {
		pt.fill(pe, send, pe)
	}
	return send, err
}

// oneToAll: PE 0 sends a message to PEs 1..P-1 in turn; nonblocking, it
// posts all its sends, then waits for them all.
func (pt *point) oneToAll(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.shmem() {
		return pt.oneToAllShmem(p, pe)
	}
	// Each PE allocates only what its role needs: the root a send buffer,
	// the others a receive buffer.
	var buf mem.Region
	var err error
	if pe == 0 {
		buf, err = pt.sendBuffer(pe)
	} else {
		buf, err = y.buffer(pe, pt.n)
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	switch {
	case pe == 0 && y.mode == ModeAsync:
		reqs := make([]stacks.Request, 0, pt.pes-1)
		for d := 1; d < pt.pes; d++ {
			r, err := y.comms[0].Isend(p, buf, d, 0)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		if err := waitAll(p, reqs); err != nil {
			return err
		}
	case pe == 0:
		for d := 1; d < pt.pes; d++ {
			if err := y.send(p, 0, buf, d); err != nil {
				return err
			}
		}
	default:
		st, err := y.recv(p, pe, buf, 0)
		if err != nil {
			return err
		}
		pt.checkStatus(p, pe, st, 0)
		pt.verify(p, pe, buf, 0, "message")
	}
	pt.barrier(p, pe, false)
	return nil
}

// oneToAllShmem: PE 0 puts its message into every other PE's symmetric
// receive buffer, then waits for the puts to complete.
func (pt *point) oneToAllShmem(p *sim.Proc, pe int) error {
	var send, recv mem.Region
	var err error
	if pe == 0 {
		send, err = pt.sendBuffer(pe)
	} else {
		recv, err = pt.symmetricRecv(pe, pt.n)
	}
	if err != nil {
		return err
	}
	y := pt.sys
	pt.barrier(p, pe, true)
	if pe == 0 {
		for d := 1; d < pt.pes; d++ {
			y.m.Put(p, 0, d, pt.sym, send.Addr, pt.n)
		}
		y.m.Quiet(p, 0)
	}
	pt.barrier(p, pe, false)
	if pe != 0 {
		pt.verify(p, pe, recv, 0, "put")
	}
	return nil
}

// allToOne: PEs 1..P-1 each send a message to PE 0. Blocking, PE 0
// receives them in PE order (synchronous ACLMPL must name the sender);
// nonblocking, it posts receives from any PE into the buffers it has
// (postDepth), takes the messages as they complete, verifying each, and
// reposts each buffer until all P-1 have come.
func (pt *point) allToOne(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.shmem() {
		return pt.allToOneShmem(p, pe)
	}
	if pe != 0 {
		send, err := pt.sendBuffer(pe)
		if err != nil {
			return err
		}
		pt.barrier(p, pe, true)
		if err := y.send(p, pe, send, 0); err != nil {
			return err
		}
		pt.barrier(p, pe, false)
		return nil
	}
	bufs, err := pt.buffers(0, recvDepth(y.mode, pt.n, pt.pes-1))
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	if y.mode == ModeAsync {
		err = pt.allToOneAsyncRoot(p, bufs)
	} else {
		for s := 1; s < pt.pes && err == nil; s++ {
			var st stacks.Status
			if st, err = y.recv(p, 0, bufs[0], s); err == nil {
				pt.checkStatus(p, 0, st, s)
				pt.verify(p, 0, bufs[0], s, "message")
			}
		}
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	return nil
}

// allToOneAsyncRoot is PE 0's nonblocking all-to-one: one receive from any
// PE posted per buffer, waited for in the order posted (MPI matches
// wildcard receives in that order), each delivery verified as soon as it
// completes and its buffer posted again while senders remain.
func (pt *point) allToOneAsyncRoot(p *sim.Proc, bufs []mem.Region) error {
	c := pt.sys.comms[0]
	total := pt.pes - 1
	reqs := make([]stacks.Request, len(bufs))
	posted := 0
	post := func(j int) error {
		r, err := c.Irecv(p, bufs[j], stacks.AnySource, 0)
		reqs[j] = r
		posted++
		return err
	}
	for j := range bufs {
		if err := post(j); err != nil {
			return err
		}
	}
	seen := make([]bool, pt.pes)
	for k := 0; k < total; k++ {
		j := k % len(bufs)
		st, err := reqs[j].Wait(p)
		if err != nil {
			return err
		}
		pt.checkStatus(p, 0, st, stacks.AnySource)
		switch src := st.Source; {
		case src <= 0 || src >= pt.pes:
			pt.fail(workloads.Corruption, fmt.Sprintf("PE 0: message reported as from PE %d, not a sender, at %v", src, p.Now()))
		case seen[src]:
			pt.fail(workloads.Corruption, fmt.Sprintf("PE 0: a second message reported as from PE %d at %v", src, p.Now()))
		default:
			seen[src] = true
			pt.verify(p, 0, bufs[j], src, "message")
		}
		if posted < total {
			if err := post(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// allToOneShmem: PEs 1..P-1 each put their message into PE 0's symmetric
// receive space (their own slot when it fits, else one shared region).
func (pt *point) allToOneShmem(p *sim.Proc, pe int) error {
	y := pt.sys
	var send, recv mem.Region
	var err error
	if pe == 0 {
		recv, err = pt.symmetricRecv(pe, pt.shmemRecvBytes(pt.pes-1))
	} else {
		send, err = pt.sendBuffer(pe)
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, true)
	if pe != 0 {
		slot := pt.shmemSlot(pt.symRegion(pt.shmemRecvBytes(pt.pes-1)), pe, 0)
		y.m.Put(p, pe, 0, slot.Addr, send.Addr, pt.n)
		y.m.Quiet(p, pe)
	}
	pt.barrier(p, pe, false)
	if pe == 0 {
		pt.verifyPuts(p, 0, recv, pt.others(0))
	}
	return nil
}

// allToAll: every PE sends a message to every other PE. Blocking message
// passing goes in P-1 pairwise phases (send to PE+i, receive from PE-i);
// nonblocking, a PE posts all its receives, then all its sends, then waits
// for them all (in rounds when the receive buffers do not all fit:
// postDepth); raw SHMEM puts to every PE in the order of shmem_order with
// no synchronization.
func (pt *point) allToAll(p *sim.Proc, pe int) error {
	y := pt.sys
	if y.shmem() {
		return pt.allToAllShmem(p, pe)
	}
	send, err := pt.sendBuffer(pe)
	if err != nil {
		return err
	}
	bufs, err := pt.buffers(pe, recvDepth(y.mode, pt.n, pt.pes-1))
	if err != nil {
		return err
	}
	P := pt.pes
	pt.barrier(p, pe, true)
	if y.mode == ModeAsync {
		err = pt.allToAllAsync(p, pe, send, bufs)
	} else {
		for i := 1; i < P && err == nil; i++ {
			dst, src := (pe+i)%P, (pe-i+P)%P
			var st stacks.Status
			if st, err = y.exchange(p, pe, send, dst, bufs[0], src); err == nil {
				pt.checkStatus(p, pe, st, src)
				pt.verify(p, pe, bufs[0], src, "message")
			}
		}
	}
	if err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	return nil
}

// allToAllAsync is PE pe's nonblocking all-to-all: in rounds of
// len(bufs) peers, it posts the receives from PEs pe-i, then the sends to
// PEs pe+i, then waits for the receives (verifying each delivery as it
// completes) and the sends.
func (pt *point) allToAllAsync(p *sim.Proc, pe int, send mem.Region, bufs []mem.Region) error {
	c := pt.sys.comms[pe]
	P := pt.pes
	recvs := make([]stacks.Request, 0, len(bufs))
	sends := make([]stacks.Request, 0, len(bufs))
	for base := 1; base < P; base += len(bufs) {
		end := min(P, base+len(bufs))
		recvs, sends = recvs[:0], sends[:0]
		for i := base; i < end; i++ {
			r, err := c.Irecv(p, bufs[i-base], (pe-i+P)%P, 0)
			if err != nil {
				return err
			}
			recvs = append(recvs, r)
		}
		for i := base; i < end; i++ {
			r, err := c.Isend(p, send, (pe+i)%P, 0)
			if err != nil {
				return err
			}
			sends = append(sends, r)
		}
		for k, r := range recvs {
			src := (pe - base - k + P) % P
			st, err := r.Wait(p)
			if err != nil {
				return err
			}
			pt.checkStatus(p, pe, st, src)
			pt.verify(p, pe, bufs[k], src, "message")
		}
		if err := waitAll(p, sends); err != nil {
			return err
		}
	}
	return nil
}

// allToAllShmem: every PE puts its message to every other PE, in the
// order of shmem_order, with no synchronization.
func (pt *point) allToAllShmem(p *sim.Proc, pe int) error {
	y := pt.sys
	recv, err := pt.symmetricRecv(pe, pt.shmemRecvBytes(pt.pes-1))
	if err != nil {
		return err
	}
	send, err := pt.sendBuffer(pe)
	if err != nil {
		return err
	}
	P := pt.pes
	pt.barrier(p, pe, true)
	for i := 0; i < P; i++ {
		d := i
		if pt.params.ShmemOrder == "shifted" {
			d = (pe + 1 + i) % P
		}
		if d != pe {
			slot := pt.shmemSlot(recv, pe, d) // symmetric: d's is at the same address
			y.m.Put(p, pe, d, slot.Addr, send.Addr, pt.n)
		}
	}
	y.m.Quiet(p, pe)
	pt.barrier(p, pe, false)
	pt.verifyPuts(p, pe, recv, pt.others(pe))
	return nil
}

func (pt *point) bcast(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	if pe == 0 {
		pt.fill(pe, buf, 0)
	}
	pt.barrier(p, pe, true)
	if err := pt.sys.bcast(p, pe, buf); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	pt.verify(p, pe, buf, 0, "broadcast")
	return nil
}

func (pt *point) reduce(p *sim.Proc, pe int) error {
	buf, err := pt.sys.buffer(pe, pt.n)
	if err != nil {
		return err
	}
	var scratch mem.Region
	// Receive space for the tree's combines, on the PEs that receive in it
	// (even PEs with a successor; the odd ones are leaves: they only send).
	// Synchronous ACLMPL has its own.
	if (pt.sys.acl == nil || pt.sys.mode != ModeSync) && pe%2 == 0 && pe+1 < pt.pes {
		if scratch, err = pt.sys.buffer(pe, pt.n); err != nil {
			return err
		}
	}
	pt.fill(pe, buf, pe)
	pt.barrier(p, pe, true)
	if err := pt.sys.reduce(p, pe, buf, scratch); err != nil {
		return err
	}
	pt.barrier(p, pe, false)
	if pe == 0 {
		want := make([]byte, pt.n)
		for q := 0; q < pt.pes; q++ {
			stacks.SumInt64.Combine(want, pt.window(q))
		}
		pt.compare(p, 0, pt.view(0, buf), want, "reduction result")
	}
	return nil
}

// latencyIters is the number of timed round trips (after one warm-up).
const latencyIters = 10

// latencyWord is the word PE src sends in round i.
func (pt *point) latencyWord(src, i int) []byte {
	w := binary.LittleEndian.Uint64(pt.pat[src*patternStride:]) ^ uint64(i+1)
	return binary.LittleEndian.AppendUint64(nil, w)
}

// latency: PEs 0 and 1 bounce one word (a new value each round, checked at
// every delivery); the value is half a round trip.
func (pt *point) latency(p *sim.Proc, pe int) error {
	y := pt.sys
	if pe > 1 {
		return nil
	}
	buf, err := y.buffer(pe, 8)
	if err != nil {
		return err
	}
	cpu := y.m.CPU(pe)
	other := 1 - pe
	for i := 0; i <= latencyIters; i++ {
		if i == 1 && pe == 0 {
			pt.t0 = p.Now()
		}
		for turn := 0; turn < 2; turn++ {
			from := turn // PE 0 sends first, then PE 1 replies
			word := pt.latencyWord(from, i)
			if from == pe {
				if y.shmem() {
					y.m.PutWord(p, pe, other, buf.Addr, binary.LittleEndian.Uint64(word))
					continue
				}
				cpu.Poke(buf.Addr, word)
				if err := y.send(p, pe, buf, other); err != nil {
					return err
				}
				continue
			}
			if y.shmem() {
				// Spin (uncached: remote writes leave the cache stale)
				// until the round's word is there.
				want := binary.LittleEndian.Uint64(word)
				cpu.SpinUntil(p, "SHMEM latency: waiting for the word", func() bool {
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

package collective

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
	"github.com/msgsim/msgsim/workloads/payload"
)

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
	key     uint64          // of the payload stream
	pat     *payload.Stream // the stream's bytes every window is cut from (shared)
	sources int             // the sources whose windows the case cuts (0 to sources-1); 0: every PE
	got     []byte          // what a shared put region holds, as its PE's program sees it
	scratch []byte          // verify's (payload.CheckWith), allocated at the first long payload
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

// newPointOn builds a point of pes PEs and n bytes on a world
// configureRun already opened for pes PEs (nil: open one).
func newPointOn(s workloads.Spec, cfg config, pes, n int, o *opened) (*point, error) {
	if o == nil {
		eng := s.NewEngine(s.Seed)
		w, err := s.OpenWorld(eng, pes)
		if err != nil {
			return nil, err
		}
		sys, err := newSystem(w, user(s), cfg.params.Mode, cfg.params.Reduce)
		if err != nil {
			return nil, err
		}
		o = &opened{eng: eng, sys: sys}
	}
	eng, sys := o.eng, o.sys
	// The payloads' key: one draw from the engine's seeded generator.
	pt := &point{s: s, params: cfg.params, eng: eng, sys: sys, pes: pes, n: n, flip: cfg.flip, key: eng.Rand().Uint64()}
	return pt, nil
}

// patternStride separates the windows of the one payload stream that
// different sources send: source src sends the stream's bytes
// [src*patternStride, src*patternStride+n), so that a delivery from the
// wrong source is caught (61: not a multiple of any word size).
const patternStride = 61

// stream is the seeded payload stream (workloads/payload); a delivery is
// verified by regenerating it, not against a kept copy.
func (pt *point) stream() payload.Pattern { return payload.Key(pt.key) }

// off is where source src's window starts in the stream.
func (pt *point) off(src int) int { return src * patternStride }

// window is what source src sends, as bytes: a slice of one buffer holding
// the stream once for every source (pt.sources), built on first use.
func (pt *point) window(src int) []byte {
	if pt.pat == nil {
		k := pt.pes
		if pt.sources > 0 { // a broadcast sends PE 0's window only
			k = pt.sources
		}
		pt.pat = payload.NewStream(pt.stream(), pt.n+k*patternStride)
	}
	return pt.pat.Bytes(pt.off(src), pt.n)
}

// fill writes src's window into buf as PE pe's program does (untimed
// set-up). The memory shares the window instead of copying it until the
// buffer is written (mem.CPU.PokeShared): the stream never changes, and
// 127 senders of 10 MB each would otherwise hold 1.3 GB of copies of it.
func (pt *point) fill(pe int, buf mem.Region, src int) {
	pt.sys.cpu(pe).PokeShared(buf.Addr, pt.window(src)[:buf.Len])
}

// injectFlip applies a test's injected corruption to buf, if it is the
// first buffer PE pe checks.
func (pt *point) injectFlip(pe int, buf mem.Region) {
	f := pt.flip
	if f == nil || f.done || f.pe != pe || f.offset >= buf.Len {
		return
	}
	f.done = true
	cpu := pt.sys.cpu(pe)
	a := buf.Addr + mem.Addr(f.offset)
	var b [1]byte
	cpu.Peek(a, b[:])
	b[0] ^= 0x5a
	cpu.Poke(a, b[:])
}

// view returns buf's bytes as PE pe's program sees them: through its
// cache, so that a stale line shows up as a corrupted delivery.
func (pt *point) view(pe int, buf mem.Region) []byte {
	if cap(pt.got) < buf.Len {
		pt.got = make([]byte, buf.Len)
	}
	b := pt.got[:buf.Len]
	pt.injectFlip(pe, buf)
	pt.sys.cpu(pe).Peek(buf.Addr, b)
	return b
}

// verify checks buf at PE pe, as pe's program sees it (through its cache,
// so that a stale line shows up as a corrupted delivery), against src's
// pattern.
func (pt *point) verify(p *sim.Proc, pe int, buf mem.Region, src int, what string) {
	pt.injectFlip(pe, buf)
	if pt.scratch == nil {
		pt.scratch = make([]byte, min(max(buf.Len, 1), payload.CheckBytes))
	}
	var m payload.Mismatch
	var ok bool
	if pt.pat != nil && buf.Len <= pt.n {
		// Bytes still shared with the stream the windows were cut from
		// are not compared (payload.Stream.CheckWith); run checks the
		// stream itself once at the end.
		m, ok = pt.pat.CheckWith(pt.sys.cpu(pe), buf.Addr, buf.Len, pt.off(src), pt.scratch)
	} else {
		m, ok = payload.CheckWith(pt.sys.cpu(pe), buf.Addr, buf.Len, pt.stream(), pt.off(src), pt.scratch)
	}
	if !ok || buf.Len != pt.n {
		off := m.Offset
		if ok {
			off = min(buf.Len, pt.n)
		}
		pt.fail(workloads.Corruption, fmt.Sprintf("PE %d: %s from PE %d (%d bytes) differs at offset %d at %v", pe, what, src, pt.n, off, p.Now()))
	}
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
	names := sim.NumberedNames("pe", pt.pes)
	for pe := 0; pe < pt.pes; pe++ {
		pt.eng.Spawn(names[pe], func(p *sim.Proc) {
			if err := body(p, pe); err != nil {
				pt.eng.Fail(fmt.Errorf("PE %d at %v: %w", pe, p.Now(), err))
			}
		})
	}
	if err := pt.eng.Run(); err != nil {
		return err
	}
	if pt.pat != nil {
		// The checks that skipped bytes shared with the stream relied on
		// it: a write into it (the memory failing to copy on write) is a
		// corruption of every payload cut from it.
		if m, ok := pt.pat.Intact(); !ok {
			pt.fail(workloads.Corruption, fmt.Sprintf("the shared payload stream was written: byte %d is %#x, not %#x", m.Offset, m.Got, m.Want))
		}
	}
	pt.elapsed = pt.t1 - pt.t0
	return nil
}

// barrier is the harness's barrier (system.barrier); PE 0 records the
// times.
func (pt *point) barrier(p *sim.Proc, pe int, start bool) {
	pt.sys.barrier(p, pe)
	if pe == 0 {
		if start {
			pt.t0 = p.Now()
		} else {
			pt.t1 = p.Now()
		}
	}
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

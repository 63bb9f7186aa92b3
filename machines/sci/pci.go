package sci

import (
	"math"

	"github.com/msgsim/msgsim/sim"
)

// The masters of a node's PCI bus.
const (
	// hostBridge carries the CPUs' posted writes into the adapter's stream
	// buffers (both CPUs of the node, in the order they reach it).
	hostBridge = 0
	// adapterDMA is the PCI-SCI adapter writing incoming packets into host
	// memory, and reading it for remote reads and fetch-and-increment.
	adapterDMA = 1
)

// pciBus is a node's 32-bit, 33 MHz PCI bus with its two masters. A
// master's transfers take their turn one after the other (FIFO); the two
// masters share the bus by arbitration, which grants it burst by burst:
// while both request, the arbiter alternates between them, one burst each
// (PCI Local Bus Specification 2.1, section 3.4: a fair arbiter; a master
// whose grant is removed gives the bus up at the end of its current burst,
// when its latency timer expires). So a 64-byte packet arriving while the
// host bridge posts 1 KB waits for one 32-byte write burst, not for the
// whole kilobyte, and both transfers slow down while they overlap.
//
// The alternation is computed, not stepped: while both masters are busy,
// each progresses at the share of the bus its bursts take (its burst time
// over the sum of both masters' burst times); one event per change (a
// transfer starting or ending), never one per burst. That is the burst-by-
// burst interleaving to within one burst at each change. (The products of
// times and shares are converted to float64 explicitly, so that no
// architecture fuses them into a multiply-add: the same results
// everywhere.)
type pciBus struct {
	eng *sim.Engine
	// q are each master's transfers, the first one active.
	q [2][]*pciXfer
	// last is when the active transfers' work was last brought up to date.
	last sim.Time
	// idleSince is when each master last had nothing to do.
	idleSince [2]sim.Time
	ev        sim.Handle
	evFn      func()
	free      []*pciXfer
}

// pciXfer is one transfer on the bus: its remaining work (the bus time it
// would take with the bus to itself) and the time of one of its bursts.
type pciXfer struct {
	work, burst float64 // picoseconds
	done        func()
	proc        *sim.Proc
}

func newPCIBus(eng *sim.Engine) *pciBus {
	b := &pciBus{eng: eng}
	b.evFn = b.step
	return b
}

// request queues a transfer of master of work (bus time alone) in bursts
// of burst; done runs (in the engine loop) when it is complete, or proc is
// woken. work must be positive.
func (b *pciBus) request(master int, work, burst sim.Time, done func(), proc *sim.Proc) {
	b.requestSince(master, work, burst, b.eng.Now(), 0, done, proc)
}

// requestSince is request for a transfer that could have started at since
// (not later than now), had its master been idle then: the adapter writes
// a grain's first packets as they arrive, before the grain's last packet
// is delivered. The bursts it would have had since then (sharing the bus
// with the other master, which loses them) are done already, but for
// keep, which remains after now (the last packet's burst, which cannot
// start before the packet is there).
func (b *pciBus) requestSince(master int, work, burst, since, keep sim.Time, done func(), proc *sim.Proc) {
	b.update()
	var x *pciXfer
	if n := len(b.free); n > 0 {
		x, b.free = b.free[n-1], b.free[:n-1]
	} else {
		x = &pciXfer{}
	}
	x.work, x.burst, x.done, x.proc = float64(work), float64(max(burst, 1)), done, proc
	b.q[master] = append(b.q[master], x)
	if len(b.q[master]) == 1 {
		if d := float64(b.last - max(since, b.idleSince[master])); d > 0 && work > keep {
			f := b.shares()
			d = min(d, float64(work-keep)/f[master])
			x.work -= float64(d * f[master])
			if o := 1 - master; len(b.q[o]) > 0 {
				b.q[o][0].work += float64(d * (1 - f[o]))
			}
		}
	}
	b.schedule()
}

// shares are the fractions of the bus each master's active transfer
// gets now.
func (b *pciBus) shares() (f [2]float64) {
	h, a := len(b.q[0]) > 0, len(b.q[1]) > 0
	switch {
	case h && a:
		bh, ba := b.q[0][0].burst, b.q[1][0].burst
		f[0], f[1] = bh/(bh+ba), ba/(bh+ba)
	case h:
		f[0] = 1
	case a:
		f[1] = 1
	}
	return f
}

// update charges the active transfers for the time since last.
func (b *pciBus) update() {
	now := b.eng.Now()
	if dt := float64(now - b.last); dt > 0 {
		f := b.shares()
		for m := range b.q {
			if len(b.q[m]) > 0 {
				b.q[m][0].work -= float64(dt * f[m])
			}
		}
	}
	b.last = now
}

// schedule sets the event of the next completion (keeping the one set
// when it has not moved).
func (b *pciBus) schedule() {
	f := b.shares()
	next := math.Inf(1)
	for m := range b.q {
		if len(b.q[m]) > 0 {
			next = min(next, math.Ceil(max(b.q[m][0].work, 0)/f[m]))
		}
	}
	if math.IsInf(next, 1) {
		b.eng.Cancel(b.ev)
		b.ev = sim.Handle{}
		return
	}
	t := b.last + sim.Time(next)
	if b.ev.Valid() && b.ev.At() == t {
		return
	}
	b.eng.Cancel(b.ev)
	b.ev = b.eng.At(t, b.evFn)
}

// step completes the transfers whose work is done (the host bridge's
// first), starts the next ones and schedules the next completion.
func (b *pciBus) step() {
	b.ev = sim.Handle{}
	b.update()
	for m := range b.q {
		for len(b.q[m]) > 0 && b.q[m][0].work < 0.5 {
			q := b.q[m]
			x := q[0]
			copy(q, q[1:])
			q[len(q)-1] = nil
			b.q[m] = q[:len(q)-1]
			done, proc := x.done, x.proc
			x.done, x.proc = nil, nil
			b.free = append(b.free, x)
			if len(b.q[m]) == 0 {
				b.idleSince[m] = b.last
			}
			if done != nil {
				done()
			}
			if proc != nil {
				proc.Wake()
			}
		}
	}
	b.schedule()
}

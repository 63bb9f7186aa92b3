package aclmpl

import (
	"encoding/binary"
	"fmt"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
)

// lazy is CPU time a PE's process has spent but not yet slept: the
// asynchronous receive's loop overhead and the uncached loads of pool
// buffer headers that cannot change before the loads' times, slept as one
// run of steps (pay, sim.Proc.SleepSteps) before anything whose outcome
// depends on the time, so that a scan of the pool or of the
// sent-but-not-yet-received list costs one coroutine switch pair, not one
// per buffer examined. The simulated times, and the order among same-time
// events, are those of the loop run step by step (SleepSteps runs the same
// events in the same order as the steps' sleeps): each load reads what
// memory holds at the load's time, because a load is charged ahead only
// when its word cannot change before then.
//
// A pool buffer's flag word holding slotEmpty can be set by a remote put at
// any time: its load is issued for real, at its time, after paying what is
// owed. One holding slotDone or slotReceived changes only by this PE's own
// stores (a buffer is handed out once between two resets of the register,
// and its one header put sets the flag with the header's other words), and
// neither do the header words of a buffer whose flag says DONE. pay checks
// that assumption: a word loaded ahead that changed before its time is
// reported as a model failure.
//
// Deferral is off (every cost slept at once, the loop run step by step) for
// a process that shares its processor (its sleeps are booked on a core),
// while a schedule explorer runs (its steps' footprints name every load),
// and in tests comparing both (Lib.perLoad).
type lazy struct {
	x     *PE
	p     *sim.Proc
	on    bool
	owed  []sim.Steps // the steps spent and not yet slept, in order
	ahead []aheadLoad // loads charged ahead since the last pay, for its check
}

// aheadLoad is a word loaded ahead of its time and what it held.
type aheadLoad struct {
	a mem.Addr
	v uint64
}

// lazyFor returns the deferred-time state of PE x's process p.
func (x *PE) lazyFor(p *sim.Proc) *lazy {
	l := &x.async.lazy
	if len(l.owed) != 0 {
		panic(fmt.Sprintf("aclmpl PE %d: deferred time started anew while %v is owed (a bug in the model)", x.rank, l.owed))
	}
	l.x, l.p, l.ahead, l.owed = x, p, l.ahead[:0], l.owed[:0]
	l.on = !x.lib.perLoad && !p.Bound() && !p.Engine().Exploring()
	return l
}

// compute spends n steps of cycles each of the library's own loop
// overhead.
func (l *lazy) compute(cycles float64, n int) {
	if !l.on {
		for range n {
			l.x.cpu.Compute(l.p, cycles)
		}
		return
	}
	l.owe(n, l.x.cpu.Clock().Cycles(cycles))
}

// owe adds n steps of d each to what is owed.
func (l *lazy) owe(n int, d sim.Time) {
	if n <= 0 || d <= 0 {
		return
	}
	if k := len(l.owed) - 1; k >= 0 && l.owed[k].D == d {
		l.owed[k].N += n
		return
	}
	l.owed = append(l.owed, sim.Steps{N: n, D: d})
}

// pay sleeps what is owed, then checks that every word loaded ahead still
// holds what it held when it was loaded.
func (l *lazy) pay() {
	if len(l.owed) > 0 {
		l.p.SleepSteps(l.owed...)
		l.owed = l.owed[:0]
	}
	// Consecutive words (a header's) are read back as one run.
	var b [hdrBytes]byte
	for i := 0; i < len(l.ahead); {
		j := i + 1
		for j < len(l.ahead) && j-i < len(b)/8 && l.ahead[j].a == l.ahead[j-1].a+8 {
			j++
		}
		l.x.cpu.PeekUncachedBytes(l.ahead[i].a, b[:8*(j-i)])
		for k, w := range l.ahead[i:j] {
			if v := binary.LittleEndian.Uint64(b[8*k:]); v != w.v {
				l.p.Engine().Fail(fmt.Errorf("aclmpl PE %d: the word at %#x changed from %#x to %#x before the time of its load, charged ahead (a write to a pool buffer not handed out: a bug in the model)", l.x.rank, w.a, w.v, v))
			}
		}
		i = j
	}
	l.ahead = l.ahead[:0]
}

// header loads the header of the pool buffer at s (uncached): its flag
// word (flag), then, when the flag says DONE, the three other words
// (word). When the flag loads ahead of its time, the four words are read
// from memory as one run: nothing happens between the loads ahead.
func (l *lazy) header(s mem.Addr) (flag uint64, w [3]uint64) {
	if l.on {
		var b [hdrBytes]byte
		l.x.cpu.PeekUncachedBytes(s, b[:])
		if flag = binary.LittleEndian.Uint64(b[:]); flag != slotEmpty {
			l.aheadLoad(s, flag)
			if flag == slotDone {
				for k := range w {
					w[k] = binary.LittleEndian.Uint64(b[8+8*k:])
					l.aheadLoad(s+mem.Addr(8+8*k), w[k])
				}
			}
			return flag, w
		}
	}
	if flag = l.flag(s); flag == slotDone {
		for k := range w {
			w[k] = l.word(s + mem.Addr(8+8*k))
		}
	}
	return flag, w
}

// flag loads a pool buffer's flag word (uncached): ahead of its time unless
// it says slotEmpty, which a remote put may change meanwhile; then at its
// time, after paying what is owed (the load's own time is owed: it reads
// memory when it is issued, as LoadUncached does).
func (l *lazy) flag(a mem.Addr) uint64 {
	if !l.on {
		return l.x.cpu.LoadUncached(l.p, a, 8)
	}
	if v := l.x.cpu.PeekUncached(a, 8); v != slotEmpty {
		l.aheadLoad(a, v)
		return v
	}
	l.pay()
	v := l.x.cpu.PeekUncached(a, 8)
	l.owe(1, l.x.async.uncached)
	l.x.cpu.CountUncached(1)
	return v
}

// word loads a header word of a pool buffer whose flag says DONE
// (uncached): it was written with the flag, so ahead of its time.
func (l *lazy) word(a mem.Addr) uint64 {
	if !l.on {
		return l.x.cpu.LoadUncached(l.p, a, 8)
	}
	v := l.x.cpu.PeekUncached(a, 8)
	l.aheadLoad(a, v)
	return v
}

// store stores v into a word of this PE's pool that no other PE writes
// meanwhile (a flag reset while the pool is full and its senders wait for
// the register's reset): at once, its time owed (mem.CPU.StoreNow), or a
// real store after paying what is owed.
func (l *lazy) store(a mem.Addr, v uint64) {
	if l.on && l.x.cpu.StoreNow(a, 8, v) {
		l.owe(1, l.x.async.store)
		return
	}
	l.pay()
	l.x.cpu.Store(l.p, a, 8, v)
}

func (l *lazy) aheadLoad(a mem.Addr, v uint64) {
	l.owe(1, l.x.async.uncached)
	l.x.cpu.CountUncached(1)
	l.ahead = append(l.ahead, aheadLoad{a: a, v: v})
}

package mem

import (
	"fmt"
	"math/bits"

	"github.com/msgsim/msgsim/sim"
)

// WordSet is a fixed set of 8-byte words in one CPU's memory that the
// CPU's program polls with uncached loads, each with what the program waits
// for: the ready words of a receiver's packet rings (one per sender), the
// credit counts other processors put into a sender's memory. Entry i has a
// region of memory, fixed by Watch, in which its word lies (a sender's
// ring, whose current slot moves on), and a word and a wanted value that
// Expect and ExpectChange set. Entries never watched take no part.
//
// The set follows the writes to its memory (Memory.Write and every write
// with its visibility effects): it knows at all times which entries hold
// what they wait for, so that ScanUncached and WaitWords cost the
// simulator work in proportion to the writes and the entries that change,
// not to the size of the set, and nothing is allocated in steady state.
// Writes that bypass the visibility effects (Memory.Bytes) are not seen,
// as they are not seen by SpinUntil.
type WordSet struct {
	cpu     *CPU
	ents    []wordEnt
	ready   []uint64 // bit i: entry i holds what it waits for
	sorted  []int32  // watched entries by region, for finding the entries a write touches
	before  []int32  // before[i]: watched entries in [0, i)
	indexed bool
	scan    wordScan
	waiters []wordWaiter
	cut     uint64 // scans whose end a write landing during them moved
}

type wordEnt struct {
	lo, hi  Addr // the entry's region
	word    Addr
	want    uint64
	differs bool // ready when the word differs from want (a count that moved), else when it equals want
	watched bool
}

// wordScan is a ScanUncached in progress: its loads are issued one every
// load from t0 at the entries' positions in the scan's order, and it ends
// after k loads, at found (or, found < 0, having found nothing).
type wordScan struct {
	proc            *sim.Proc
	t0, load        sim.Time
	lo, hi, from, m int
	found, k        int
}

// wordWaiter is a process in WaitWords on entries [lo, hi).
type wordWaiter struct {
	proc   *sim.Proc
	lo, hi int
}

// NewWordSet returns a set of n entries in this CPU's memory, none watched
// yet. It follows the memory's writes for as long as the memory lives.
func (c *CPU) NewWordSet(n int) *WordSet {
	s := &WordSet{cpu: c, ents: make([]wordEnt, n), ready: make([]uint64, (n+63)/64)}
	c.mem.sets = append(c.mem.sets, s)
	return s
}

// Len is the number of entries.
func (s *WordSet) Len() int { return len(s.ents) }

// Watch makes entry i take part, its word lying in [lo, lo+n). Regions of
// a set must not overlap. Set-up only: call it before the set is used.
func (s *WordSet) Watch(i int, lo Addr, n int) {
	e := &s.ents[i]
	e.lo, e.hi, e.word, e.watched = lo, lo+Addr(n), lo, true
	s.indexed = false
	s.setReady(i, false)
}

// Expect makes entry i wait until word (in its region) holds want.
func (s *WordSet) Expect(i int, word Addr, want uint64) { s.expect(i, word, want, false) }

// ExpectChange makes entry i wait until word (in its region) holds a value
// other than seen.
func (s *WordSet) ExpectChange(i int, word Addr, seen uint64) { s.expect(i, word, seen, true) }

func (s *WordSet) expect(i int, word Addr, want uint64, differs bool) {
	e := &s.ents[i]
	if !e.watched || word < e.lo || word+8 > e.hi {
		panic(fmt.Sprintf("mem %s: word set entry %d: word %#x outside its region [%#x, %#x) (a bug in the calling model)", s.cpu.mem.name, i, word, e.lo, e.hi))
	}
	e.word, e.want, e.differs = word, want, differs
	s.setReady(i, s.holds(e))
}

// Word is entry i's word now.
func (s *WordSet) Word(i int) Addr { return s.ents[i].word }

// Ready reports whether entry i holds what it waits for.
func (s *WordSet) Ready(i int) bool { return s.ready[i>>6]&(1<<(i&63)) != 0 }

// FirstReady is the first entry of [lo, hi) that holds what it waits for,
// in cyclic order from entry from, or -1 (no timing: the program's loads
// are ScanUncached).
func (s *WordSet) FirstReady(lo, hi, from int) int {
	if i := s.firstIn(from, hi); i >= 0 {
		return i
	}
	return s.firstIn(lo, from)
}

func (s *WordSet) holds(e *wordEnt) bool {
	return (s.cpu.mem.Load64(e.word) == e.want) != e.differs
}

func (s *WordSet) setReady(i int, r bool) {
	if r {
		s.ready[i>>6] |= 1 << (i & 63)
	} else {
		s.ready[i>>6] &^= 1 << (i & 63)
	}
}

// firstIn is the first ready entry of [a, b), or -1.
func (s *WordSet) firstIn(a, b int) int {
	for a < b {
		w := s.ready[a>>6] >> (a & 63)
		if w != 0 {
			if i := a + bits.TrailingZeros64(w); i < b {
				return i
			}
			return -1
		}
		a = (a | 63) + 1
	}
	return -1
}

// index sorts the watched entries by region and counts them, once after
// set-up.
func (s *WordSet) index() {
	s.sorted, s.before = s.sorted[:0], make([]int32, len(s.ents)+1)
	for i, e := range s.ents {
		s.before[i+1] = s.before[i]
		if e.watched {
			s.before[i+1]++
			s.sorted = append(s.sorted, int32(i))
		}
	}
	sortEntries(s.sorted, s.ents)
	for k := 1; k < len(s.sorted); k++ {
		a, b := s.ents[s.sorted[k-1]], s.ents[s.sorted[k]]
		if a.hi > b.lo {
			panic(fmt.Sprintf("mem %s: word set regions [%#x, %#x) and [%#x, %#x) overlap (a bug in the calling model)", s.cpu.mem.name, a.lo, a.hi, b.lo, b.hi))
		}
	}
	s.indexed = true
}

// sortEntries sorts entry indices by region base (insertion sort on runs
// that are usually already in order: set-up only).
func sortEntries(idx []int32, ents []wordEnt) {
	for k := 1; k < len(idx); k++ {
		x := idx[k]
		j := k
		for j > 0 && ents[idx[j-1]].lo > ents[x].lo {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = x
	}
}

// watchedIn is the number of watched entries in [lo, hi).
func (s *WordSet) watchedIn(lo, hi int) int { return int(s.before[hi] - s.before[lo]) }

// pos is watched entry i's position in the cyclic order of [lo, hi) from
// entry from: the number of watched entries the order visits before it.
func (s *WordSet) pos(lo, hi, from, i int) int {
	if i >= from {
		return s.watchedIn(from, i)
	}
	return s.watchedIn(from, hi) + s.watchedIn(lo, i)
}

// written updates the entries whose word [a, a+n) overlaps: the memory
// calls it for every write with visibility effects.
func (s *WordSet) written(a Addr, n int) {
	if !s.indexed {
		s.index()
	}
	end := a + Addr(n)
	lo, hi := 0, len(s.sorted) // the first region ending after a
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.ents[s.sorted[mid]].hi > a {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for k := lo; k < len(s.sorted); k++ {
		i := int(s.sorted[k])
		e := &s.ents[i]
		if e.lo >= end {
			return
		}
		if e.word >= end || e.word+8 <= a {
			continue
		}
		if r := s.holds(e); r != s.Ready(i) {
			s.setReady(i, r)
			s.changed(i, r)
		}
	}
}

// changed: entry i has come to hold what it waits for (r) or stopped
// holding it. A scan in progress whose load of entry i is still to come
// reads the new value; a process waiting for the entry wakes.
func (s *WordSet) changed(i int, r bool) {
	if sc := &s.scan; sc.proc != nil && i >= sc.lo && i < sc.hi {
		s.scanChanged(i, r)
	}
	if !r {
		return
	}
	for k := 0; k < len(s.waiters); k++ {
		w := s.waiters[k]
		if i >= w.lo && i < w.hi {
			s.waiters = append(s.waiters[:k], s.waiters[k+1:]...)
			k--
			// The wait's poll costs nothing (the scan that follows pays the
			// loads): the waiter notices at once (SpinUntil's zero period).
			w.proc.WakeAt(w.proc.Now())
		}
	}
}

// scanChanged moves the end of the scan in progress when entry i changed
// before its load was issued: the load of the entry at position q is
// issued at t0 + q*load and reads what memory holds then, a write landing
// at that very instant included.
func (s *WordSet) scanChanged(i int, r bool) {
	sc := &s.scan
	q := s.pos(sc.lo, sc.hi, sc.from, i)
	if sc.t0+sim.Time(q)*sc.load < sc.proc.Now() {
		return // loaded already: it read the old value
	}
	switch {
	case r && (sc.found < 0 || q < sc.k-1):
		sc.found, sc.k = i, q+1
	case !r && i == sc.found:
		sc.found, sc.k = -1, sc.m
		if sc.from <= i {
			sc.found = s.firstIn(i+1, sc.hi)
			if sc.found < 0 {
				sc.found = s.firstIn(sc.lo, sc.from)
			}
		} else {
			sc.found = s.firstIn(i+1, sc.from)
		}
		if sc.found >= 0 {
			sc.k = s.pos(sc.lo, sc.hi, sc.from, sc.found) + 1
		}
	default:
		return
	}
	s.cut++
	sc.proc.WakeAt(sc.t0 + sim.Time(sc.k)*sc.load)
}

// Cut is the number of scans whose outcome a write landing during them
// changed (for tests: the case the one-operation scan must time as the
// loads issued one by one would).
func (s *WordSet) Cut() uint64 { return s.cut }

// ScanUncached loads the words of entries [lo, hi) of s with uncached
// loads, in cyclic order from entry from (entries not watched skipped),
// until one holds what it waits for: it returns that entry and the number
// of loads, ok false when none did (every word loaded once). The scan is
// one timed operation, not one per load: the loads are charged as
// LoadUncached charges them, back to back (uncached_load cycles each; no
// pipelining), and a write that lands while the scan runs is read by the
// loads issued at or after its time, exactly as the same loads issued one
// by one would read it, except for a write landing at the very instant of
// a load, which that load reads here, while loads issued one by one read
// it only if the write's event was scheduled before the load's (see
// mem_test.go's comparison). The loads do not see this CPU's own
// buffered stores: with stores in the buffer, or where the engine does not
// merge steps (sim.Engine.Merging: run step by step, a process that shares
// its processor, a schedule explorer naming every load), it issues the
// loads one by one.
func (c *CPU) ScanUncached(p *sim.Proc, s *WordSet, lo, hi, from int) (entry, loads int, ok bool) {
	if c.polling {
		c.notInPoll("ScanUncached")
	}
	if !s.indexed {
		s.index()
	}
	m := s.watchedIn(lo, hi)
	if m == 0 {
		return -1, 0, false
	}
	load := c.clock.Cycles(c.cfg.Costs.UncachedLoadCycles)
	if !c.eng.Merging(p) || len(c.buffered()) > 0 || load <= 0 || s.scan.proc != nil || c.bus != nil {
		return c.scanByLoads(p, s, lo, hi, from)
	}
	sc := &s.scan
	*sc = wordScan{proc: p, t0: p.Now(), load: load, lo: lo, hi: hi, from: from, m: m, found: s.FirstReady(lo, hi, from), k: m}
	if sc.found >= 0 {
		sc.k = s.pos(lo, hi, from, sc.found) + 1
	}
	p.Sleep(sim.Time(sc.k) * load)
	entry, loads = sc.found, sc.k
	sc.proc = nil
	c.stats.Uncached += uint64(loads)
	return entry, loads, entry >= 0
}

// scanByLoads is ScanUncached one LoadUncached at a time.
func (c *CPU) scanByLoads(p *sim.Proc, s *WordSet, lo, hi, from int) (entry, loads int, ok bool) {
	for k := 0; k < hi-lo; k++ {
		i := from + k
		if i >= hi {
			i -= hi - lo
		}
		e := &s.ents[i]
		if !e.watched {
			continue
		}
		loads++
		if (c.LoadUncached(p, e.word, 8) == e.want) != e.differs {
			return i, loads, true
		}
	}
	return -1, loads, false
}

// WaitWords sleeps until one of the entries [lo, hi) of s holds what it
// waits for, at once if one does: a spin on the set's words whose polls
// cost nothing (the scan that follows pays the loads), which wakes when a
// write makes an entry ready and not otherwise. reason names the wait in
// deadlock and livelock reports; a wait nothing can end is a livelock.
func (c *CPU) WaitWords(p *sim.Proc, reason string, s *WordSet, lo, hi int) {
	if c.polling {
		c.notInPoll("WaitWords")
	}
	if !s.indexed {
		s.index()
	}
	if s.firstIn(lo, hi) >= 0 {
		return
	}
	s.waiters = append(s.waiters, wordWaiter{proc: p, lo: lo, hi: hi})
	p.BlockSpinning(sim.Reason(reason))
}

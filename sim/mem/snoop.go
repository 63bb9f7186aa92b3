package mem

import (
	"fmt"
	"math"

	"github.com/msgsim/msgsim/sim"
)

// Snooping cache coherence on a shared bus: the caches of a bus-based SMP
// (the SGI Challenge's, on its POWERpath-2 bus) keep every line in one of
// the four states of the Illinois protocol (MESI), and each miss, upgrade
// and write-back is a transaction on the one bus, which every other cache
// snoops. A transaction waits for the bus, holds it for its address and
// data cycles, and a read then waits for memory's latency; copies and
// coherence traffic of every processor compete for it.
//
// A CPU attached to a Bus keeps the tags and states of its cache (set
// associative, least recently used, write-back and write-allocate); the
// bytes are memory's (the caches are coherent: a load never sees a stale
// copy), so the model is of what the protocol costs. Its loads, stores,
// atomics (load-linked/store-conditional: the line taken exclusive) and
// copies pay for the transactions their lines need; uncached loads go to
// memory over the bus. Costs of hits are the CPU's own (Costs). What the
// harness writes without timing (Poke, Memory.Write: a workload filling
// its buffers) and vector moves leave the states as they are: the bytes
// are memory's whatever the states say. A copy takes the bus for a step
// of copyChunkLines lines at a time, so other processors' transactions
// wait at most one step.

// Line states of the Illinois (MESI) protocol.
const (
	lineInvalid   uint8 = iota // not cached
	lineShared                 // clean, other caches may hold it
	lineExclusive              // clean, no other cache holds it: a store needs no transaction
	lineModified               // dirty, the only copy: evicting it writes it back
)

// BusConfig is a snooping bus: its sustained data bandwidth, the time an
// address-only transaction (an upgrade's invalidation) holds it, and the
// latency of memory behind it.
type BusConfig struct {
	// LineBytes is the coherence unit (the caches' line).
	LineBytes int
	// MBps is the sustained data bandwidth (10^6 B/s): a line's data
	// holds the bus LineBytes/MBps.
	MBps float64
	// AddressNs is the arbitration and address cycle every transaction
	// begins with; an upgrade (invalidate, no data) is only that.
	AddressNs float64
	// MemoryLatencyNs is the time from a read's address cycle to its
	// data, during which the split-transaction bus serves others.
	MemoryLatencyNs float64
}

// Validate names the first bad field.
func (b BusConfig) Validate() error {
	switch {
	case b.LineBytes <= 0 || b.LineBytes&(b.LineBytes-1) != 0:
		return fmt.Errorf("bus line_bytes must be a positive power of two, got %d", b.LineBytes)
	case !(b.MBps > 0) || math.IsInf(b.MBps, 0):
		return fmt.Errorf("bus mbps must be a positive number, got %g", b.MBps)
	case !(b.AddressNs >= 0) || math.IsInf(b.AddressNs, 0):
		return fmt.Errorf("bus address_ns must be a non-negative number, got %g", b.AddressNs)
	case !(b.MemoryLatencyNs >= 0) || math.IsInf(b.MemoryLatencyNs, 0):
		return fmt.Errorf("bus memory_latency_ns must be a non-negative number, got %g", b.MemoryLatencyNs)
	}
	return nil
}

// BusStats counts a bus's transactions.
type BusStats struct {
	Reads         uint64   // BusRd: a load's miss (the line shared or exclusive)
	ReadExs       uint64   // BusRdX: a store's miss (the line modified, others invalidated)
	Upgrades      uint64   // a store to a shared line: the others invalidated, no data
	Writebacks    uint64   // a modified line evicted
	Interventions uint64   // a miss served while another cache held the line modified
	Invalidations uint64   // copies in other caches invalidated
	Uncached      uint64   // uncached loads (a word from memory)
	Busy          sim.Time // total time the bus was held
}

// Bus is a shared snooping bus with the caches attached to it.
type Bus struct {
	cfg     BusConfig
	shift   uint
	addr    sim.Time // an address cycle
	line    sim.Time // a line's data cycles
	word    sim.Time // one word's data cycle
	latency sim.Time
	free    sim.Time // when the bus is next free
	cpus    []*CPU
	stats   BusStats
}

// NewBus returns a bus with no caches attached.
func NewBus(cfg BusConfig) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	shift := uint(0)
	for 1<<shift < cfg.LineBytes {
		shift++
	}
	return &Bus{
		cfg: cfg, shift: shift,
		addr:    sim.Nano(cfg.AddressNs),
		line:    sim.TransferTime(cfg.LineBytes, cfg.MBps*1e6),
		word:    sim.TransferTime(8, cfg.MBps*1e6),
		latency: sim.Nano(cfg.MemoryLatencyNs),
	}, nil
}

// Stats returns the transaction counts so far.
func (b *Bus) Stats() BusStats { return b.stats }

// Config is the bus's configuration.
func (b *Bus) Config() BusConfig { return b.cfg }

// Attach puts c's cache on the bus: from now on c keeps its cache's lines
// in MESI states and pays for their transactions. c's model must have a
// coherent cache whose line is the bus's, and no store buffer (a snooping
// CPU here performs its stores in order, each once it owns the line).
func (b *Bus) Attach(c *CPU) error {
	cc := c.cfg.Cache
	switch {
	case !cc.Enabled || !cc.Coherent:
		return fmt.Errorf("cpu %s: a snooping bus needs a coherent cache", c.name)
	case cc.LineBytes != b.cfg.LineBytes:
		return fmt.Errorf("cpu %s: cache line %d bytes, the bus's is %d", c.name, cc.LineBytes, b.cfg.LineBytes)
	case c.cfg.StoreBuffer.Depth > 0:
		return fmt.Errorf("cpu %s: a snooping CPU here has no store buffer", c.name)
	case c.bus != nil:
		return fmt.Errorf("cpu %s: already on a bus", c.name)
	}
	c.cache = nil // the bytes are memory's: the tags and states are the snoop's
	c.lineShift = b.shift
	c.snoop = &snoopCache{sets: cc.SizeBytes / cc.LineBytes / cc.Ways, ways: cc.Ways}
	c.bus = b
	b.cpus = append(b.cpus, c)
	return nil
}

// snoopCache is the tags and MESI states of one CPU's cache on a bus;
// allocated at the first fill.
type snoopCache struct {
	sets, ways int
	tags       []uint64 // line + 1; 0: empty
	state      []uint8
	used       []uint64 // LRU stamps
	clock      uint64
}

// find returns the slot holding line, or -1.
func (s *snoopCache) find(line uint64) int {
	if s.tags == nil {
		return -1
	}
	base := int(line%uint64(s.sets)) * s.ways
	for w := 0; w < s.ways; w++ {
		if i := base + w; s.tags[i] == line+1 && s.state[i] != lineInvalid {
			return i
		}
	}
	return -1
}

// touch renews slot i's LRU stamp.
func (s *snoopCache) touch(i int) {
	s.clock++
	s.used[i] = s.clock
}

// claim gives line a slot of its set (an empty one, else the least
// recently used) in state st, and reports whether it evicted a modified
// line (a write-back).
func (s *snoopCache) claim(line uint64, st uint8) (writeback bool) {
	if s.tags == nil {
		n := s.sets * s.ways
		s.tags, s.state, s.used = make([]uint64, n), make([]uint8, n), make([]uint64, n)
	}
	base := int(line%uint64(s.sets)) * s.ways
	victim := base
	for w := 0; w < s.ways; w++ {
		i := base + w
		if s.state[i] == lineInvalid {
			victim = i
			break
		}
		if s.used[i] < s.used[victim] {
			victim = i
		}
	}
	writeback = s.state[victim] == lineModified
	s.tags[victim], s.state[victim] = line+1, st
	s.touch(victim)
	return writeback
}

// transaction is what a run of lines needs of the bus: the time it holds
// it, and whether data comes from memory (a read waits for its latency).
type transaction struct {
	hold sim.Time
	data bool
}

// snoopOthers is what the other caches do on c's transaction for line:
// on a read (exclusive false) a modified or exclusive copy becomes shared;
// on a read-exclusive or upgrade every copy is invalidated. It reports
// whether another cache held the line.
func (b *Bus) snoopOthers(c *CPU, line uint64, exclusive bool) (held bool) {
	for _, o := range b.cpus {
		if o == c {
			continue
		}
		i := o.snoop.find(line)
		if i < 0 {
			continue
		}
		held = true
		if o.snoop.state[i] == lineModified {
			b.stats.Interventions++ // the owner supplies the line (and memory takes it)
		}
		if exclusive {
			o.snoop.state[i] = lineInvalid
			b.stats.Invalidations++
		} else {
			o.snoop.state[i] = lineShared
		}
	}
	return held
}

// read is what c's load of line needs: nothing on a hit, else a BusRd
// (the line shared if another cache holds it, exclusive if none does),
// plus the write-back of a modified victim.
func (b *Bus) read(c *CPU, line uint64, t *transaction) (hit bool) {
	s := c.snoop
	if i := s.find(line); i >= 0 {
		s.touch(i)
		return true
	}
	b.stats.Reads++
	st := lineExclusive
	if b.snoopOthers(c, line, false) {
		st = lineShared
	}
	t.hold += b.addr + b.line
	t.data = true
	if s.claim(line, st) {
		b.stats.Writebacks++
		t.hold += b.addr + b.line
	}
	return false
}

// write is what c's store (or atomic) to line needs: nothing on a
// modified line, none either on an exclusive one (it becomes modified
// silently), an upgrade on a shared one (the others invalidated), a
// BusRdX on a miss (write-allocate), plus the write-back of a modified
// victim.
func (b *Bus) write(c *CPU, line uint64, t *transaction) (hit bool) {
	s := c.snoop
	if i := s.find(line); i >= 0 {
		s.touch(i)
		switch s.state[i] {
		case lineModified:
			return true
		case lineExclusive:
			s.state[i] = lineModified
			return true
		}
		b.stats.Upgrades++
		b.snoopOthers(c, line, true)
		s.state[i] = lineModified
		t.hold += b.addr
		return false
	}
	b.stats.ReadExs++
	b.snoopOthers(c, line, true)
	t.hold += b.addr + b.line
	t.data = true
	if s.claim(line, lineModified) {
		b.stats.Writebacks++
		t.hold += b.addr + b.line
	}
	return false
}

// lines applies f (read or write) to every line of [a, a+n).
func (b *Bus) lines(c *CPU, a Addr, n int, t *transaction, f func(*Bus, *CPU, uint64, *transaction) bool) (hits bool) {
	if n <= 0 {
		return true
	}
	hits = true
	for line, last := uint64(a)>>b.shift, uint64(a+Addr(n)-1)>>b.shift; line <= last; line++ {
		if !f(b, c, line, t) {
			hits = false
		}
	}
	return hits
}

// take holds the bus for t, from when it is free, and returns when the
// transaction's data is there (its last cycle, plus memory's latency
// where data was read): the process waits until then.
func (b *Bus) take(now sim.Time, t transaction) sim.Time {
	if t.hold == 0 {
		return now
	}
	start := max(now, b.free)
	b.free = start + t.hold
	b.stats.Busy += t.hold
	end := b.free
	if t.data {
		end += b.latency
	}
	return end
}

// busLoad charges p for c's load of [a, a+n) on the bus; it reports
// whether every line hit.
func (c *CPU) busLoad(p *sim.Proc, a Addr, n int) bool {
	var t transaction
	hit := c.bus.lines(c, a, n, &t, (*Bus).read)
	c.waitBus(p, t)
	return hit
}

// busStore charges p for c taking [a, a+n) modified.
func (c *CPU) busStore(p *sim.Proc, a Addr, n int) {
	var t transaction
	c.bus.lines(c, a, n, &t, (*Bus).write)
	c.waitBus(p, t)
}

// waitBus sleeps p until t's data is there.
func (c *CPU) waitBus(p *sim.Proc, t transaction) {
	if end := c.bus.take(p.Now(), t); end > p.Now() {
		p.Sleep(end - p.Now())
	}
}

// busUncached charges p for an uncached load: an address cycle and one
// word's data from memory.
func (c *CPU) busUncached(p *sim.Proc) {
	c.bus.stats.Uncached++
	c.waitBus(p, transaction{hold: c.bus.addr + c.bus.word, data: true})
}

// copyChunkLines is the lines of a copy's source (and as many of its
// destination) whose transactions one step of a copy on a bus takes: the
// bus serves other processors' transactions between two steps.
const copyChunkLines = 32

// busCopy charges p for a copy of n bytes from src to dst by c on the bus,
// step by step: each step reads its source lines and takes its
// destination lines modified, holding the bus for their transactions, and
// ends when both the CPU's copy loop (at memcpy_mbps) and the bus's data
// are done (the processor overlaps its misses with its copying).
func (c *CPU) busCopy(p *sim.Proc, dst, src Addr, n int) {
	p.Sleep(c.clock.Cycles(c.cfg.Costs.CopyStartupCycles))
	step := copyChunkLines << c.bus.shift
	for off := 0; off < n; off += step {
		k := min(step, n-off)
		var t transaction
		c.bus.lines(c, src+Addr(off), k, &t, (*Bus).read)
		c.bus.lines(c, dst+Addr(off), k, &t, (*Bus).write)
		now := p.Now()
		end := max(c.bus.take(now, t), now+sim.TransferTime(k, c.cfg.Costs.MemcpyMBps*1e6))
		p.Sleep(end - now)
	}
}

// LineState is the MESI state of the line holding a in c's cache on a
// bus: "M", "E", "S" or "I" (and "" for a CPU on no bus). For tests and
// teaching.
func (c *CPU) LineState(a Addr) string {
	if c.bus == nil {
		return ""
	}
	i := c.snoop.find(uint64(a) >> c.bus.shift)
	if i < 0 {
		return "I"
	}
	return [...]string{"I", "S", "E", "M"}[c.snoop.state[i]]
}

// Bus is the snooping bus c is attached to, or nil.
func (c *CPU) Bus() *Bus { return c.bus }

// Coherent reports whether c's loads always see what other processors
// stored last: it has no cache, or a coherent one (on a snooping bus or
// not). Protocol code for non-coherent caches (uncached loads of flags,
// cache flushes in locks) is not needed where it is.
func (c *CPU) Coherent() bool { return !c.cfg.Cache.Enabled || c.cfg.Cache.Coherent }

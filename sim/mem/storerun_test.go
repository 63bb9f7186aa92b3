package mem

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/sim"
)

// storeRunCase is a writer storing words 0..n-1 of a buffer (word i gets
// 100+i) in one StoreRun, computing gap cycles after each store, while
// another CPU looks at the buffer: loads of a word at given instants, a
// spinner waiting for a word's value that starts at a given instant, and
// a put-like write landing on a word.
type storeRunCase struct {
	name   string
	n      int
	gap    float64
	loads  []look     // another processor's uncached loads
	spin   *spinLook  // another processor's spin on a word
	writes []write    // writes by another agent (entry: the word)
	shares []write    // shared bytes placed by another agent: 512 bytes of v from the word on
	peeks  []sim.Time // untimed reads of the whole buffer (a workload checking it)
	views  []sim.Time // the buffer's shared bytes taken (a put of it reading its source)
}

// look is an uncached load of word entry issued at at.
type look struct {
	at    sim.Time
	entry int
}

// spinLook is a spin, started at at, until word entry holds want.
type spinLook struct {
	at    sim.Time
	entry int
	want  uint64
}

// storeRunOutcome is what the lookers saw and when the writer ended.
type storeRunOutcome struct {
	loaded  []uint64
	peeked  [][]uint64
	spunAt  sim.Time
	end     sim.Time
	final   []uint64
	events  uint64
	stores  uint64
	spinErr string
}

func (o storeRunOutcome) same(x storeRunOutcome) bool {
	return slices.Equal(o.loaded, x.loaded) && o.spunAt == x.spunAt && o.end == x.end &&
		slices.Equal(o.final, x.final) && o.stores == x.stores &&
		slices.EqualFunc(o.peeked, x.peeked, slices.Equal[[]uint64])
}

func storeRunRun(t *testing.T, tc storeRunCase, stepByStep bool) storeRunOutcome {
	t.Helper()
	e, m, cpus, seg := setup(t, "sc", 2)
	e.SetStepByStep(stepByStep)
	w, r := cpus[0], cpus[1]
	word := func(i int) Addr { return seg.Addr(8 * i) }
	var o storeRunOutcome
	for _, x := range tc.writes {
		e.At(x.at, func() { m.Store64(word(x.entry), x.v) })
	}
	for _, x := range tc.shares {
		b := make([]byte, 512)
		for i := range b {
			b[i] = byte(x.v)
		}
		e.At(x.at, func() { m.Share(word(x.entry), b) })
	}
	for _, at := range tc.peeks {
		e.At(at, func() {
			got := make([]uint64, tc.n)
			for i := range got {
				got[i] = m.Load64(word(i))
			}
			o.peeked = append(o.peeked, got)
		})
	}
	for _, at := range tc.views {
		e.At(at, func() {
			got := make([]uint64, tc.n)
			if b, ok := m.SharedView(word(0), 8*tc.n); ok {
				for i := range got {
					got[i] = binary.LittleEndian.Uint64(b[8*i:])
				}
			}
			o.peeked = append(o.peeked, got)
		})
	}
	const t0 = sim.Microsecond
	e.Spawn("writer", func(p *sim.Proc) {
		p.Sleep(t0)
		w.StoreRun(p, func() {
			for i := 0; i < tc.n; i++ {
				w.Store(p, word(i), 8, uint64(100+i))
				if tc.gap > 0 {
					w.Compute(p, tc.gap)
				}
			}
		})
		o.end = p.Now()
	})
	if len(tc.loads) > 0 {
		e.Spawn("loader", func(p *sim.Proc) {
			for _, l := range tc.loads {
				p.Sleep(l.at - p.Now())
				o.loaded = append(o.loaded, r.LoadUncached(p, word(l.entry), 8))
			}
		})
	}
	if s := tc.spin; s != nil {
		e.Spawn("spinner", func(p *sim.Proc) {
			p.Sleep(s.at)
			r.SpinUntil(p, sim.Reason("test: a word of the run"), func() bool {
				return r.LoadUncached(p, word(s.entry), 8) == s.want
			}, word(s.entry))
			o.spunAt = p.Now()
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < tc.n; i++ {
		o.final = append(o.final, m.Load64(word(i)))
	}
	o.events, o.stores = e.Events(), w.Stats().Stores
	return o
}

// TestStoreRunMatchesStepByStep compares a merged store run (one event,
// its stores held aside and made visible as they come due) with the same
// stores issued one by one (the engine step by step): what another
// processor's loads read, when a spinner on one of the words wakes, what
// an untimed look sees, the memory at the end and when the writer ends.
// The lookers act between the stores' instants (a store at the very
// instant of another agent's event is visible to it in a merged run,
// StoreRun's documented difference).
func TestStoreRunMatchesStepByStep(t *testing.T) {
	const S = 10 * sim.Nanosecond // sc's store: 1 cycle at 100 MHz
	t0 := sim.Microsecond
	mid := func(i int) sim.Time { return t0 + sim.Time(i)*S + S/2 } // between store i and i+1
	cases := []storeRunCase{
		{name: "nobody looks", n: 12},
		{name: "nobody looks, with computes", n: 6, gap: 3},
		{name: "a load before, during and after", n: 8,
			loads: []look{{t0 - S, 3}, {mid(1), 1}, {mid(2), 3}, {mid(3), 3}, {mid(4), 7}, {t0 + 20*S, 7}}},
		{name: "loads in the gaps of computes", n: 5, gap: 4,
			loads: []look{{t0 + 7*S, 1}, {t0 + 12*S, 2}, {t0 + 13*S, 3}}},
		{name: "a spinner waiting before the run", n: 8, spin: &spinLook{at: t0 / 2, entry: 5, want: 105}},
		{name: "a spinner waiting before a long run", n: 8, gap: 30, spin: &spinLook{at: t0 / 2, entry: 5, want: 105}},
		{name: "a spinner starting during the run", n: 8, spin: &spinLook{at: mid(2), entry: 6, want: 106}},
		{name: "a spinner starting during a long run", n: 8, gap: 30, spin: &spinLook{at: t0 + 31*S + S/2, entry: 6, want: 106}},
		{name: "a spinner starting during the run on a word already stored", n: 8, spin: &spinLook{at: mid(5), entry: 2, want: 102}},
		{name: "a spinner for a later write", n: 4, spin: &spinLook{at: mid(1), entry: 3, want: 7},
			writes: []write{{at: t0 + 100*S, entry: 3, v: 7}}},
		{name: "another agent writes a word before its store", n: 6,
			writes: []write{{at: mid(1), entry: 4, v: 1}}, loads: []look{{mid(2), 4}, {mid(5), 4}}},
		{name: "another agent writes a word after its store", n: 6,
			writes: []write{{at: mid(3), entry: 1, v: 1}}, loads: []look{{mid(4), 1}}},
		{name: "another agent places shared bytes over stored words", n: 6,
			shares: []write{{at: mid(3), entry: 0, v: 9}}, loads: []look{{mid(4), 1}, {mid(5), 5}}},
		{name: "a put takes shared bytes the run stores into", n: 6,
			shares: []write{{at: t0 / 2, entry: 0, v: 9}}, views: []sim.Time{mid(0), mid(3)}},
		{name: "untimed looks", n: 6, peeks: []sim.Time{mid(0), mid(3), t0 + 10*S}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			merged := storeRunRun(t, tc, false)
			step := storeRunRun(t, tc, true)
			if !merged.same(step) {
				t.Errorf("merged run:\n%+v\nstore by store:\n%+v", merged, step)
			}
			if merged.events > step.events {
				t.Errorf("merged run took %d events, store by store %d", merged.events, step.events)
			}
			if want := uint64(tc.n); merged.stores != want {
				t.Errorf("%d stores counted, want %d", merged.stores, want)
			}
		})
	}
}

// TestStoreRunIsOneEvent: with nobody looking, a run of 50 stores is one
// event where it is 50 store by store, and ends at the same instant.
func TestStoreRunIsOneEvent(t *testing.T) {
	var ends [2]sim.Time
	for k, stepByStep := range []bool{false, true} {
		e, _, cpus, seg := setup(t, "sc", 1)
		e.SetStepByStep(stepByStep)
		c := cpus[0]
		var events uint64
		// Something due in the run's middle, so that the stores do not
		// move time forward in place.
		e.At(sim.Microsecond+100*sim.Nanosecond, func() {})
		e.Spawn("writer", func(p *sim.Proc) {
			p.Sleep(sim.Microsecond)
			before := e.Events()
			c.StoreRun(p, func() {
				for i := 0; i < 50; i++ {
					c.Store(p, seg.Addr(8*i), 8, uint64(i+1))
				}
			})
			events = e.Events() - before
			ends[k] = p.Now()
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if stepByStep && events < 50 || !stepByStep && events > 2 {
			t.Errorf("step by step %v: %d events", stepByStep, events)
		}
	}
	if ends[0] != ends[1] {
		t.Errorf("the run ends at %v merged, %v store by store", ends[0], ends[1])
	}
}

// TestStoreRunFillMisuse: a merged fill that loads, fences, polls or
// sleeps is a model bug, reported as a panic naming it.
func TestStoreRunFillMisuse(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		fill       func(c *CPU, p *sim.Proc, seg Segment)
	}{
		{"load", "Load inside a store run's fill", func(c *CPU, p *sim.Proc, seg Segment) { c.Load(p, seg.Addr(0), 8) }},
		{"uncached load", "LoadUncached inside a store run's fill", func(c *CPU, p *sim.Proc, seg Segment) { c.LoadUncached(p, seg.Addr(0), 8) }},
		{"fence", "Fence inside a store run's fill", func(c *CPU, p *sim.Proc, seg Segment) { c.Fence(p) }},
		{"poll", "Poll inside a store run's fill", func(c *CPU, p *sim.Proc, seg Segment) { c.Poll(p, func() bool { return true }) }},
		{"sleep", "took time of its own", func(c *CPU, p *sim.Proc, seg Segment) { p.Sleep(sim.Nanosecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, cpus, seg := setup(t, "sc", 1)
			c := cpus[0]
			e.Spawn("writer", func(p *sim.Proc) {
				c.StoreRun(p, func() {
					c.Store(p, seg.Addr(8), 8, 1)
					tc.fill(c, p, seg)
				})
			})
			err := e.Run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a panic saying %q", err, tc.want)
			}
		})
	}
}

// TestStoreRunNotMerged: where the CPU has a store buffer, the fill runs
// as written (its stores go through the buffer), and the program sees
// the same as with plain stores.
func TestStoreRunNotMerged(t *testing.T) {
	for _, model := range []string{"tso", "pso"} {
		t.Run(model, func(t *testing.T) {
			e, m, cpus, seg := setup(t, model, 1)
			c := cpus[0]
			e.Spawn("writer", func(p *sim.Proc) {
				c.StoreRun(p, func() {
					for i := 0; i < 4; i++ {
						c.Store(p, seg.Addr(8*i), 8, uint64(i+1))
					}
				})
				c.Fence(p)
			})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 4; i++ {
				if got := m.Load64(seg.Addr(8 * i)); got != uint64(i+1) {
					t.Errorf("word %d: %d, want %d", i, got, i+1)
				}
			}
			if c.run != nil {
				t.Error(fmt.Sprintf("%s: a run was made on a CPU with a store buffer", model))
			}
		})
	}
}

// TestStoreRunExecutes: a fill may run code through the instruction cache
// before its stores (a packet's software, then its header): merged, the
// run ends when the code and the stores one by one would, with the same
// instruction-cache misses, in fewer events.
func TestStoreRunExecutes(t *testing.T) {
	type outcome struct {
		ends           []sim.Time
		misses, events uint64
	}
	run := func(stepByStep bool) outcome {
		cfg, err := Builtin("sc")
		if err != nil {
			t.Fatal(err)
		}
		cfg.ICache = ICacheConfig{Enabled: true, LineBytes: 32, SizeBytes: 1024}
		e := sim.NewEngine(1)
		e.SetStepByStep(stepByStep)
		m := NewMemory("node0", 1<<20)
		seg, err := m.Alloc("buf", 4096, 64)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCPU(e, "cpu", m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var o outcome
		// Something due in the middle of every run, so that its steps do
		// not move time forward in place.
		for k := 0; k < 3; k++ {
			e.At(sim.Time(k+1)*sim.Microsecond+500*sim.Nanosecond, func() {})
		}
		e.Spawn("writer", func(p *sim.Proc) {
			for k := 0; k < 3; k++ {
				p.Sleep(sim.Time(k+1)*sim.Microsecond - p.Now())
				c.StoreRun(p, func() {
					c.Execute(p, Code{Addr: 0, Bytes: 1536}, 40) // larger than the cache: misses every time
					for i := 0; i < 4; i++ {
						c.Store(p, seg.Addr(8*i), 8, uint64(k*10+i))
					}
				})
				o.ends = append(o.ends, p.Now())
			}
		})
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		o.misses, o.events = c.Stats().IMisses, e.Events()
		for i := 0; i < 4; i++ {
			if got := m.Load64(seg.Addr(8 * i)); got != uint64(20+i) {
				t.Errorf("step by step %v: word %d holds %d, want %d", stepByStep, i, got, 20+i)
			}
		}
		return o
	}
	merged, step := run(false), run(true)
	if !slices.Equal(merged.ends, step.ends) || merged.misses != step.misses || merged.misses == 0 {
		t.Errorf("merged: ends %v, %d misses; step by step: ends %v, %d misses", merged.ends, merged.misses, step.ends, step.misses)
	}
	if merged.events >= step.events {
		t.Errorf("merged: %d events, step by step %d", merged.events, step.events)
	}
}

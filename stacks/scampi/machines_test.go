package scampi

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
)

// machineCase builds a machine of procs processes.
type machineCase struct {
	name  string
	build func(eng *sim.Engine, procs int) (machines.Machine, error)
}

// everyMachine is ScaMPI's pairings: the SCI cluster with one and with two
// processes per node, the T3D (puts, quiet, caches not coherent with
// puts), the SX-4 (every process on one node: the shared-memory transport
// only) and the SP (LAPI puts and fence).
var everyMachine = []machineCase{
	{"sci", func(eng *sim.Engine, n int) (machines.Machine, error) { return sci.New(eng, n, sci.DefaultParams()) }},
	{"sci-smp", func(eng *sim.Engine, n int) (machines.Machine, error) {
		mp := sci.DefaultParams()
		mp.ProcsPerNode = 2
		return sci.New(eng, n, mp)
	}},
	{"t3d", func(eng *sim.Engine, n int) (machines.Machine, error) { return t3d.New(eng, n, t3d.DefaultParams()) }},
	{"sx4", func(eng *sim.Engine, n int) (machines.Machine, error) { return sx4.New(eng, n, sx4.DefaultParams()) }},
	{"sp", func(eng *sim.Engine, n int) (machines.Machine, error) { return sp.New(eng, n, sp.DefaultParams()) }},
}

// openOn builds mc with procs processes and opens ScaMPI with params on it.
func openOn(t *testing.T, mc machineCase, seed uint64, procs int, params Params) (*sim.Engine, *stacks.World) {
	t.Helper()
	eng := sim.NewEngine(seed)
	eng.SetLimits(sim.Limits{MaxEvents: 20_000_000})
	m, err := mc.build(eng, procs)
	if err != nil {
		t.Fatalf("%s: %v", mc.name, err)
	}
	w, err := Open(m, params)
	if err != nil {
		t.Fatalf("%s: %v", mc.name, err)
	}
	return eng, w
}

// pingPongChecked bounces reps messages of each size between ranks 0 and
// 1, checking every delivery's envelope and bytes as the receiving
// program sees them (through its cache), and returns the mean half round
// trip of each size.
func pingPongChecked(t *testing.T, eng *sim.Engine, w *stacks.World, sizes []int, reps int) ([]sim.Time, error) {
	t.Helper()
	comms, err := stacks.As[stacks.Comm](w, "test", "comm")
	if err != nil {
		t.Fatal(err)
	}
	half := make([]sim.Time, len(sizes))
	var fail error
	for r := 0; r < 2; r++ {
		c, peer := comms[r], 1-r
		eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
			for i, n := range sizes {
				sbuf, err := c.Buffer(n)
				if err != nil {
					fail = err
					return
				}
				rbuf, err := c.Buffer(n)
				if err != nil {
					fail = err
					return
				}
				start := p.Now()
				for k := 0; k < reps; k++ {
					id := 2*(i*reps+k) + r // this rank's message k of size n
					if r == 0 {
						if err := send(p, c, sbuf, peer, k, id); err != nil {
							fail = err
							return
						}
					}
					if err := recv(p, c, rbuf, peer, k, id+1-2*r); err != nil {
						fail = err
						return
					}
					if r == 1 {
						if err := send(p, c, sbuf, peer, k, id); err != nil {
							fail = err
							return
						}
					}
				}
				if r == 0 {
					half[i] = (p.Now() - start) / sim.Time(2*reps)
				}
			}
		})
	}
	if err := eng.Run(); err != nil && fail == nil {
		fail = err
	}
	return half, fail
}

// send fills buf with message id's pattern and sends it to dest with tag.
func send(p *sim.Proc, c stacks.Comm, buf mem.Region, dest, tag, id int) error {
	b := make([]byte, buf.Len)
	for i := range b {
		b[i] = pattern(7, id, i)
	}
	c.CPU().Poke(buf.Addr, b)
	return c.Send(p, buf, dest, tag)
}

// recv receives message id from src with tag into buf and checks it.
func recv(p *sim.Proc, c stacks.Comm, buf mem.Region, src, tag, id int) error {
	st, err := c.Recv(p, buf, src, tag)
	if err != nil {
		return err
	}
	if st.Source != src || st.Tag != tag || st.Len != buf.Len {
		return fmt.Errorf("rank %d: message %d has envelope %+v, want (%d, %d, %d)", c.Rank(), id, st, src, tag, buf.Len)
	}
	got := make([]byte, buf.Len)
	c.CPU().Peek(buf.Addr, got)
	for i, b := range got {
		if b != pattern(7, id, i) {
			return fmt.Errorf("rank %d: message %d (%d bytes from %d) corrupted at byte %d", c.Rank(), id, buf.Len, src, i)
		}
	}
	return nil
}

// TestPingPongOnEveryMachine: ScaMPI opens on every machine whose verbs
// its protocol can run on, and a ping-pong of every size around the
// envelope's 32 bytes and the 16 KB buffers, long enough to wrap the ring
// of envelopes, delivers every message intact; so do random messages
// among four processes.
func TestPingPongOnEveryMachine(t *testing.T) {
	sizes := []int{0, 8, 32, 33, 1000, 16384, 40000}
	for _, mc := range everyMachine {
		t.Run(mc.name, func(t *testing.T) {
			eng, w := openOn(t, mc, 1, 2, DefaultParams())
			half, err := pingPongChecked(t, eng, w, sizes, 40)
			if err != nil {
				t.Fatal(err)
			}
			if c := w.Ranks[0].(*Rank).w.Counters(); c.Envelopes < uint64(2*40*len(sizes)) {
				t.Errorf("%d envelopes consumed for %d messages", c.Envelopes, 2*40*len(sizes))
			}
			for i, n := range sizes {
				if half[i] <= 0 {
					t.Errorf("%d bytes: half round trip %v", n, half[i])
				}
			}
			t.Logf("%s: 8 bytes %.2f us, 40000 bytes %.1f MB/s", mc.name, half[1].Micros(), 40000/half[len(sizes)-1].Micros())

			eng, w = openOn(t, mc, 2, 4, DefaultParams())
			if f := exchange(t, eng, w, 2, randomMessages(eng, 4, 40)); len(f) > 0 {
				t.Fatal(f)
			}
		})
	}
}

// TestCollectivesOnEveryMachine: on every machine, no rank leaves a
// barrier before every rank has entered it, and an all-to-all delivers
// every block intact.
func TestCollectivesOnEveryMachine(t *testing.T) {
	const procs, rounds, block = 6, 3, 3000
	for _, mc := range everyMachine {
		t.Run(mc.name, func(t *testing.T) {
			eng, w := openOn(t, mc, 3, procs, DefaultParams())
			enter := make([][rounds]sim.Time, procs)
			leave := make([][rounds]sim.Time, procs)
			done := 0
			for r := 0; r < procs; r++ {
				x := w.Ranks[r].(*Rank)
				eng.Spawn(fmt.Sprint(r), func(p *sim.Proc) {
					for k := 0; k < rounds; k++ {
						p.Sleep(sim.Time(eng.Rand().IntN(20000)) * sim.Nanosecond)
						enter[r][k] = p.Now()
						if err := x.Barrier(p); err != nil {
							t.Error(err)
							return
						}
						leave[r][k] = p.Now()
					}
					if !alltoallChecked(t, p, x, fmt.Sprintf("rank %d", r), procs, block) {
						return
					}
					done++
				})
			}
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			if done != procs {
				t.Fatalf("%d of %d ranks finished", done, procs)
			}
			t.Logf("%s: done at %v", mc.name, eng.Now())
			for k := 0; k < rounds; k++ {
				var last sim.Time
				for r := 0; r < procs; r++ {
					last = max(last, enter[r][k])
				}
				for r := 0; r < procs; r++ {
					if leave[r][k] < last {
						t.Errorf("rank %d left barrier %d at %v, before the last entry at %v", r, k, leave[r][k], last)
					}
				}
			}
		})
	}
}

// TestStaleEnvelopeReported: on the T3D, whose caches remote puts do not
// update, a receiver that does not drop its cached copy of a slot before
// reading it (invalidate off) reads the envelope the slot held a ring ago:
// the corruption is reported, not delivered.
func TestStaleEnvelopeReported(t *testing.T) {
	params := DefaultParams()
	params.Invalidate = false
	eng, w := openOn(t, everyMachine[2], 1, 2, params)
	_, err := pingPongChecked(t, eng, w, []int{0}, 2*params.Slots)
	var ce *CorruptionError
	if !errors.As(err, &ce) || !strings.Contains(ce.What, "stale") {
		t.Fatalf("got %v, want a reported stale envelope", err)
	}
	t.Log(err)
}

// localOnly is a test machine with a CPU and memory per process and
// nothing else: its processes share no node and cannot write each
// other's memory.
type localOnly struct {
	eng  *sim.Engine
	mems []*mem.Memory
	cpus []*mem.CPU
}

func newLocalOnly(t *testing.T, eng *sim.Engine, procs int) *localOnly {
	t.Helper()
	m := &localOnly{eng: eng}
	for i := 0; i < procs; i++ {
		mm := mem.NewMemory(fmt.Sprintf("m%d", i), 1<<20)
		c, err := mem.NewCPU(eng, fmt.Sprintf("cpu%d", i), mm, mem.Config{ClockMHz: 100,
			Costs: mem.Costs{LoadCycles: 1, MissCycles: 1, UncachedLoadCycles: 1, StoreCycles: 1, MemcpyMBps: 100, VectorMBps: 100}})
		if err != nil {
			t.Fatal(err)
		}
		m.mems, m.cpus = append(m.mems, mm), append(m.cpus, c)
	}
	return m
}

func (m *localOnly) Name() string              { return "local-only" }
func (m *localOnly) Engine() *sim.Engine       { return m.eng }
func (m *localOnly) Procs() int                { return len(m.cpus) }
func (m *localOnly) CPU(pe int) *mem.CPU       { return m.cpus[pe] }
func (m *localOnly) Memory(pe int) *mem.Memory { return m.mems[pe] }
func (m *localOnly) Alloc(pe int, name string, n int) (mem.Region, error) {
	s, err := m.mems[pe].Alloc(name, (n+63)&^63, 64)
	return mem.Region{Mem: m.mems[pe], Addr: s.Base, Len: n}, err
}

// TestOpenNeeds: Open names the verb a machine lacks: remote writes
// between processes on different nodes, a CPU and memory for any; one
// process alone needs no remote write.
func TestOpenNeeds(t *testing.T) {
	type bare struct{ machines.Machine }
	for _, c := range []struct {
		name  string
		m     func(eng *sim.Engine) machines.Machine
		lacks string // "" when it opens
	}{
		{"local-only, two processes", func(eng *sim.Engine) machines.Machine { return newLocalOnly(t, eng, 2) }, machines.VerbRemoteWrite.Name},
		{"local-only, one process", func(eng *sim.Engine) machines.Machine { return newLocalOnly(t, eng, 1) }, ""},
		{"no CPU", func(eng *sim.Engine) machines.Machine { return bare{newLocalOnly(t, eng, 2)} }, machines.VerbLocal.Name},
	} {
		_, err := Open(c.m(sim.NewEngine(1)), DefaultParams())
		var mc *machines.MissingCapability
		switch {
		case c.lacks == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.lacks != "" && (!errors.As(err, &mc) || !strings.HasPrefix(mc.Capability, c.lacks+":")):
			t.Errorf("%s: got %v, want a missing %s", c.name, err, c.lacks)
		}
	}
}

package pvm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/challenge"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/machines/tcpcluster"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

var (
	_ stacks.Comm          = (*Task)(nil)
	_ stacks.Bcaster       = (*Task)(nil)
	_ stacks.Reducer       = (*Task)(nil)
	_ stacks.ProgressRuler = (*Task)(nil)
	_ stacks.Footprint     = (*Task)(nil)
)

// machinesUnderTest build each machine with remote writes, with its
// defaults.
var machinesUnderTest = []struct {
	name  string
	build func(eng *sim.Engine, procs int) (machines.Machine, error)
}{
	{"t3d", func(eng *sim.Engine, n int) (machines.Machine, error) { return t3d.New(eng, n, t3d.DefaultParams()) }},
	{"sci", func(eng *sim.Engine, n int) (machines.Machine, error) { return sci.New(eng, n, sci.DefaultParams()) }},
	{"sp", func(eng *sim.Engine, n int) (machines.Machine, error) { return sp.New(eng, n, sp.DefaultParams()) }},
	{"sx4", func(eng *sim.Engine, n int) (machines.Machine, error) { return sx4.New(eng, n, sx4.DefaultParams()) }},
}

func setup(t *testing.T, pes int, params Params) (*sim.Engine, *Lib) {
	t.Helper()
	eng := sim.NewEngine(1)
	m, err := t3d.New(eng, pes, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(m, params)
	if err != nil {
		t.Fatal(err)
	}
	return eng, l
}

// pattern is message k's bytes: seeded, different for every k.
func pattern(k, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(k), 11))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func buffer(t *testing.T, x *Task, n int) mem.Region {
	t.Helper()
	b, err := x.Buffer(max(n, 8))
	if err != nil {
		t.Fatal(err)
	}
	return b.Slice(0, n)
}

// fill writes pattern k into buf as the task's program does.
func fill(x *Task, buf mem.Region, k int) { x.CPU().Poke(buf.Addr, pattern(k, buf.Len)) }

// check compares buf with pattern k, as the task's program sees it.
func check(t *testing.T, x *Task, buf mem.Region, k int, what string) {
	t.Helper()
	got := make([]byte, buf.Len)
	x.CPU().Peek(buf.Addr, got)
	if want := pattern(k, buf.Len); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: task %d: payload corrupted at offset %d of %d", what, x.Rank(), i, buf.Len)
	}
}

func run(t *testing.T, eng *sim.Engine) {
	t.Helper()
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

// TestQueuedSendBeforeRecv: a psend completes before its receive is
// called (the receiver is busy); the message waits in the receiver's
// library, is copied into its receive queue when the receiver calls PVM,
// and is delivered intact by the precv that follows, with its source, tag
// and length.
func TestQueuedSendBeforeRecv(t *testing.T) {
	for _, n := range []int{0, 8, 1000, 4096, 3*4096 + 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			eng, l := setup(t, 2, DefaultParams())
			var sentAt, recvAt sim.Time
			eng.Spawn("sender", func(p *sim.Proc) {
				x := l.Task(0)
				buf := buffer(t, x, n)
				fill(x, buf, 7)
				must(t, x.Send(p, buf, 1, 42))
				sentAt = p.Now()
			})
			eng.Spawn("receiver", func(p *sim.Proc) {
				x := l.Task(1)
				other := buffer(t, x, 8)
				p.Sleep(sim.Millisecond) // busy: the send completes meanwhile
				// A receive for another tag pulls the message into the
				// queue without taking it; nothing matches it.
				if r, err := x.Irecv(p, other, 0, 43); err != nil || r == nil {
					t.Fatal(err)
				} else if done, _, _ := r.Test(p); done {
					t.Error("a receive for tag 43 took the tag-42 message")
				}
				buf := buffer(t, x, n)
				st, err := x.Recv(p, buf, stacks.AnySource, 42)
				must(t, err)
				recvAt = p.Now()
				if st != (stacks.Status{Source: 0, Tag: 42, Len: n}) {
					t.Errorf("status %+v", st)
				}
				check(t, x, buf, 7, "queued message")
				if q := x.Stats().Queued; q != 1 {
					t.Errorf("%d messages queued, want 1", q)
				}
			})
			run(t, eng)
			if !(sentAt > 0 && sentAt < sim.Millisecond && recvAt > sim.Millisecond) {
				t.Errorf("send completed at %v, receive at %v: the send waited for its receive", sentAt, recvAt)
			}
		})
	}
}

// TestLargeWaitsForItsReceive: a message of more parts than the ring
// holds, sent before its receive: its first part is queued (the queue
// holds no more than data_max_bytes of it), its later parts wait in the
// sender's ring, and the send completes only once the receive has claimed
// the message; delivered intact.
func TestLargeWaitsForItsReceive(t *testing.T) {
	const n = 40000 // 10 parts, 4 slots
	eng, l := setup(t, 2, DefaultParams())
	var sentAt sim.Time
	eng.Spawn("sender", func(p *sim.Proc) {
		x := l.Task(0)
		buf := buffer(t, x, n)
		fill(x, buf, 5)
		must(t, x.Send(p, buf, 1, 1))
		sentAt = p.Now()
	})
	eng.Spawn("receiver", func(p *sim.Proc) {
		x := l.Task(1)
		p.Sleep(sim.Millisecond)
		if _, err := x.sweep(p); err != nil {
			t.Fatal(err)
		}
		if len(x.queue) != 1 || x.queue[0].got != DefaultParams().DataMaxBytes {
			t.Errorf("queue before the receive: %d messages, first holding %d bytes; want 1 holding its first part", len(x.queue), x.queue[0].got)
		}
		buf := buffer(t, x, n)
		_, err := x.Recv(p, buf, 0, 1)
		must(t, err)
		check(t, x, buf, 5, "large message sent before its receive")
	})
	run(t, eng)
	if sentAt < sim.Millisecond {
		t.Errorf("a 10-part send completed at %v, before its receive was called", sentAt)
	}
}

// TestMatching: any-source and tag matching. Three senders send messages
// with several tags; the receiver takes them by tag in an order unlike
// their arrival, by source, and by any source and any tag, each delivered
// intact with its status, and messages of one sender and tag in the order
// sent.
func TestMatching(t *testing.T) {
	eng, l := setup(t, 4, DefaultParams())
	const n = 600
	key := func(src, tag, i int) int { return src*1000 + tag*10 + i }
	for s := 1; s <= 3; s++ {
		eng.Spawn(fmt.Sprint("sender", s), func(p *sim.Proc) {
			x := l.Task(s)
			for _, tag := range []int{5, 6} {
				for i := range 2 {
					buf := buffer(t, x, n)
					fill(x, buf, key(s, tag, i))
					must(t, x.Send(p, buf, 0, tag))
				}
			}
		})
	}
	eng.Spawn("receiver", func(p *sim.Proc) {
		x := l.Task(0)
		p.Sleep(100 * sim.Microsecond)
		taken := map[[2]int]int{} // messages taken per (source, tag): they come in order sent
		recv := func(src, tag, wantSrc, wantTag int) {
			buf := buffer(t, x, n)
			st, err := x.Recv(p, buf, src, tag)
			must(t, err)
			if (wantSrc >= 0 && st.Source != wantSrc) || (wantTag >= 0 && st.Tag != wantTag) || st.Len != n {
				t.Errorf("recv(%d, %d): status %+v, want source %d tag %d", src, tag, st, wantSrc, wantTag)
			}
			k := [2]int{st.Source, st.Tag}
			check(t, x, buf, key(st.Source, st.Tag, taken[k]), fmt.Sprintf("recv(%d, %d)", src, tag))
			taken[k]++
		}
		recv(2, 6, 2, 6) // sent third and fourth by task 2
		recv(2, 6, 2, 6)
		recv(2, stacks.AnyTag, 2, 5) // the oldest of task 2's left
		recv(stacks.AnySource, 6, -1, 6)
		for range 8 {
			recv(stacks.AnySource, stacks.AnyTag, -1, -1)
		}
		for s := 1; s <= 3; s++ {
			for _, tag := range []int{5, 6} {
				if c := taken[[2]int{s, tag}]; c != 2 {
					t.Errorf("task %d tag %d: %d messages received, want 2", s, tag, c)
				}
			}
		}
	})
	run(t, eng)
}

// TestPartsEachPaid: a message above data_max_bytes goes as separate
// parts: ceil(n/data_max) of them, each its own slot and header, and each
// paying the library's per-message software: with part_cycles raised by
// delta, a k-part message's one-way time rises by at least k*delta
// cycles (the sender pays each part's in turn).
func TestPartsEachPaid(t *testing.T) {
	const delta = 2000
	oneWay := func(n int, params Params) (sim.Time, Stats) {
		eng, l := setup(t, 2, params)
		var end sim.Time
		eng.Spawn("sender", func(p *sim.Proc) {
			x := l.Task(0)
			buf := buffer(t, x, n)
			fill(x, buf, n)
			must(t, x.Send(p, buf, 1, 0))
		})
		eng.Spawn("receiver", func(p *sim.Proc) {
			x := l.Task(1)
			buf := buffer(t, x, n)
			_, err := x.Recv(p, buf, 0, 0)
			must(t, err)
			check(t, x, buf, n, "parts")
			end = p.Now()
		})
		run(t, eng)
		return end, l.Task(0).Stats()
	}
	def := DefaultParams()
	more := def
	more.PartCycles += delta
	cycle := sim.Time(float64(sim.Microsecond) / t3d.DefaultParams().ClockMHz)
	for _, c := range []struct{ n, parts int }{{1, 1}, {4096, 1}, {4097, 2}, {8192, 2}, {3*4096 + 1, 4}, {40000, 10}} {
		t0, st := oneWay(c.n, def)
		t1, _ := oneWay(c.n, more)
		if st.Parts != c.parts {
			t.Errorf("%d bytes: %d parts, want %d", c.n, st.Parts, c.parts)
		}
		if rise := t1 - t0; rise < sim.Time(c.parts*delta)*cycle {
			t.Errorf("%d bytes (%d parts): part_cycles +%d raised the one-way time by %v, want at least %v", c.n, c.parts, delta, rise, sim.Time(c.parts*delta)*cycle)
		}
		t.Logf("%d bytes: %d parts, one-way %v (%v with part_cycles +%d)", c.n, st.Parts, t0, t1, delta)
	}
	// A smaller data_max_bytes cuts the same message into more parts.
	small := def
	small.DataMaxBytes = 1024
	if _, st := oneWay(4096, small); st.Parts != 4 {
		t.Errorf("4096 bytes with data_max_bytes 1024: %d parts, want 4", st.Parts)
	}
}

// TestFullRingBothWays: two tasks each send more one-part messages than
// a ring holds to the other before receiving any: a send blocked on a full ring
// pulls its own arrivals meanwhile, so neither waits for the other
// forever, and every message arrives intact in order.
func TestFullRingBothWays(t *testing.T) {
	params := DefaultParams()
	params.Slots = 2
	eng, l := setup(t, 2, params)
	const msgs, n = 9, 3000 // 9 one-part messages through 2 slots
	for me := range 2 {
		eng.Spawn(fmt.Sprint("task", me), func(p *sim.Proc) {
			x := l.Task(me)
			for i := range msgs {
				buf := buffer(t, x, n)
				fill(x, buf, me*100+i)
				must(t, x.Send(p, buf, 1-me, i))
			}
			for i := range msgs {
				buf := buffer(t, x, n)
				st, err := x.Recv(p, buf, 1-me, stacks.AnyTag)
				must(t, err)
				if st.Tag != i {
					t.Errorf("task %d: message %d has tag %d", me, i, st.Tag)
				}
				check(t, x, buf, (1-me)*100+i, "full ring")
			}
			if x.Stats().FullWaits == 0 {
				t.Errorf("task %d never found a ring full", me)
			}
		})
	}
	run(t, eng)
}

// TestTruncated: a message longer than the receive buffer is an error
// naming it, and the ring stays in step: the next message arrives intact.
func TestTruncated(t *testing.T) {
	eng, l := setup(t, 2, DefaultParams())
	eng.Spawn("sender", func(p *sim.Proc) {
		x := l.Task(0)
		for k, n := range []int{9000, 100} {
			buf := buffer(t, x, n)
			fill(x, buf, k)
			must(t, x.Send(p, buf, 1, 1))
		}
	})
	eng.Spawn("receiver", func(p *sim.Proc) {
		x := l.Task(1)
		small := buffer(t, x, 50)
		if _, err := x.Recv(p, small, 0, 1); err == nil {
			t.Error("9000 bytes into a 50-byte buffer: no error")
		}
		buf := buffer(t, x, 100)
		_, err := x.Recv(p, buf, 0, 1)
		must(t, err)
		check(t, x, buf, 1, "after a truncated message")
	})
	run(t, eng)
}

// TestGroup: pvm_bcast, pvm_reduce and pvm_barrier give the right values
// on 1, 2, 5 and 128 tasks, from root 0 and from another root.
func TestGroup(t *testing.T) {
	for _, pes := range []int{1, 2, 5, 128} {
		for _, root := range []int{0, pes - 1} {
			for _, n := range []int{8, 6000} {
				t.Run(fmt.Sprintf("%dPEs/root%d/%dB", pes, root, n), func(t *testing.T) {
					eng, l := setup(t, pes, DefaultParams())
					want := make([]byte, n)
					for q := range pes {
						stacks.SumInt64.Combine(want, pattern(q, n))
					}
					for me := range pes {
						eng.Spawn(fmt.Sprint("task", me), func(p *sim.Proc) {
							x := l.Task(me)
							buf := buffer(t, x, n)
							if me == root {
								fill(x, buf, 1000)
							}
							must(t, x.Bcast(p, buf, root))
							check(t, x, buf, 1000, "bcast")
							must(t, x.Barrier(p))
							fill(x, buf, me)
							must(t, x.Reduce(p, buf, stacks.SumInt64, root))
							must(t, x.Barrier(p))
							if me == root {
								got := make([]byte, n)
								x.CPU().Peek(buf.Addr, got)
								if !bytes.Equal(got, want) {
									t.Errorf("reduce: sum wrong (first word %d, want %d)", binary.LittleEndian.Uint64(got), binary.LittleEndian.Uint64(want))
								}
							}
						})
					}
					run(t, eng)
				})
			}
		}
	}
}

// TestBarrierHolds: no task leaves a barrier before the last has entered.
func TestBarrierHolds(t *testing.T) {
	eng, l := setup(t, 5, DefaultParams())
	var lastIn, firstOut sim.Time
	firstOut = 1 << 62
	for me := range 5 {
		eng.Spawn(fmt.Sprint("task", me), func(p *sim.Proc) {
			p.Sleep(sim.Time(me) * 50 * sim.Microsecond)
			lastIn = max(lastIn, p.Now())
			must(t, l.Task(me).Barrier(p))
			firstOut = min(firstOut, p.Now())
		})
	}
	run(t, eng)
	if firstOut < lastIn {
		t.Errorf("a task left the barrier at %v, before the last entered at %v", firstOut, lastIn)
	}
}

// TestPingPongOnEveryMachine: a ping-pong of 0, 8, 4097 and 20000 bytes
// on every machine with remote writes (the T3D's ordered puts; SCI's and
// LAPI's, where the header's flag waits for a quiet; the SX-4's vector
// moves into a symmetric heap), every delivery checked.
func TestPingPongOnEveryMachine(t *testing.T) {
	for _, mc := range machinesUnderTest {
		for _, n := range []int{0, 8, 4097, 20000} {
			t.Run(fmt.Sprintf("%s/%dB", mc.name, n), func(t *testing.T) {
				eng := sim.NewEngine(1)
				m, err := mc.build(eng, 2)
				if err != nil {
					t.Fatal(err)
				}
				l, err := New(m, DefaultParams())
				if err != nil {
					t.Fatal(err)
				}
				var end sim.Time
				const rounds = 3
				for me := range 2 {
					eng.Spawn(fmt.Sprint("task", me), func(p *sim.Proc) {
						x := l.Task(me)
						buf := buffer(t, x, n)
						for i := range rounds {
							if me == 0 {
								fill(x, buf, 2*i)
								must(t, x.Send(p, buf, 1, i))
								_, err := x.Recv(p, buf, 1, i)
								must(t, err)
								check(t, x, buf, 2*i+1, "pong")
							} else {
								_, err := x.Recv(p, buf, 0, i)
								must(t, err)
								check(t, x, buf, 2*i, "ping")
								fill(x, buf, 2*i+1)
								must(t, x.Send(p, buf, 0, i))
							}
						}
						end = p.Now()
					})
				}
				run(t, eng)
				t.Logf("%s: %d bytes: one-way %v", mc.name, n, end/(2*rounds))
			})
		}
	}
}

// TestSelfSend: a task sends to itself and receives it.
func TestSelfSend(t *testing.T) {
	eng, l := setup(t, 2, DefaultParams())
	eng.Spawn("task0", func(p *sim.Proc) {
		x := l.Task(0)
		buf := buffer(t, x, 5000)
		fill(x, buf, 3)
		must(t, x.Send(p, buf, 0, 9))
		in := buffer(t, x, 5000)
		_, err := x.Recv(p, in, 0, 9)
		must(t, err)
		check(t, x, in, 3, "self")
	})
	run(t, eng)
}

// TestParams: bad params are errors naming the file and the field.
func TestParams(t *testing.T) {
	if _, err := ParseParams("s.yaml", "stack.params", nil); err != nil {
		t.Fatal(err)
	}
	if DefaultParams().DataMaxBytes != 4096 {
		t.Error("data_max_bytes default is not CRI's published 4,096 bytes")
	}
	for src, want := range map[string]string{
		"{data_max_bytes: 4}":   "stack.params.data_max_bytes",
		"{slots: 0}":            "stack.params.slots",
		"{part_cycles: -1}":     "stack.params.part_cycles",
		"{scan_cycles: 1e9}":    "stack.params.scan_cycles",
		"{data_max_byte: 4096}": "data_max_byte",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		_, err := ParseParams("s.yaml", "stack.params", n.Content[0])
		if err == nil || !strings.Contains(err.Error(), "s.yaml") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming s.yaml and %s", src, err, want)
		}
	}
}

// traffic runs an all-to-all of messages of random sizes (some above
// data_max_bytes) on pes tasks of a machine, every task posting its
// receives from any source first, then sending, then waiting; it returns
// each completion (task, source, tag, length, time) in order and the
// engine's events.
func traffic(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), pes int, seed uint64, stepByStep bool) ([]string, uint64) {
	t.Helper()
	eng := sim.NewEngine(seed)
	eng.SetStepByStep(stepByStep)
	m, err := build(eng, pes)
	if err != nil {
		t.Fatal(err)
	}
	params := DefaultParams()
	params.Slots = 2
	l, err := New(m, params)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	size := make([][]int, pes)
	for s := range size {
		size[s] = make([]int, pes)
		for d := range size[s] {
			size[s][d] = r.IntN(3 * 4096)
		}
	}
	var all []string
	for me := range pes {
		eng.Spawn(fmt.Sprint("task", me), func(p *sim.Proc) {
			x := l.Task(me)
			var reqs []stacks.Request
			var bufs []mem.Region
			for range pes - 1 {
				b := buffer(t, x, 3*4096)
				q, err := x.Irecv(p, b, stacks.AnySource, stacks.AnyTag)
				must(t, err)
				reqs, bufs = append(reqs, q), append(bufs, b)
			}
			for k := 1; k < pes; k++ {
				d := (me + k) % pes
				b := buffer(t, x, size[me][d])
				fill(x, b, me*100+d)
				must(t, x.Send(p, b, d, me))
			}
			for i, q := range reqs {
				st, err := q.Wait(p)
				must(t, err)
				if st.Len != size[st.Source][me] {
					t.Errorf("task %d: %d bytes from %d, want %d", me, st.Len, st.Source, size[st.Source][me])
				}
				check(t, x, bufs[i].Slice(0, st.Len), st.Source*100+me, "all-to-all")
				all = append(all, fmt.Sprintf("%d<-%d tag %d %dB at %v", me, st.Source, st.Tag, st.Len, p.Now()))
			}
		})
	}
	run(t, eng)
	return append(all, fmt.Sprint("end ", eng.Now())), eng.Events()
}

// TestMergedMatchesStepByStep: PVM's receive loop (its polls of uncached
// loads, Processor.Poll; its waits, a SpinUntil on the watched words)
// gives the same simulated times and statuses, to the picosecond, as the
// engine run step by step (with no more events), with rings that fill, on
// every machine.
func TestMergedMatchesStepByStep(t *testing.T) {
	for _, mc := range machinesUnderTest {
		for _, tc := range []struct {
			pes  int
			seed uint64
		}{{2, 1}, {3, 2}, {5, 3}, {8, 4}} {
			t.Run(fmt.Sprintf("%s/%dPEs/seed%d", mc.name, tc.pes, tc.seed), func(t *testing.T) {
				merged, ev1 := traffic(t, mc.build, tc.pes, tc.seed, false)
				step, evN := traffic(t, mc.build, tc.pes, tc.seed, true)
				if len(merged) != len(step) {
					t.Fatalf("%d completions against %d", len(merged), len(step))
				}
				for i := range merged {
					if merged[i] != step[i] {
						t.Fatalf("completion %d: merged %s, step by step %s", i, merged[i], step[i])
					}
				}
				if ev1 > evN {
					t.Errorf("merged run took %d events, more than step by step (%d)", ev1, evN)
				}
			})
		}
	}
}

// TestRefusalNamesTheVerb: on machines without remote writes (the Power
// Challenge, the TCP cluster) Open fails with a *machines.MissingCapability
// naming remote-write.
func TestRefusalNamesTheVerb(t *testing.T) {
	for _, build := range []func(*sim.Engine) (machines.Machine, error){
		func(e *sim.Engine) (machines.Machine, error) { return challenge.New(e, 2, challenge.DefaultParams()) },
		func(e *sim.Engine) (machines.Machine, error) { return tcpcluster.New(e, 2, tcpcluster.DefaultParams()) },
	} {
		m, err := build(sim.NewEngine(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(m, DefaultParams())
		var mc *machines.MissingCapability
		if !errors.As(err, &mc) || !strings.Contains(mc.Capability, machines.VerbRemoteWrite.Name) || !strings.Contains(err.Error(), m.Name()) {
			t.Errorf("%s: %v, want a missing remote-write", m.Name(), err)
		}
	}
}

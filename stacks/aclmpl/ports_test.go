package aclmpl

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
	"github.com/msgsim/msgsim/stacks"
)

// machinesUnderTest build each machine ACLMPL opens on with its defaults.
var machinesUnderTest = []struct {
	name  string
	build func(eng *sim.Engine, procs int) (machines.Machine, error)
}{
	{"t3d", func(eng *sim.Engine, n int) (machines.Machine, error) { return t3d.New(eng, n, t3d.DefaultParams()) }},
	{"sci", func(eng *sim.Engine, n int) (machines.Machine, error) { return sci.New(eng, n, sci.DefaultParams()) }},
	{"sp", func(eng *sim.Engine, n int) (machines.Machine, error) { return sp.New(eng, n, sp.DefaultParams()) }},
}

// pingPongOn bounces a message of n bytes between PEs 0 and 1 of a
// 2-PE machine with the synchronous protocol (async false) or the
// asynchronous one, a new pattern each way and each round, checks every
// delivery byte for byte, and returns the one-way time (half a round trip,
// after a warm-up round) and the library.
func pingPongOn(t *testing.T, build func(*sim.Engine, int) (machines.Machine, error), async bool, n int) (sim.Time, *Lib) {
	t.Helper()
	eng := sim.NewEngine(1)
	m, err := build(eng, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(m, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	const iters = 4
	var start, end sim.Time
	for me := range 2 {
		x, other := l.PE(me), 1-me
		eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
			send, recv := buffer(t, x, max(n, 8)).Slice(0, n), buffer(t, x, max(n, 8)).Slice(0, n)
			want := make([]byte, n)
			for i := 0; i <= iters; i++ {
				if i == 1 && me == 0 {
					start = p.Now()
				}
				for turn := range 2 {
					seed := uint64(1000*i + 10*turn + 1)
					if turn == me {
						fill(send.Bytes(), seed)
						if async {
							_, err = x.Isend(p, send, other, i)
						} else {
							err = x.Send(p, send, other, i)
						}
						must(t, err)
						continue
					}
					var st stacks.Status
					if async {
						q, err := x.Irecv(p, recv, other, i)
						must(t, err)
						st, err = q.Wait(p)
						must(t, err)
					} else {
						st, err = x.Recv(p, recv, other, i)
						must(t, err)
					}
					fill(want, seed)
					got := make([]byte, n)
					x.CPU().Peek(recv.Addr, got) // as the program sees it, through its cache
					if st.Len != n || st.Source != other || string(got) != string(want) {
						t.Errorf("round %d, PE %d: %d-byte message from PE %d corrupted (status %+v)", i, me, n, other, st)
					}
				}
			}
			if me == 0 {
				end = p.Now()
			}
		})
	}
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	return (end - start) / (2 * iters), l
}

// TestPortsPingPong: ACLMPL's synchronous and asynchronous protocols run on
// every machine with remote writes, the asynchronous one with the T3D's
// fetch-and-increment register or with one built from a word and the
// machine's remote fetch-and-increment (the SCI adapter's, LAPI_Rmw), and
// deliver every byte; 20000 bytes travel as three pieces of the pool. The
// one-way times are logged.
func TestPortsPingPong(t *testing.T) {
	for _, mc := range machinesUnderTest {
		for _, async := range []bool{false, true} {
			for _, n := range []int{0, 8, 20000} {
				t.Run(fmt.Sprintf("%s/async=%v/%dB", mc.name, async, n), func(t *testing.T) {
					lat, l := pingPongOn(t, mc.build, async, n)
					if lat <= 0 {
						t.Errorf("one-way time %v", lat)
					}
					_, word := l.reg.(wordRegister)
					if _, hw := l.m.(machines.FetchIncRegister); hw == word {
						t.Errorf("register %T on a machine with a register: %v", l.reg, hw)
					}
					t.Logf("one-way %v (register %T)", lat, l.reg)
				})
			}
		}
	}
}

// TestAsyncOverflowOnEveryMachine: bursts into small pools overflow them
// (copy-outs, resets of the register while senders are blocked) on every
// machine, without loss or corruption: on the SCI cluster and the SP the
// register is a word the owner resets with a store.
func TestAsyncOverflowOnEveryMachine(t *testing.T) {
	for _, mc := range machinesUnderTest {
		t.Run(mc.name, func(t *testing.T) {
			eng := sim.NewEngine(2)
			const pes, per = 5, 7
			m, err := mc.build(eng, pes)
			if err != nil {
				t.Fatal(err)
			}
			l, err := New(m, Params{PoolSlots: 4, SlotBytes: 256, RetryUs: 1, MaxBackoffUs: 64, InvalidateReceive: true})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for me := range pes {
				x := l.PE(me)
				eng.Spawn(fmt.Sprint("pe", me), func(p *sim.Proc) {
					if me != 0 {
						b := buffer(t, x, 600)
						for i := range per {
							fill(b.Bytes(), uint64(100*me+i))
							must(t, x.AsyncSend(p, b, 0, i))
						}
						return
					}
					buf, want := buffer(t, x, 600), make([]byte, 600)
					for src := 1; src < pes; src++ {
						for i := range per {
							q, err := x.AsyncRecv(p, buf, src, i)
							must(t, err)
							st, err := q.Wait(p)
							must(t, err)
							fill(want, uint64(100*src+i))
							if st.Len != 600 || string(buf.Bytes()) != string(want) {
								t.Errorf("message %d from PE %d corrupted (status %+v)", i, src, st)
							}
							got++
						}
					}
				})
			}
			if err := eng.Run(); err != nil {
				t.Fatal(err)
			}
			if got != (pes-1)*per {
				t.Errorf("%d of %d messages received", got, (pes-1)*per)
			}
			if s := l.PE(0).AsyncStats(); s.Resets == 0 || s.CopyOuts == 0 {
				t.Errorf("receiver stats %+v: want overflows with copy-outs", s)
			}
		})
	}
}

// putsOnly is a machine with remote writes and nothing to build a
// fetch-and-increment register from.
type putsOnly struct{ machines.RemoteWrite }

// TestAsyncNamesMissingVerb: without a fetch-and-increment register or a
// remote fetch-and-increment the synchronous protocol runs and the
// asynchronous one returns a *machines.MissingCapability naming both
// verbs; without remote writes ACLMPL does not open.
func TestAsyncNamesMissingVerb(t *testing.T) {
	eng := sim.NewEngine(1)
	tm, err := t3d.New(eng, 2, t3d.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(putsOnly{tm}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var serr, rerr error
	eng.Spawn("pe0", func(p *sim.Proc) {
		b := buffer(t, l.PE(0), 8)
		must(t, l.PE(0).Send(p, b, 1, 0))
		serr = l.PE(0).AsyncSend(p, b, 1, 0)
	})
	eng.Spawn("pe1", func(p *sim.Proc) {
		b := buffer(t, l.PE(1), 8)
		_, err := l.PE(1).Recv(p, b, 0, 0)
		must(t, err)
		_, rerr = l.PE(1).AsyncRecv(p, b, 0, 0)
	})
	if err := eng.Run(); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{serr, rerr} {
		var mc *machines.MissingCapability
		if !errors.As(err, &mc) || !strings.Contains(mc.Capability, machines.VerbFetchIncReg.Name) || !strings.Contains(mc.Capability, machines.VerbRemoteFetchInc.Name) {
			t.Errorf("asynchronous call: %v, want a missing capability naming %s and %s", err, machines.VerbFetchIncReg.Name, machines.VerbRemoteFetchInc.Name)
		}
	}
	type noPuts struct{ machines.Machine }
	_, err = New(noPuts{tm}, DefaultParams())
	var mc *machines.MissingCapability
	if !errors.As(err, &mc) || !strings.Contains(mc.Capability, machines.VerbRemoteWrite.Name) {
		t.Errorf("without remote writes: %v, want a missing capability naming %s", err, machines.VerbRemoteWrite.Name)
	}
}

// TestSX4PingPong: on the SX-4, whose remote writes are vector moves into
// each process's symmetric heap in System V segments (quiet the NEC
// fence), both protocols deliver every byte; the asynchronous one's
// register is a word in the heap, incremented under the test-and-set lock.
func TestSX4PingPong(t *testing.T) {
	build := func(eng *sim.Engine, n int) (machines.Machine, error) { return sx4.New(eng, n, sx4.DefaultParams()) }
	for _, async := range []bool{false, true} {
		for _, n := range []int{0, 8, 20000} {
			lat, l := pingPongOn(t, build, async, n)
			if _, word := l.reg.(wordRegister); !word || lat <= 0 {
				t.Errorf("async=%v %d bytes: one-way %v, register %T", async, n, lat, l.reg)
			}
			t.Logf("sx4 async=%v %d bytes: one-way %v", async, n, lat)
		}
	}
}

package mpich

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/challenge"
	"github.com/msgsim/msgsim/machines/sci"
	"github.com/msgsim/msgsim/machines/sp"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/sim"
)

// deviceVariants are the device variants the pairing tests open: device,
// lock and receive queue.
var deviceVariants = []struct {
	name string
	set  func(*Params)
}{
	{"ch_shmem/tas", func(p *Params) { *p = DefaultParamsFor(DeviceShmem) }},
	{"ch_shmem/sysv", func(p *Params) { *p = DefaultParamsFor(DeviceShmem); p.Lock = LockSysV }},
	{"ch_lfshmem/tas", func(p *Params) { *p = DefaultParamsFor(DeviceLFShmem) }},
	{"ch_lfshmem/sysv", func(p *Params) { *p = DefaultParamsFor(DeviceLFShmem); p.Lock = LockSysV }},
	{"ch_t3d/shared", func(p *Params) { *p = DefaultParamsFor(DeviceT3D); p.ReceiveQueue = QueueShared }},
	{"ch_t3d/per-sender", func(p *Params) { *p = DefaultParamsFor(DeviceT3D) }},
}

// pairingMachines builds each machine the pairing tests use, with two
// processes: the SCI cluster on two nodes and on one dual-processor node.
var pairingMachines = []struct {
	name  string
	build func(e *sim.Engine) (machines.Machine, error)
}{
	{"sx4", func(e *sim.Engine) (machines.Machine, error) { return sx4.New(e, 2, sx4.DefaultParams()) }},
	{"t3d", func(e *sim.Engine) (machines.Machine, error) { return t3d.New(e, 2, t3d.DefaultParams()) }},
	{"sci", func(e *sim.Engine) (machines.Machine, error) { return sci.New(e, 2, sci.DefaultParams()) }},
	{"sci-one-node", func(e *sim.Engine) (machines.Machine, error) {
		p := sci.DefaultParams()
		p.ProcsPerNode = 2
		return sci.New(e, 2, p)
	}},
	{"sp", func(e *sim.Engine) (machines.Machine, error) { return sp.New(e, 2, sp.DefaultParams()) }},
	{"challenge", func(e *sim.Engine) (machines.Machine, error) { return challenge.New(e, 2, challenge.DefaultParams()) }},
}

// TestDevicesOnEveryMachine: every device variant on every machine either
// runs a ping-pong of short, eager and rendezvous messages whose every
// byte is checked at both ends ("ok"), or fails to open naming the verb
// the machine lacks.
func TestDevicesOnEveryMachine(t *testing.T) {
	const ok = "ok"
	rw, shared, sem, swap := machines.VerbRemoteWrite.Name, machines.VerbShared.Name, machines.VerbSemaphores.Name, machines.VerbSwap.Name
	want := map[string][]string{ // by machine, in deviceVariants' order
		"sx4":          {ok, ok, ok, ok, swap, ok}, // remote writes into its symmetric heap; no remote swap
		"t3d":          {shared, shared, ok, ok, ok, ok},
		"sci":          {shared, shared, ok, ok, swap, ok},
		"sci-one-node": {ok, sem, ok, sem, swap, ok},
		"sp":           {shared, shared, ok, ok, ok, ok},
		"challenge":    {ok, ok, ok, ok, rw, rw},
	}
	for _, m := range pairingMachines {
		for i, v := range deviceVariants {
			t.Run(m.name+"/"+v.name, func(t *testing.T) {
				e := sim.NewEngine(1)
				mach, err := m.build(e)
				if err != nil {
					t.Fatal(err)
				}
				var params Params
				v.set(&params)
				got := pingPongOutcome(t, e, mach, params)
				if w := want[m.name][i]; got != w {
					t.Errorf("got %q, want %q", got, w)
				}
			})
		}
	}
}

// TestCoherentCachesNeedNoFlush: on a machine whose caches snoop (the
// Power Challenge), the shared-memory devices read their ready bits,
// queue words and lock words with plain loads and acquire locks without a
// cache flush (section 5's routines are for non-coherent caches); the
// bytes still arrive intact, and the coherence shows as bus upgrades.
func TestCoherentCachesNeedNoFlush(t *testing.T) {
	for _, device := range []string{DeviceShmem, DeviceLFShmem} {
		t.Run(device, func(t *testing.T) {
			e := sim.NewEngine(1)
			m, err := challenge.New(e, 2, challenge.DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if got := pingPongOutcome(t, e, m, DefaultParamsFor(device)); got != "ok" {
				t.Fatalf("ping-pong: %s", got)
			}
			for pe := 0; pe < 2; pe++ {
				if st := m.CPU(pe).Stats(); st.Flushes != 0 || st.Uncached != 0 || st.Misses == 0 {
					t.Errorf("cpu %d: %d flushes, %d uncached loads, %d misses: want none, none, some", pe, st.Flushes, st.Uncached, st.Misses)
				}
			}
			if st := m.Bus().Stats(); st.Upgrades+st.ReadExs == 0 || st.Invalidations == 0 {
				t.Errorf("bus %+v: want stores invalidating the other cache's copies", st)
			}
		})
	}
}

// pingPongOutcome opens MPICH on mach and bounces messages of several
// sizes between ranks 0 and 1, checking every byte: "ok", the name of
// the verb a failed open names, "corruption", or a description of any
// other failure.
func pingPongOutcome(t *testing.T, e *sim.Engine, mach machines.Machine, params Params) string {
	t.Helper()
	w, err := NewWorld(mach, params)
	var missing *machines.MissingCapability
	if errors.As(err, &missing) {
		name, _, _ := strings.Cut(missing.Capability, ":")
		return name
	}
	if err != nil {
		return "open: " + err.Error()
	}
	sizes := []int{0, 8, params.ShortBytes + 100, params.EagerBytes - 8, params.EagerBytes + 5000, 3 * params.EagerBytes}
	var fails []error
	for rank := 0; rank < 2; rank++ {
		r := w.Rank(rank)
		e.Spawn(fmt.Sprint("rank", rank), func(p *sim.Proc) {
			peer := 1 - rank
			for k, n := range sizes {
				buf, err := r.Buffer(n)
				if err != nil {
					fails = append(fails, err)
					return
				}
				check := func(src int) error {
					want := make([]byte, n)
					pattern(want, 5, src, 1-src, k)
					if got := buf.Bytes(); string(got) != string(want) {
						for off := range want {
							if got[off] != want[off] {
								return fmt.Errorf("rank %d: %d-byte message from %d differs at offset %d", rank, n, src, off)
							}
						}
					}
					return nil
				}
				if rank == 0 {
					pattern(buf.Bytes(), 5, 0, 1, k)
					err = r.Send(p, buf, peer, k)
					if err == nil {
						_, err = r.Recv(p, buf, peer, k)
					}
					if err == nil {
						err = check(1)
					}
				} else {
					_, err = r.Recv(p, buf, peer, k)
					if err == nil {
						err = check(0)
					}
					if err == nil {
						pattern(buf.Bytes(), 5, 1, 0, k)
						err = r.Send(p, buf, peer, k)
					}
				}
				if err != nil {
					fails = append(fails, err)
					return
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		fails = append(fails, err)
	}
	var ce *CorruptionError
	for _, err := range fails {
		if errors.As(err, &ce) {
			return "corruption"
		}
	}
	if len(fails) > 0 {
		return fmt.Sprint(fails)
	}
	return "ok"
}

// TestRemoteDevicesRandomTraffic: ch_lfshmem's remote slots on the T3D,
// the SCI cluster (packets reordered) and the SP, and ch_t3d where remote
// writes may land out of order (its puts ordered by quiets), on the SCI
// cluster and on the SP with its receive queues (the fetch-and-increment
// pool's register built from a word there), under random traffic of
// all three protocols with receives by source and tag and by
// AnySource/AnyTag: nothing lost, nothing corrupted, FIFO order per pair.
func TestRemoteDevicesRandomTraffic(t *testing.T) {
	const procs, perPair = 4, 12
	builds := map[string]func(e *sim.Engine) (machines.Machine, error){
		"t3d": func(e *sim.Engine) (machines.Machine, error) { return t3d.New(e, procs, t3d.DefaultParams()) },
		"sci": func(e *sim.Engine) (machines.Machine, error) { return sci.New(e, procs, sci.DefaultParams()) },
		"sp":  func(e *sim.Engine) (machines.Machine, error) { return sp.New(e, procs, sp.DefaultParams()) },
	}
	for _, tc := range []struct {
		machine, device, queue string
	}{
		{"t3d", DeviceLFShmem, ""}, {"sci", DeviceLFShmem, ""}, {"sp", DeviceLFShmem, ""},
		{"sci", DeviceT3D, QueuePerSender}, {"sp", DeviceT3D, QueuePerSender}, {"sp", DeviceT3D, QueueShared},
		{"sci", DeviceT3D, QueueFetchInc}, {"sp", DeviceT3D, QueueFetchInc},
	} {
		for seed := uint64(1); seed <= 2; seed++ {
			for _, anySource := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/%s/seed%d/any=%v", tc.machine, tc.device, tc.queue, seed, anySource), func(t *testing.T) {
					e := sim.NewEngine(seed)
					m, err := builds[tc.machine](e)
					if err != nil {
						t.Fatal(err)
					}
					params := DefaultParamsFor(tc.device)
					params.ShortBytes, params.EagerBytes = 256, 4096
					if tc.device == DeviceT3D {
						params.ReceiveQueue = tc.queue
					}
					w, err := NewWorld(m, params)
					if err != nil {
						t.Fatal(err)
					}
					e.SetLimits(sim.Limits{MaxTime: sim.Second}) // a lost packet ends the run, not the test binary
					runTraffic(t, e, w, params, seed, anySource, procs, perPair)
				})
			}
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/registry/all"
	"github.com/msgsim/msgsim/runner"
	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/mem"
	"github.com/msgsim/msgsim/stacks"
	"github.com/msgsim/msgsim/workloads"
)

// A third machine and a third stack defined here, plugged in through the
// registry: nothing outside this file knows them.

// toyParams are the toy machine's params.
type toyParams struct {
	// LatencyNs is a put's delivery latency. Assumed: a test machine.
	LatencyNs float64 `yaml:"latency_ns"`
}

func defaultToyParams() toyParams { return toyParams{LatencyNs: 2000} }

func (p toyParams) Validate() error {
	return machines.CheckRanges("toy", []machines.FloatRange{machines.Float("latency_ns", p.LatencyNs, 1, 1e9, "ns")}, nil)
}

// toyNetParams are the params of the toy machine with a network: the toy's,
// and its network model. A toy put is one message of fixed latency on a
// network without contention, so both models deliver it at the same time.
type toyNetParams struct {
	toyParams `yaml:",inline"`
	// NetworkModel is the network model, units or flow
	// (machines.Networked). Assumed: a test machine.
	NetworkModel string `yaml:"network_model"`
}

func defaultToyNetParams() toyNetParams {
	return toyNetParams{toyParams: defaultToyParams(), NetworkModel: machines.NetworkUnits}
}

// PacketFeatures: the toy has none (machines.Networked).
func (p toyNetParams) PacketFeatures() []machines.PacketFeature { return nil }

func (p toyNetParams) Validate() error {
	if err := p.toyParams.Validate(); err != nil {
		return err
	}
	return machines.CheckNetworkModel("toy", p.NetworkModel, p.PacketFeatures()...)
}

// toy is a distributed-memory machine with one-sided puts that arrive
// latency_ns after they are issued (no network model): machines.RemoteWrite
// and nothing else.
type toy struct {
	eng   *sim.Engine
	lat   sim.Time
	mems  []*mem.Memory
	cpus  []*mem.CPU
	ackAt []sim.Time
}

func newToy(eng *sim.Engine, procs int, p toyNetParams) (*toy, error) {
	if procs < 1 || procs > 64 {
		return nil, fmt.Errorf("toy: %d processes, 1 to 64 allowed", procs)
	}
	m := &toy{eng: eng, lat: sim.Time(p.LatencyNs * float64(sim.Nanosecond)), ackAt: make([]sim.Time, procs)}
	cfg := mem.Config{ClockMHz: 100, Costs: mem.Costs{LoadCycles: 1, UncachedLoadCycles: 2, StoreCycles: 1, MemcpyMBps: 200, VectorMBps: 200}}
	for i := 0; i < procs; i++ {
		mm := mem.NewMemory(fmt.Sprintf("toy%d", i), 1<<24)
		c, err := mem.NewCPU(eng, fmt.Sprintf("toy%d", i), mm, cfg)
		if err != nil {
			return nil, err
		}
		m.mems, m.cpus = append(m.mems, mm), append(m.cpus, c)
	}
	return m, nil
}

func (m *toy) Name() string              { return "toy" }
func (m *toy) Engine() *sim.Engine       { return m.eng }
func (m *toy) Procs() int                { return len(m.cpus) }
func (m *toy) CPU(pe int) *mem.CPU       { return m.cpus[pe] }
func (m *toy) MemoryBytes() int          { return 1 << 24 }
func (m *toy) Memory(pe int) *mem.Memory { return m.mems[pe] }

func (m *toy) Alloc(pe int, name string, n int) (mem.Region, error) {
	s, err := m.mems[pe].Alloc(name, (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, err
	}
	return mem.Region{Mem: m.mems[pe], Addr: s.Base, Len: n}, nil
}

func (m *toy) deliver(p *sim.Proc, pe, to int, dst mem.Addr, b []byte) {
	p.Sleep(m.lat / 4)
	at := p.Now() + m.lat
	m.eng.At(at, func() { m.mems[to].Write(dst, b) })
	m.ackAt[pe] = max(m.ackAt[pe], at)
}

func (m *toy) Put(p *sim.Proc, pe, to int, dst, src mem.Addr, n int) {
	b := make([]byte, n)
	m.mems[pe].Read(src, b)
	m.deliver(p, pe, to, dst, b)
}

func (m *toy) PutWord(p *sim.Proc, pe, to int, dst mem.Addr, v uint64) {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	m.deliver(p, pe, to, dst, b)
}

func (m *toy) Quiet(p *sim.Proc, pe int) {
	if d := m.ackAt[pe] - p.Now(); d > 0 {
		p.Sleep(d)
	}
}

// LitmusTraits are the toy's own choices for simrun litmus, in its own
// code (litmus.Tuned; no registry line): a flag for its latency. The rest
// is the generic mapping on its verbs.
func (m *toy) LitmusTraits() machines.LitmusTraits {
	return machines.LitmusTraits{Flags: []machines.LitmusFlag{
		{Name: "latency-ns", Param: "latency_ns", Usage: "with --machine toy: a put's delivery latency (latency_ns)"},
	}}
}

// mailbox is a message-passing stack that hands each message's bytes
// (copied out of the sender's memory and into the receiver's) to the
// receiver after a fixed delay. It needs mailboxMachine, a capability of
// its own: per-PE CPUs and allocation on a machine with a network (remote
// writes: the toy, the T3D, the SP, the SCI cluster and the SX-4's
// symmetric heap have it, the Power Challenge does not).
type mailboxMachine interface {
	machines.RemoteWrite
}

type mailboxParams struct {
	DelayUs float64 `yaml:"delay_us"`
}

func defaultMailboxParams() mailboxParams { return mailboxParams{DelayUs: 3} }

type letter struct {
	src, tag int
	data     []byte
}

type mailboxRank struct {
	m     mailboxMachine
	rank  int
	all   []*mailboxRank
	delay sim.Time
	box   []letter
	wait  sim.WaitQueue
}

func openMailbox(m machines.Machine, p mailboxParams) (*stacks.World, error) {
	mm, err := machines.Require[mailboxMachine](m, "stack mailbox", "per-PE CPUs and allocation with a network (mailboxMachine)")
	if err != nil {
		return nil, err
	}
	w := &stacks.World{Stack: "mailbox", Title: "mailbox", Machine: m}
	all := make([]*mailboxRank, m.Procs())
	for i := range all {
		all[i] = &mailboxRank{m: mm, rank: i, all: all, delay: sim.Time(p.DelayUs * float64(sim.Microsecond))}
		w.Ranks = append(w.Ranks, all[i])
	}
	return w, nil
}

func (r *mailboxRank) Rank() int                        { return r.rank }
func (r *mailboxRank) Size() int                        { return len(r.all) }
func (r *mailboxRank) CPU() *mem.CPU                    { return r.m.CPU(r.rank) }
func (r *mailboxRank) Buffer(n int) (mem.Region, error) { return r.m.Alloc(r.rank, "user", n) }

func (r *mailboxRank) Send(p *sim.Proc, buf mem.Region, dest, tag int) error {
	b := make([]byte, buf.Len)
	r.CPU().Peek(buf.Addr, b)
	p.Sleep(r.delay)
	to := r.all[dest]
	to.box = append(to.box, letter{r.rank, tag, b})
	to.wait.WakeAll()
	return nil
}

func (r *mailboxRank) Recv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Status, error) {
	for {
		for i, l := range r.box {
			if (src == stacks.AnySource || l.src == src) && (tag == stacks.AnyTag || l.tag == tag) {
				r.box = append(r.box[:i], r.box[i+1:]...)
				r.CPU().Poke(buf.Addr, l.data[:min(len(l.data), buf.Len)])
				return stacks.Status{Source: l.src, Tag: l.tag, Len: len(l.data)}, nil
			}
		}
		r.wait.Wait(p, fmt.Sprintf("mailbox rank %d: receive from %d", r.rank, src))
	}
}

type done struct{ st stacks.Status }

func (d done) Wait(*sim.Proc) (stacks.Status, error)       { return d.st, nil }
func (d done) Test(*sim.Proc) (bool, stacks.Status, error) { return true, d.st, nil }

type later struct {
	r        *mailboxRank
	buf      mem.Region
	src, tag int
}

func (l later) Wait(p *sim.Proc) (stacks.Status, error) { return l.r.Recv(p, l.buf, l.src, l.tag) }
func (l later) Test(*sim.Proc) (bool, stacks.Status, error) {
	return false, stacks.Status{}, errors.New("mailbox: Test is not supported")
}

func (r *mailboxRank) Isend(p *sim.Proc, buf mem.Region, dest, tag int) (stacks.Request, error) {
	return done{}, r.Send(p, buf, dest, tag)
}

func (r *mailboxRank) Irecv(p *sim.Proc, buf mem.Region, src, tag int) (stacks.Request, error) {
	return later{r, buf, src, tag}, nil
}

// toyNode is a shared-memory machine: every process a CPU of one node,
// all sharing its memory (machines.SharedSegments on one node), with no
// store buffer and no cache (sequentially consistent).
type toyNode struct {
	eng  *sim.Engine
	mem  *mem.Memory
	cpus []*mem.CPU
}

func newToyNode(eng *sim.Engine, procs int, _ toyParams) (*toyNode, error) {
	if procs < 1 || procs > 8 {
		return nil, fmt.Errorf("toynode: %d processes, 1 to 8 allowed", procs)
	}
	m := &toyNode{eng: eng, mem: mem.NewMemory("toynode", 1<<24)} // room for MPICH's 4 MB shared segment
	cfg := mem.Config{ClockMHz: 100, Costs: mem.Costs{LoadCycles: 1, StoreCycles: 1, FenceCycles: 1, AtomicCycles: 2, MemcpyMBps: 200, VectorMBps: 200}}
	for i := range procs {
		c, err := mem.NewCPU(eng, fmt.Sprintf("cpu%d", i), m.mem, cfg)
		if err != nil {
			return nil, err
		}
		m.cpus = append(m.cpus, c)
	}
	return m, nil
}

func (m *toyNode) Name() string        { return "toynode" }
func (m *toyNode) Engine() *sim.Engine { return m.eng }
func (m *toyNode) Procs() int          { return len(m.cpus) }
func (m *toyNode) CPU(pe int) *mem.CPU { return m.cpus[pe] }
func (m *toyNode) NodeOf(int) int      { return 0 }

func (m *toyNode) Alloc(pe int, name string, n int) (mem.Region, error) {
	return m.SharedSegment(0, fmt.Sprintf("p%d.%s", pe, name), n)
}

func (m *toyNode) SharedSegment(_ int, name string, n int) (mem.Region, error) {
	s, err := m.mem.Alloc(name, (n+63)&^63, 64)
	if err != nil {
		return mem.Region{}, err
	}
	return mem.Region{Mem: m.mem, Addr: s.Base, Len: n}, nil
}

// testRegistry is the built-in registry with the toy machines and the
// mailbox stack added.
func testRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := all.Default()
	if err := reg.AddMachine(registry.Machine("toy", "a test machine: one-sided puts with a fixed latency", defaultToyNetParams, newToy)); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddMachine(registry.Machine("toynode", "a test machine: CPUs sharing one memory", defaultToyParams, newToyNode)); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddStack(registry.Stack("mailbox", "a test stack: messages handed over after a delay", registry.Decode(defaultMailboxParams), openMailbox,
		registry.Needs(machines.Cap[mailboxMachine]("mailbox-host", "per-PE CPUs and allocation with a network (mailboxMachine)")))); err != nil {
		t.Fatal(err)
	}
	return reg
}

// runScenario resolves a scenario (YAML) with reg as simrun does (specs,
// then the workloads' checks) and runs every series.
func runScenario(t *testing.T, reg *registry.Registry, src string) ([]workloads.Result, error) {
	t.Helper()
	name, _, _ := strings.Cut(strings.TrimPrefix(src, "name: "), "\n")
	s, err := scenarios.Parse(name+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := runner.Specs(reg, s)
	if err == nil {
		err = runner.Check(reg, s, sp)
	}
	if err != nil {
		return nil, err
	}
	var out []workloads.Result
	for _, x := range sp {
		res, err := runner.RunSeries(x)
		if err != nil {
			return out, fmt.Errorf("series %s: %w", x.Series, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// TestPluggedMachineAndStack: a machine and a stack defined in this test
// run ping-pong through the normal resolution path, with each other and
// with the built-ins (ACLMPL on the toy machine, the mailbox on the T3D);
// their params are decoded strictly; the SX-4 lacks what the mailbox
// needs and says so.
func TestPluggedMachineAndStack(t *testing.T) {
	reg := testRegistry(t)
	const pp = "workload: {name: pingpong, params: {sizes: [0, 8, 4096], repetitions: 2}}\n"
	res, err := runScenario(t, reg, `name: plug
machine: {name: toy}
stack: {name: mailbox}
`+pp+`series:
  - name: mailbox-toy
  - name: aclmpl-toy
    machine: {params: {latency_ns: 1000}}
    stack: {name: aclmpl}
  - name: mailbox-t3d
    machine: {name: t3d}
  - name: mailbox-toy-slow
    stack: {params: {delay_us: 30}}
`)
	if err != nil {
		t.Fatal(err)
	}
	lat := map[string]float64{}
	for i, r := range res {
		if len(r.Failures) > 0 || len(r.Rows) != 5 {
			t.Fatalf("series %d: %v, %d rows", i, r.Failures, len(r.Rows))
		}
		for _, row := range r.Rows {
			if row.Metric == "latency_us" && row.X == 8 {
				lat[row.Series] = row.Value
			}
		}
	}
	t.Logf("8-byte latencies: %v", lat)
	if lat["mailbox-toy"] != 3 || lat["mailbox-toy-slow"] != 30 {
		t.Errorf("mailbox latency %v us, %v us slow; want its 3 us and 30 us delays", lat["mailbox-toy"], lat["mailbox-toy-slow"])
	}
	if lat["aclmpl-toy"] <= 1 {
		t.Errorf("ACLMPL on the toy machine: %v us, want above the put latency", lat["aclmpl-toy"])
	}
	async := strings.Replace(pp, "repetitions: 2", "mode: async", 1)
	for _, c := range []struct{ yaml, want string }{
		{"machine: {name: toy, params: {latency_ns: -1}}\nstack: {name: mailbox}\n" + pp, "bad.yaml:2:43: field machine.params.latency_ns: -1 ns is outside the plausible range"},
		{"machine: {name: toy}\nstack: {name: mailbox, params: {delay: 3}}\n" + pp, `field stack.params.delay: unknown field "delay"`},
		{"machine: {name: challenge}\nstack: {name: mailbox}\n" + pp, "stack mailbox cannot run on machine challenge: it needs per-PE CPUs and allocation with a network (mailboxMachine)"},
		{"machine: {name: toy}\nstack: {name: aclmpl}\n" + async, "fetch-inc-register or remote-fetch-inc: a fetch-and-increment register per process (machines.FetchIncRegister)"},
	} {
		_, err := runScenario(t, reg, "name: bad\n"+c.yaml)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestEveryPairingPingPong: every registered (machine, stack) pairing, each
// stack variant, runs a small ping-pong with every payload verified
// (through Send and Recv, or, for a stack without message passing, the
// one-sided put mode), or reports the machine's verb it lacks by name (a
// *machines.MissingCapability: exit status 2). Of the built-in machines
// (sx4, t3d, sci, sp) and stacks (mpich, scampi, aclmpl, armci, shmem), all
// 20 pairings run, among them every one the stacks' ports were built for.
func TestEveryPairingPingPong(t *testing.T) {
	reg := testRegistry(t)
	ran := map[string]bool{}
	opened := map[string]bool{} // machine/stack, any variant
	for _, m := range reg.Machines() {
		for _, st := range reg.Stacks() {
			variants := st.Variants
			if len(variants) == 0 {
				variants = []string{""}
			}
			for _, v := range variants {
				name := m.Name + "/" + st.Name + v
				stack := "{name: " + st.Name + "}"
				if v != "" {
					stack = "{name: " + st.Name + ", params: " + v + "}"
				}
				var res []workloads.Result
				var err error
				for _, mode := range []string{"sync", "put"} {
					src := fmt.Sprintf("name: pair\nmachine: {name: %s}\nstack: %s\nworkload: {name: pingpong, params: {sizes: [8, 1024], repetitions: 2, mode: %s}}\n", m.Name, stack, mode)
					res, err = runScenario(t, reg, src)
					var mc *machines.MissingCapability
					if !errors.As(err, &mc) || mc.Stack == "" {
						break // it ran, or the machine lacks a verb: no other mode helps
					}
				}
				var mc *machines.MissingCapability
				switch {
				case errors.As(err, &mc):
					if mc.Capability == "" || !runner.InputError(err) || !strings.Contains(err.Error(), mc.Capability) || mc.Stack != "" {
						t.Errorf("%s: the machine's missing verb not named: %v", name, err)
					}
					t.Logf("%s: %v", name, err)
				case err != nil:
					t.Errorf("%s: %v (neither a run nor a missing verb)", name, err)
				default:
					if len(res) != 1 || len(res[0].Failures) > 0 || len(res[0].Rows) != 4 {
						t.Errorf("%s: %+v", name, res)
					}
					ran[name] = true
					opened[m.Name+"/"+st.Name] = true
				}
			}
		}
	}
	// ch_t3d's default receive queue needs a fetch-and-increment and its
	// shared queue an atomic swap and remote reads, which the toy lacks (a
	// missing verb); its per-sender rings need only puts.
	for _, want := range []string{"sx4/mpich{device: ch_shmem}", "sx4/mpich{device: ch_lfshmem}", "t3d/mpich{device: ch_t3d}",
		"t3d/mpich{device: ch_t3d, receive_queue: shared}", "t3d/aclmpl", "toy/aclmpl", "toy/mpich{device: ch_t3d, receive_queue: per-sender}",
		"toy/mailbox", "t3d/mailbox", "sp/mailbox", "sci/scampi", "sci/mailbox",
		"toynode/mpich{device: ch_lfshmem}", "sci/mpich{device: ch_lfshmem}", "sci/mpich{device: ch_t3d}",
		// The what-ifs the verbs open: ScaMPI with puts and quiet, and in
		// one node's shared memory; ACLMPL on posted writes and on LAPI;
		// ARMCI and raw SHMEM on SCI and the SP.
		"t3d/scampi", "sx4/scampi", "sp/scampi", "sci/aclmpl", "sp/aclmpl", "sci/armci", "sci/shmem", "sp/shmem", "sp/armci", "sx4/armci", "t3d/shmem", "t3d/armci",
		// PVM on every machine with remote writes; ACLMPL, raw SHMEM and
		// PVM on the SX-4's remote writes into its symmetric heap.
		"t3d/pvm", "sci/pvm", "sp/pvm", "toy/pvm", "sx4/pvm", "sx4/aclmpl", "sx4/shmem"} {
		if !ran[want] {
			t.Errorf("%s did not run", want)
		}
	}
	builtin := 0
	for _, m := range []string{"sx4", "t3d", "sci", "sp"} {
		for _, st := range []string{"mpich", "scampi", "aclmpl", "armci", "shmem"} {
			if opened[m+"/"+st] {
				builtin++
			}
		}
	}
	if builtin < 20 {
		t.Errorf("%d of the 20 built-in pairings run, want all 20: %v", builtin, opened)
	}
	t.Logf("%d pairings ran: %v", len(ran), ran)
}

// TestPluggedCollectives: the collective benchmark runs on the toy machine
// (no barrier network: the harness's ideal barrier; no delivered-bytes
// count) over ACLMPL and over the mailbox stack, every delivery verified.
func TestPluggedCollectives(t *testing.T) {
	reg := testRegistry(t)
	res, err := runScenario(t, reg, `name: coll
machine: {name: toy}
stack: {name: aclmpl}
workload: {name: pattern-table, params: {pes: [6], bytes: [512]}}
series:
  - name: aclmpl-toy
  - name: mailbox-toy
    stack: {name: mailbox}
  - name: mailbox-toy-async
    stack: {name: mailbox}
    workload: {params: {mode: async}}
`)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if len(r.Failures) > 0 || len(r.Rows) != 5 {
			t.Fatalf("series %d: %v, %d rows", i, r.Failures, len(r.Rows))
		}
		for _, row := range r.Rows {
			if !(row.Value > 0) {
				t.Errorf("%s: %s = %g", row.Series, row.Metric, row.Value)
			}
		}
	}
}

// TestPluggedLitmus: the machines defined in this test run litmus tests
// through simrun litmus --machine, with the generic mapping on their
// verbs, and the toy's own flag (its LitmusTraits): on the toy, remote stores are its
// puts and smp_mb its Quiet (SB shows, SB+fences does not; its puts land
// in order, so MP does not), its params are machine params (--param), a
// remote load, which needs the remote reads it lacks, is an error naming
// the verb; the one-node toy runs tests as its processor model (no store
// buffer: sequentially consistent), exhaustively too.
func TestPluggedLitmus(t *testing.T) {
	reg := testRegistry(t)
	old := builtins
	builtins = func() *registry.Registry { return reg }
	t.Cleanup(func() { builtins = old })
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--list"}, exitOK, "toy          thread i on process i, each location in one PE's memory (--home): remote stores are remote writes of a word (PutWord), no remote loads"},
		{[]string{"--list"}, exitOK, "toynode      threads on CPUs of one node, sharing its memory"},
		{[]string{"SB", "--machine", "toy", "--runs", "200"}, exitOK, "% toy: P0 on PE 0, P1 on PE 1, x on PE 1, y on PE 0\n"},
		{[]string{"SB", "--machine", "toy", "--runs", "200"}, exitOK, "Observation SB Sometimes"},
		{[]string{"SB+fences", "--machine", "toy", "--runs", "200"}, exitOK, "Observation SB+fences Never 0 200\n"},
		{[]string{"MP", "--machine", "toy", "--runs", "200", "--param", "latency_ns=500", "--place", "P1=5"}, exitOK, "Observation MP Never 0 200\n"},
		{[]string{"MP", "--machine", "toy", "--param", "latency_ns=-1"}, exitUsage, "machine toy: field params.latency_ns: -1 ns is outside the plausible range"},
		{[]string{"MP", "--machine", "toy", "--home", "x=0"}, exitUsage, "remote-read"},
		{[]string{"MP", "--machine", "toy", "--reorder-ns", "5"}, exitUsage, "--reorder-ns applies to --machine sci only"},
		{[]string{"--list"}, exitOK, "--latency-ns sets latency_ns (default 2000)"},
		{[]string{"MP", "--machine", "toy", "--runs", "50", "--latency-ns", "500"}, exitOK, "Observation MP Never 0 50\n"},
		{[]string{"MP", "--machine", "toy", "--latency-ns", "-1"}, exitUsage, "machine toy: field params.latency_ns: -1 ns is outside the plausible range"},
		{[]string{"MP", "--machine", "sci", "--latency-ns", "5"}, exitUsage, "--latency-ns applies to --machine toy only"},
		{[]string{"SB", "--machine", "toynode", "--exhaustive"}, exitOK, "Observation SB Never 0 3\n"},
		{[]string{"SB", "--machine", "toynode", "--runs", "100", "--place", "P1=cpu7"}, exitOK, "% toynode: P0 on CPU 0, P1 on CPU 7 (one node: its CPUs share one memory)\n"},
		{[]string{"SB", "--machine", "toynode", "--home", "x=1"}, exitUsage, "--home applies to --machine t3d, sp, sci and toy only"},
		{[]string{"SB", "--machine", "nosuch"}, exitUsage, "(machines: sx4, t3d, sp, sci, challenge, tcpcluster, toy, toynode)"},
	} {
		code, out, errs := simrun(t, append([]string{"litmus"}, c.args...)...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("simrun litmus %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out, errs)
		}
	}
}

// TestPluggedCompareNetwork: simrun run --compare-network runs a scenario
// on the plugged toy machine on both network models, knowing from the
// registry alone that the toy has a network; the one-node toy has none.
func TestPluggedCompareNetwork(t *testing.T) {
	reg := testRegistry(t)
	old := builtins
	builtins = func() *registry.Registry { return reg }
	t.Cleanup(func() { builtins = old })
	if flow, _ := networks(reg); flow["toy"] == "" || flow["toynode"] != "" {
		t.Fatalf("networks: %v; want toy and not toynode", flow)
	}
	dir := t.TempDir()
	const pp = "workload: {name: pingpong, params: {sizes: [0, 8, 4096], repetitions: 2}}\n"
	f := write(t, dir, "toy.yaml", "name: toy-compare\ntitle: ping-pong on the toy\nmachine: {name: toy}\nstack: {name: mailbox}\n"+pp)
	code, stdout, stderr := simrun(t, "run", f, "--compare-network")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "### toy-compare") || !strings.Contains(stdout, "| toy-compare | 5 | 0.00 % |") {
		t.Errorf("no comparison of the series' 5 points, 0.00 %% apart, in\n%s", stdout)
	}
	f = write(t, dir, "toynode.yaml", "name: toynode-compare\ntitle: ping-pong on one node\nmachine: {name: toynode}\nstack: {name: mpich, params: {device: ch_shmem}}\n"+pp)
	if code, _, stderr := simrun(t, "run", f, "--compare-network"); code != exitUsage || !strings.Contains(stderr, "no series runs on a machine with a network (sci, sp, t3d, toy)") {
		t.Errorf("toynode: exit %d, %s", code, stderr)
	}
}

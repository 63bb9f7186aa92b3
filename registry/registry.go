// Package registry is the one place where machines, stacks and workloads
// are known by name. A Registry is a value: Default holds the built-in
// machines (sx4, t3d, sp, sci, ...) and stacks (mpich, aclmpl, shmem,
// armci, scampi, ...), registry/all adds the
// built-in workloads (workloads.go); a test may add its own. Resolve
// turns a scenario's machine and stack (names and YAML params) into an
// opener that builds the machine and opens the stack on it: params are
// decoded and the pairing is checked once, by the same code for
// simrun validate and simrun run, and workloads receive ready ranks
// (stacks.World) without importing any concrete machine or stack.
//
// Adding a machine or a stack is a new package and one line in Default:
//
//	r.AddMachine(registry.Machine(t3d.Name, "Cray T3D ...", t3d.DefaultParams, t3d.New))
//	r.AddStack(registry.Stack(aclmpl.Name, "ACLMPL ...", aclmpl.ParseParams, aclmpl.Open, registry.Needs(aclmpl.Needs()...)))
//
// Litmus tests run on every machine (LitmusMachine, litmus.go): on the
// verbs it offers, with the choices its own package makes (its
// LitmusTraits); nothing more is registered for them.
//
// Layer: imports the built-in machines and stacks (to name them),
// machines, stacks, workloads, litmus, sim and
// internal/strictyaml; only registry/all, runner, cmd/simrun and tests
// import it, nothing below does.
package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/internal/suggest"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
	"gopkg.in/yaml.v3"
)

// Registry holds machines and stacks by name, in registration order.
type Registry struct {
	machines  []MachineEntry
	stacks    []StackEntry
	workloads []WorkloadEntry
}

// New returns an empty registry.
func New() *Registry { return &Registry{} }

// MachineEntry is a registered machine: how to decode its params and build
// it.
type MachineEntry struct {
	Name    string
	Summary string // one line
	// Faults are machine params (YAML) that turn on the faults and
	// reordering the machine models, for soaks; none if it models none.
	Faults []string
	// Network is set for a machine with a network (its params implement
	// machines.Networked): it runs on either network model.
	Network *Network
	decode  func(file, field string, node *yaml.Node) (any, error)
	build   func(eng *sim.Engine, procs int, params any) (machines.Machine, error)
}

// setupOf is the set-up memory params state (machines.SetupSizer), or
// none.
func setupOf(params any) machines.Setup {
	if s, ok := params.(machines.SetupSizer); ok {
		return s.SetupMemory()
	}
	return machines.Setup{}
}

// MachineOption sets an optional field of a MachineEntry.
type MachineOption func(*MachineEntry)

// Faults lists machine params (YAML) under which the machine injects its
// faults and reorders, for soaks (simrun soak runs them as extra pairings).
func Faults(params ...string) MachineOption {
	return func(e *MachineEntry) { e.Faults = append(e.Faults, params...) }
}

// Machine is the entry of a machine with params P (defaults gives them;
// a scenario's machine.params are decoded strictly over them and checked
// with P's Validate method, if it has one) built by build.
func Machine[P any, M machines.Machine](name, summary string, defaults func() P, build func(eng *sim.Engine, procs int, params P) (M, error), opts ...MachineOption) MachineEntry {
	dec := Decode(defaults)
	e := MachineEntry{
		Name: name, Summary: summary,
		decode: func(file, field string, node *yaml.Node) (any, error) { return dec(file, field, node) },
		build: func(eng *sim.Engine, procs int, params any) (machines.Machine, error) {
			m, err := build(eng, procs, params.(P))
			if err != nil {
				return nil, err
			}
			return m, nil
		},
	}
	if n, ok := any(defaults()).(machines.Networked); ok {
		e.Network = network(n)
	}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// Network is how a machine with a network runs on each network model, as
// machine params (YAML mappings) merged over a scenario's.
type Network struct {
	// Flow puts the machine on the flow model.
	Flow string
	// PacketOff turns off the packet-only features its defaults turn on
	// (which the flow model refuses), for both runs of a comparison to
	// differ in their network model only; "" if none is on.
	PacketOff string
}

// network is the Network of a machine whose default params are n.
func network(n machines.Networked) *Network {
	var off []string
	for _, f := range n.PacketFeatures() {
		if f.On {
			off = append(off, f.Field+": "+f.Off)
		}
	}
	nw := &Network{Flow: "{network_model: " + machines.NetworkFlow + "}"}
	if len(off) > 0 {
		nw.PacketOff = "{" + strings.Join(off, ", ") + "}"
	}
	return nw
}

// Build builds the machine with its default params and procs processes in
// eng (listings and tests).
func (e MachineEntry) Build(eng *sim.Engine, procs int) (machines.Machine, error) {
	p, err := e.decode("", "machine.params", nil)
	if err != nil {
		return nil, err
	}
	return e.build(eng, procs, p)
}

// Defaults are the machine's default params (listings).
func (e MachineEntry) Defaults() (any, error) { return e.decode("", "machine.params", nil) }

// StackEntry is a registered stack: how to decode its params and open it
// on a machine.
type StackEntry struct {
	Name    string
	Summary string // one line
	// Needs are the machine capabilities the stack uses (for listings;
	// Open checks them).
	Needs []machines.Capability
	// Variants are stack params (YAML) that listings and tests try on
	// every machine, e.g. each device of MPICH; empty: the defaults only.
	Variants []string
	// On names the registered stack this one is built on (StackOn), which
	// the registry opens for it; "" for a stack on the machine alone.
	On     string
	decode func(file, field string, node *yaml.Node) (any, error)
	open   func(m machines.Machine, params any) (*stacks.World, error)
	// wire returns the open function of a stack built on another (On),
	// given the lower stack's opener; AddStack calls it.
	wire func(lower func(m machines.Machine) (*stacks.World, error)) func(m machines.Machine, params any) (*stacks.World, error)
}

// StackOption sets an optional part of a StackEntry.
type StackOption func(*StackEntry)

// Needs lists the machine capabilities a stack uses.
func Needs(caps ...machines.Capability) StackOption {
	return func(e *StackEntry) { e.Needs = append(e.Needs, caps...) }
}

// Variants lists the stack params (YAML) listings and tests try.
func Variants(params ...string) StackOption {
	return func(e *StackEntry) { e.Variants = append(e.Variants, params...) }
}

// Stack is the entry of a stack with params P (decode decodes and checks a
// scenario's stack.params, naming file, line and field) opened on a
// machine by open.
func Stack[P any](name, summary string, decode func(file, field string, node *yaml.Node) (P, error), open func(m machines.Machine, params P) (*stacks.World, error), opts ...StackOption) StackEntry {
	e := StackEntry{
		Name: name, Summary: summary,
		decode: func(file, field string, node *yaml.Node) (any, error) { return decode(file, field, node) },
		open:   func(m machines.Machine, params any) (*stacks.World, error) { return open(m, params.(P)) },
	}
	for _, o := range opts {
		o(&e)
	}
	return e
}

// StackOn is the entry of a stack built on the registered stack lower
// (ARMCI's message-passing barriers on MPICH): the stack declares what it
// needs as an opener of type L, and the registry wires it when the entry is
// added, with lower opened on the same machine in its default params.
// lower must be registered first.
func StackOn[P any, L ~func(m machines.Machine) (*stacks.World, error)](name, summary, lower string, decode func(file, field string, node *yaml.Node) (P, error), open func(lower L) func(m machines.Machine, params P) (*stacks.World, error), opts ...StackOption) StackEntry {
	e := Stack(name, summary, decode, func(machines.Machine, P) (*stacks.World, error) {
		return nil, fmt.Errorf("registry: stack %s is built on %s, which is not wired", name, lower)
	}, opts...)
	e.On = lower
	e.wire = func(lo func(m machines.Machine) (*stacks.World, error)) func(m machines.Machine, params any) (*stacks.World, error) {
		o := open(L(lo))
		return func(m machines.Machine, params any) (*stacks.World, error) { return o(m, params.(P)) }
	}
	return e
}

// Defaults are the stack's default params (listings).
func (e StackEntry) Defaults() (any, error) { return e.decode("", "stack.params", nil) }

// Decode is the strict decoder of params P: a scenario's params over
// defaults(), then P's Validate method (if it has one), whose
// *machines.ParamError is located at its line.
func Decode[P any](defaults func() P) func(file, field string, node *yaml.Node) (P, error) {
	return func(file, field string, node *yaml.Node) (P, error) {
		p := defaults()
		if err := strictyaml.DecodeAt(file, field, node, &p); err != nil {
			var zero P
			return zero, err
		}
		if v, ok := any(p).(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				var zero P
				return zero, machines.Locate(file, field, node, err)
			}
		}
		return p, nil
	}
}

// AddMachine registers a machine; its name must be new.
func (r *Registry) AddMachine(e MachineEntry) error {
	if e.Name == "" || slices.ContainsFunc(r.machines, func(x MachineEntry) bool { return x.Name == e.Name }) {
		return fmt.Errorf("registry: machine name %q is empty or taken", e.Name)
	}
	r.machines = append(r.machines, e)
	return nil
}

// AddStack registers a stack; its name must be new.
func (r *Registry) AddStack(e StackEntry) error {
	if e.Name == "" || slices.ContainsFunc(r.stacks, func(x StackEntry) bool { return x.Name == e.Name }) {
		return fmt.Errorf("registry: stack name %q is empty or taken", e.Name)
	}
	if e.On != "" {
		i := slices.IndexFunc(r.stacks, func(x StackEntry) bool { return x.Name == e.On })
		if i < 0 {
			return fmt.Errorf("registry: stack %s is built on stack %q, which is not registered before it", e.Name, e.On)
		}
		lower := r.stacks[i]
		params, err := lower.Defaults()
		if err != nil {
			return fmt.Errorf("registry: stack %s is built on %s, whose defaults fail: %w", e.Name, lower.Name, err)
		}
		e.open = e.wire(func(m machines.Machine) (*stacks.World, error) { return lower.open(m, params) })
	}
	r.stacks = append(r.stacks, e)
	return nil
}

// Machines are the registered machines, in registration order.
func (r *Registry) Machines() []MachineEntry { return slices.Clone(r.machines) }

// Stacks are the registered stacks, in registration order.
func (r *Registry) Stacks() []StackEntry { return slices.Clone(r.stacks) }

// LookupMachine finds a machine by name.
func (r *Registry) LookupMachine(name string) (MachineEntry, bool) {
	i := slices.IndexFunc(r.machines, func(x MachineEntry) bool { return x.Name == name })
	if i < 0 {
		return MachineEntry{}, false
	}
	return r.machines[i], true
}

// LookupStack finds a stack by name.
func (r *Registry) LookupStack(name string) (StackEntry, bool) {
	i := slices.IndexFunc(r.stacks, func(x StackEntry) bool { return x.Name == name })
	if i < 0 {
		return StackEntry{}, false
	}
	return r.stacks[i], true
}

// Ref is a machine or stack as a scenario's series names it.
type Ref struct {
	Name   string
	Params *yaml.Node // nil or empty: defaults
	// Field is the component's YAML path, e.g. "machine" or
	// "series[1].stack" (empty: "machine" or "stack").
	Field string
	// Node, if not nil, is the component's node in the file (errors about
	// the component itself, such as a pairing, point at it).
	Node *yaml.Node
}

func (c Ref) field(def string) string {
	if c.Field != "" {
		return c.Field
	}
	return def
}

// Opener builds a machine with procs processes in eng and opens a stack on
// it.
type Opener = func(eng *sim.Engine, procs int) (*stacks.World, error)

// ProbeProcs is the number of processes of the instance Resolve checks a
// pairing on (the fewest any workload runs).
const ProbeProcs = 2

// Resolve is ResolveSetup without the set-up memory.
func (r *Registry) Resolve(file string, machine, stack Ref) (Opener, error) {
	open, _, err := r.ResolveSetup(file, machine, stack)
	return open, err
}

// ResolveSetup decodes the params of machine and stack (errors name file, line
// and field), checks that the stack can be opened on the machine (on a
// throwaway instance of ProbeProcs processes: a missing capability is a
// *machines.MissingCapability), and returns the opener that workloads
// call, with the memory the machine and the stack state their set-up
// takes (machines.SetupSizer; a component that states none adds nothing).
// A series with neither a machine nor a stack (a litmus test) resolves to
// a nil opener.
func (r *Registry) ResolveSetup(file string, machine, stack Ref) (Opener, machines.Setup, error) {
	if machine.Name == "" && stack.Name == "" {
		return nil, machines.Setup{}, nil
	}
	mf, sf := machine.field("machine"), stack.field("stack")
	unknown := func(ref Ref, field, kind, name string, known []string) error {
		what := fmt.Sprintf("unknown %s %q", kind, name)
		if name == "" {
			what = fmt.Sprintf("no %s named (a series with a machine needs a stack and the other way round)", kind)
		}
		at := strictyaml.Find(ref.Node, "name")
		if at == nil {
			at = ref.Node
		}
		return strictyaml.Errorf(file, at, field+".name", "%s%s; %ss: %s", what, suggest.Hint(name, known), kind, strings.Join(known, ", "))
	}
	// Every problem of the series at once: an unknown machine does not
	// hide the stack's (or the other way round), and the params of each
	// known one are decoded.
	var errs []error
	me, mok := r.LookupMachine(machine.Name)
	if !mok {
		errs = append(errs, unknown(machine, mf, "machine", machine.Name, names(r.machines, func(e MachineEntry) string { return e.Name })))
	}
	se, sok := r.LookupStack(stack.Name)
	if !sok {
		errs = append(errs, unknown(stack, sf, "stack", stack.Name, names(r.stacks, func(e StackEntry) string { return e.Name })))
	}
	var mp, sp any
	if mok {
		var err error
		mp, err = me.decode(file, mf+".params", machine.Params)
		errs = append(errs, err)
	}
	if sok {
		var err error
		sp, err = se.decode(file, sf+".params", stack.Params)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, machines.Setup{}, err
	}
	open := func(eng *sim.Engine, procs int) (*stacks.World, error) {
		m, err := me.build(eng, procs, mp)
		if err != nil {
			return nil, atComponent(machines.Locate(file, mf+".params", machine.Params, err), machine.Node)
		}
		w, err := se.open(m, sp)
		var mc *machines.MissingCapability
		switch {
		case errors.As(err, &mc):
			return nil, &PairingError{Pos: pairingPos(file, sf, stack), Err: err}
		case err != nil:
			return nil, machines.Locate(file, sf+".params", stack.Params, err)
		}
		if w.Size() != procs {
			return nil, fmt.Errorf("%s: %s: stack %s opened %d ranks on %d processes (a bug in the stack)", file, sf, se.Name, w.Size(), procs)
		}
		return w, nil
	}
	if _, err := open(sim.NewEngine(1), ProbeProcs); err != nil {
		return nil, machines.Setup{}, err
	}
	setup := setupOf(mp).Plus(setupOf(sp))
	if f, ok := mp.(machines.FaultSizer); ok {
		if r, ok := sp.(machines.Retrier); ok && r.RetryBytes() > 0 {
			unit := r.RetryBytes()
			setup.Attempts = func(n int) float64 { return f.ExpectedAttempts(min(n, unit)) }
		}
	}
	return open, setup, nil
}

// atComponent gives a located error that has no line (its params were
// not written: the defaults refused the number of processes) the line of
// the component's node.
func atComponent(err error, node *yaml.Node) error {
	var se *strictyaml.Error
	if node == nil || !errors.As(err, &se) || se.Line != 0 || se != err {
		return err
	}
	c := *se
	c.Line, c.Column = node.Line, node.Column
	return &c
}

// PairingError is a stack that cannot be opened on a machine (it wraps the
// *machines.MissingCapability), positioned at the stack's params, or its
// name, in the scenario file.
type PairingError struct {
	Pos *strictyaml.Error // file, line, column and field; Msg unused
	Err error
}

// Error formats the error as "file:line:col: field F: the missing capability".
func (e *PairingError) Error() string {
	p := *e.Pos
	p.Msg = e.Err.Error()
	return p.Error()
}

// Unwrap returns the missing capability.
func (e *PairingError) Unwrap() error { return e.Err }

// pairingPos is where a pairing error points: the stack's params when
// given (they choose the device), else the stack's component.
func pairingPos(file, field string, stack Ref) *strictyaml.Error {
	if stack.Params != nil && stack.Params.Kind != 0 {
		return strictyaml.Errorf(file, stack.Params, field+".params", "")
	}
	return strictyaml.Errorf(file, stack.Node, field, "")
}

func names[E any](es []E, name func(E) string) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = name(e)
	}
	return out
}

// Probe opens stack (with params, YAML; "" for the defaults) on a
// ProbeProcs-process instance of machine with its default params: what
// listings and tests use to see what a pairing offers, or which capability
// it lacks.
func (r *Registry) Probe(machine, stack, params string) (*stacks.World, error) {
	var node *yaml.Node
	if params != "" {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
			return nil, fmt.Errorf("registry: stack params %q: %w", params, err)
		}
		if len(doc.Content) > 0 {
			node = doc.Content[0]
		}
	}
	open, err := r.Resolve("", Ref{Name: machine}, Ref{Name: stack, Params: node})
	if err != nil {
		return nil, err
	}
	return open(sim.NewEngine(1), ProbeProcs)
}

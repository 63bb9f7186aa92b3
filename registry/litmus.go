package registry

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/workloads/litmus"
	"gopkg.in/yaml.v3"
)

// LitmusEntry is a machine's litmus adapter: how simrun litmus --machine
// runs a test on it (a litmus.Machine built from the machine's params),
// with the adapter's own named flags, each setting a machine param. A
// machine with no registered adapter gets the generic one (GenericLitmus):
// litmus runs on the verbs it offers.
type LitmusEntry struct {
	Machine string // the machine's registered name
	Summary string // one line, for simrun litmus --list
	// Flags are simrun litmus flags that set machine params of this
	// machine only, e.g. --reorder-ns (reorder_ns).
	Flags   []LitmusFlag
	adapter func(build litmus.Builder, params any) (litmus.Machine, error)
}

// LitmusFlag is a named simrun litmus flag of an adapter: it sets machine
// param Param.
type LitmusFlag struct {
	Name  string // the flag, without dashes, e.g. "reorder-ns"
	Param string // the machine param (YAML key) it sets, e.g. "reorder_ns"
	Usage string
	// Default is the param's value for litmus runs (YAML) when neither
	// the flag nor --param sets it; "": the machine's own default.
	Default string
	// Shown is the default simrun litmus -h shows: Default, or the
	// machine's default param (filled in by AddLitmus).
	Shown string
}

// Litmus is the litmus adapter of machine, whose params are P (the type
// its registry entry decodes): adapter turns a builder of the machine with
// those params, and the params, into a litmus.Machine (its Name is set to
// machine).
func Litmus[P any](machine, summary string, adapter func(build litmus.Builder, params P) litmus.Machine, flags ...LitmusFlag) LitmusEntry {
	return LitmusEntry{
		Machine: machine, Summary: summary, Flags: flags,
		adapter: func(build litmus.Builder, params any) (litmus.Machine, error) {
			p, ok := params.(P)
			if !ok {
				var want P
				return litmus.Machine{}, fmt.Errorf("registry: litmus adapter of %s takes params %T, the machine's are %T", machine, want, params)
			}
			mc := adapter(build, p)
			mc.Name = machine
			return mc, nil
		},
	}
}

// AddLitmus registers the litmus adapter of a registered machine (one per
// machine); its params type must be the machine's, and its flags' params
// the machine's params.
func (r *Registry) AddLitmus(e LitmusEntry) error {
	me, ok := r.LookupMachine(e.Machine)
	if !ok {
		return fmt.Errorf("registry: litmus adapter of %q: no such machine", e.Machine)
	}
	if _, ok := r.litmusEntry(e.Machine); ok {
		return fmt.Errorf("registry: machine %q already has a litmus adapter", e.Machine)
	}
	p, err := me.decode("", "machine.params", nil)
	if err != nil {
		return fmt.Errorf("registry: machine %s's default params: %w", e.Machine, err)
	}
	if _, err := e.adapter(nil, p); err != nil {
		return err
	}
	defaults, err := paramValues(p)
	if err != nil {
		return fmt.Errorf("registry: machine %s's default params: %w", e.Machine, err)
	}
	e.Flags = slices.Clone(e.Flags)
	for i, f := range e.Flags {
		v, ok := defaults[f.Param]
		if !ok || f.Name == "" || f.Name == "param" {
			return fmt.Errorf("registry: litmus adapter of %s: flag %q sets %q, not a param of the machine", e.Machine, f.Name, f.Param)
		}
		e.Flags[i].Shown = f.Default
		if f.Default == "" {
			e.Flags[i].Shown = v
		}
	}
	r.litmus = append(r.litmus, e)
	return nil
}

func (r *Registry) litmusEntry(machine string) (LitmusEntry, bool) {
	i := slices.IndexFunc(r.litmus, func(x LitmusEntry) bool { return x.Machine == machine })
	if i < 0 {
		return LitmusEntry{}, false
	}
	return r.litmus[i], true
}

// paramValues are params' values by YAML key, as YAML scalars.
func paramValues(params any) (map[string]string, error) {
	b, err := yaml.Marshal(params)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out, nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1].Value
	}
	return out, nil
}

// LitmusMachines are the litmus adapters of every machine: the registered
// ones in registration order, then the generic adapter of each other
// machine, in the machines' order.
func (r *Registry) LitmusMachines() []LitmusEntry {
	out := slices.Clone(r.litmus)
	for _, m := range r.machines {
		if _, ok := r.litmusEntry(m.Name); !ok {
			out = append(out, r.genericLitmus(m))
		}
	}
	return out
}

// LookupLitmus is machine's litmus adapter: its registered one or the
// generic one.
func (r *Registry) LookupLitmus(machine string) (LitmusEntry, bool) {
	if e, ok := r.litmusEntry(machine); ok {
		return e, true
	}
	if m, ok := r.LookupMachine(machine); ok {
		return r.genericLitmus(m), true
	}
	return LitmusEntry{}, false
}

// genericLitmus is the litmus adapter of a machine that registered none:
// the generic mapping on the verbs it offers (litmus.Machine's defaults),
// described from a ProbeProcs-process instance with default params.
func (r *Registry) genericLitmus(m MachineEntry) LitmusEntry {
	e := LitmusEntry{
		Machine: m.Name,
		adapter: func(build litmus.Builder, _ any) (litmus.Machine, error) {
			return litmus.Machine{Name: m.Name, Build: build}, nil
		},
	}
	e.Summary = GenericLitmusSummary(m)
	return e
}

// GenericLitmusSummary describes how the generic litmus adapter runs tests
// on machine m (of default params), from the verbs it offers.
func GenericLitmusSummary(m MachineEntry) string {
	inst, err := m.Build(sim.NewEngine(1), ProbeProcs)
	if err != nil {
		return fmt.Sprintf("no litmus runs: %v", err)
	}
	rw, ok := inst.(machines.RemoteWrite)
	if !ok {
		if remote, err := (litmus.Machine{Name: m.Name, Build: m.Build}).Remote(ProbeProcs); err == nil && !remote {
			return "threads on CPUs of one node, sharing its memory: the machine's own processor model (as a --model)"
		}
		return "no litmus runs: it has neither remote writes (machines.RemoteWrite) nor one node's shared segments (machines.SharedSegments)"
	}
	unit := "PE"
	if _, ok := inst.(machines.SharedSegments); ok {
		unit = "node"
	}
	load := "remote loads are remote reads (Get)"
	if _, ok := inst.(machines.RemoteRead); !ok {
		load = "no remote loads (no remote reads: --home must put what a thread loads on its " + unit + ")"
	}
	fence := "smp_mb is Quiet"
	if c := rw.CPU(0).Config().Cache; c.Enabled && !c.Coherent {
		fence += " then a flush of the non-coherent cache"
	}
	return fmt.Sprintf("thread i on process i, each location in one %s's memory (--home): remote stores are remote writes of a word (PutWord), %s; %s (the generic verbs)", unit, load, fence)
}

// LitmusParam is a machine param set on simrun litmus's command line.
type LitmusParam struct {
	Key, Value string // YAML key and value
}

// LitmusMachine is machine's litmus.Machine with its default params,
// overridden by its adapter's flag defaults, then by set (in order: a later
// value of a key wins). Errors name the params at fault ("machine sci:
// field params.reorder_ns: ...").
func (r *Registry) LitmusMachine(machine string, set []LitmusParam) (litmus.Machine, error) {
	e, ok := r.LookupLitmus(machine)
	if !ok {
		return litmus.Machine{}, fmt.Errorf("unknown machine %q (machines: %s)", machine, strings.Join(names(r.LitmusMachines(), func(e LitmusEntry) string { return e.Machine }), ", "))
	}
	me, _ := r.LookupMachine(machine)
	var all []LitmusParam
	for _, f := range e.Flags {
		if f.Default != "" {
			all = append(all, LitmusParam{f.Param, f.Default})
		}
	}
	node, err := paramsNode(append(all, set...))
	if err != nil {
		return litmus.Machine{}, err
	}
	p, err := me.decode("machine "+machine, "params", node)
	if err != nil {
		return litmus.Machine{}, err
	}
	build := func(eng *sim.Engine, procs int) (machines.Machine, error) { return me.build(eng, procs, p) }
	return e.adapter(build, p)
}

// unplace clears n's positions and its children's.
func unplace(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		unplace(c)
	}
}

// paramsNode is the YAML mapping of params, each key once (its last value).
func paramsNode(params []LitmusParam) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	at := map[string]int{}
	var errs []error
	for _, p := range params {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(p.Value), &doc); err != nil {
			errs = append(errs, fmt.Errorf("param %s=%s: %w", p.Key, p.Value, err))
			continue
		}
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ""}
		if len(doc.Content) > 0 {
			v = doc.Content[0]
			unplace(v) // a command line has no lines: errors name the param
		}
		if i, ok := at[p.Key]; ok {
			m.Content[i+1] = v
			continue
		}
		at[p.Key] = len(m.Content)
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.Key}, v)
	}
	return m, errors.Join(errs...)
}

package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/litmus"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
	"gopkg.in/yaml.v3"
)

// LitmusEntry is how simrun litmus --machine runs a test on a machine: a
// summary and the named flags that set machine params, from the machine's
// own litmus traits (machines.LitmusTraits, on the instance its
// constructor returns: the litmus package's Tuned) or, for a machine with
// none, the generic mapping on the verbs it offers. Nothing is registered
// for it: a machine's folder holds its litmus choices.
type LitmusEntry struct {
	Machine string // the machine's registered name
	Summary string // one line, for simrun litmus --list
	// Flags are simrun litmus flags that set machine params of this
	// machine only, e.g. --reorder-ns (reorder_ns).
	Flags []LitmusFlag
}

// LitmusFlag is a named simrun litmus flag of a machine: it sets machine
// param Param.
type LitmusFlag struct {
	machines.LitmusFlag
	// Shown is the default simrun litmus -h shows: Default, or the
	// machine's default param.
	Shown string
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

// LitmusMachines are the litmus entries of every machine, in the machines'
// order.
func (r *Registry) LitmusMachines() []LitmusEntry {
	var out []LitmusEntry
	for _, m := range r.machines {
		out = append(out, litmusEntry(m))
	}
	return out
}

// LookupLitmus is machine's litmus entry.
func (r *Registry) LookupLitmus(machine string) (LitmusEntry, bool) {
	if m, ok := r.LookupMachine(machine); ok {
		return litmusEntry(m), true
	}
	return LitmusEntry{}, false
}

// litmusEntry is machine m's litmus entry, read from an instance of
// ProbeProcs processes with default params: its traits' summary and flags,
// or the generic summary.
func litmusEntry(m MachineEntry) LitmusEntry {
	e := LitmusEntry{Machine: m.Name}
	inst, err := m.Build(sim.NewEngine(1), ProbeProcs)
	if err != nil {
		e.Summary = fmt.Sprintf("no litmus runs: %v", err)
		return e
	}
	t, ok := inst.(litmus.Tuned)
	if !ok {
		e.Summary = GenericLitmusSummary(m)
		return e
	}
	tr := t.LitmusTraits()
	e.Summary = tr.Summary
	if e.Summary == "" {
		e.Summary = GenericLitmusSummary(m)
	}
	var defaults map[string]string
	if len(tr.Flags) > 0 {
		p, err := m.decode("", "machine.params", nil)
		if err == nil {
			defaults, _ = paramValues(p)
		}
	}
	for _, f := range tr.Flags {
		shown := f.Default
		if shown == "" {
			shown = defaults[f.Param]
		}
		e.Flags = append(e.Flags, LitmusFlag{LitmusFlag: f, Shown: shown})
	}
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
// overridden by its flags' defaults, then by set (in order: a later value
// of a key wins). Errors name the params at fault ("machine sci: field
// params.reorder_ns: ...").
func (r *Registry) LitmusMachine(machine string, set []LitmusParam) (litmus.Machine, error) {
	me, ok := r.LookupMachine(machine)
	if !ok {
		return litmus.Machine{}, fmt.Errorf("unknown machine %q (machines: %s)", machine, strings.Join(names(r.LitmusMachines(), func(e LitmusEntry) string { return e.Machine }), ", "))
	}
	e := litmusEntry(me)
	defaults, err := me.decode("", "machine.params", nil)
	if err != nil {
		return litmus.Machine{}, fmt.Errorf("machine %s's default params: %w", machine, err)
	}
	values, err := paramValues(defaults)
	if err != nil {
		return litmus.Machine{}, fmt.Errorf("machine %s's default params: %w", machine, err)
	}
	var all []LitmusParam
	for _, f := range e.Flags {
		if _, ok := values[f.Param]; !ok || f.Name == "" || f.Name == "param" {
			return litmus.Machine{}, fmt.Errorf("machine %s: litmus flag %q sets %q, not a param of the machine", machine, f.Name, f.Param)
		}
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
	return litmus.On(machine, build)
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

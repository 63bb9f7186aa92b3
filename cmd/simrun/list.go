package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/stacks"
)

// capabilities are the machine capabilities listings check: package
// machines' own, then those the registered stacks define (each name once).
func capabilities(reg *registry.Registry) []machines.Capability {
	caps := machines.Capabilities()
	seen := map[string]bool{}
	for _, c := range caps {
		seen[c.Name] = true
	}
	for _, s := range reg.Stacks() {
		for _, c := range s.Needs {
			if !seen[c.Name] {
				seen[c.Name] = true
				caps = append(caps, c)
			}
		}
	}
	return caps
}

// listMachines prints each registered machine, its summary and the
// capabilities it offers and lacks, checked on an instance of
// registry.ProbeProcs processes with its default params.
func listMachines(reg *registry.Registry, w io.Writer) {
	caps := capabilities(reg)
	ms := reg.Machines()
	width := 0
	for _, m := range ms {
		width = max(width, len(m.Name))
	}
	pad := strings.Repeat(" ", width+2)
	fmt.Fprintf(w, "Machines (verbs checked on a %d-process instance with default params):\n", registry.ProbeProcs)
	for _, m := range ms {
		fmt.Fprintf(w, "%-*s  %s\n", width, m.Name, m.Summary)
		inst, err := m.Build(sim.NewEngine(1), registry.ProbeProcs)
		if err != nil {
			fmt.Fprintf(w, "%scannot be built with its defaults: %v\n", pad, err)
			continue
		}
		var has, lacks []string
		for _, c := range caps {
			if c.Has(inst) {
				has = append(has, c.Name)
			} else {
				lacks = append(lacks, c.Name)
			}
		}
		fmt.Fprintf(w, "%soffers: %s\n", pad, orNone(has))
		fmt.Fprintf(w, "%slacks:  %s\n", pad, orNone(lacks))
	}
	fmt.Fprintln(w, "Verbs:")
	for _, c := range caps {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.What)
	}
}

// listStacks prints each registered stack, its summary, the machine
// capabilities it needs, and on every machine (for each of its listed
// variants) the rank interfaces it offers there or the capability it
// lacks.
func listStacks(reg *registry.Registry, w io.Writer) {
	ss := reg.Stacks()
	width := 0
	for _, s := range ss {
		width = max(width, len(s.Name))
	}
	pad := strings.Repeat(" ", width+2)
	fmt.Fprintf(w, "Stacks (each opened on a %d-process instance of every machine):\n", registry.ProbeProcs)
	for _, s := range ss {
		fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Summary)
		for i, c := range s.Needs {
			label := "needs:"
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "%s%-7s%s: %s\n", pad, label, c.Name, c.What)
		}
		variants := s.Variants
		if len(variants) == 0 {
			variants = []string{""}
		}
		for _, m := range reg.Machines() {
			for _, v := range variants {
				on := "on " + m.Name
				if v != "" {
					on += " " + v
				}
				fmt.Fprintf(w, "%s%s: %s\n", pad, on, probe(reg, m.Name, s.Name, v))
			}
		}
	}
	fmt.Fprintln(w, "Interfaces a stack's ranks may offer:")
	for _, i := range stacks.Interfaces() {
		fmt.Fprintf(w, "  %-11s %s\n", i.Name, i.What)
	}
}

// probe is what stack (with params) offers on machine, or what it lacks.
func probe(reg *registry.Registry, machine, stack, params string) string {
	wd, err := reg.Probe(machine, stack, params)
	var mc *machines.MissingCapability
	switch {
	case errors.As(err, &mc):
		return "missing " + mc.Capability
	case err != nil:
		return "cannot open: " + firstLine(err.Error())
	}
	var offers []string
	for _, i := range stacks.Interfaces() {
		if i.Has(wd) {
			offers = append(offers, i.Name)
		}
	}
	return "offers " + orNone(offers)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

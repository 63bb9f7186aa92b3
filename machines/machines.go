// Package machines holds what every machine model offers and the errors a
// pairing reports. Each machine lives in its own sub-package (sx4, t3d, ...)
// with its Params, construction and primitives. Stacks declare the
// capabilities they need as small interfaces of their own and check them
// with Require, so that an impossible pairing names what is missing.
//
// Layer: machines imports sim, sim/mem and internal/strictyaml; its
// sub-packages add sim/net, sim/am and a capability package such as
// machines/lapi. Nothing here imports a stack, a workload or the registry.
package machines

import (
	"fmt"

	"github.com/msgsim/msgsim/sim"
)

// Machine is what every machine model offers.
type Machine interface {
	Name() string
	Engine() *sim.Engine
	// Procs is the number of processors (ranks) the machine was built with.
	Procs() int
}

// MissingCapability is the error of a stack (or workload) paired with a
// machine that lacks something it needs.
type MissingCapability struct {
	Machine    string // machine name
	User       string // the stack or workload that needs it
	Capability string // what is missing, in words (e.g. "one-sided put (machines/t3d.Put)")
	// Stack, when set, is the stack that lacks the capability (a workload
	// asking a stack for an interface its ranks do not offer); empty when
	// the machine lacks it.
	Stack string
}

func (e *MissingCapability) Error() string {
	if e.Stack != "" {
		return fmt.Sprintf("%s cannot run on stack %s (machine %s): it needs %s, which %s does not offer", e.User, e.Stack, e.Machine, e.Capability, e.Stack)
	}
	return fmt.Sprintf("%s cannot run on machine %s: it needs %s, which %s does not provide", e.User, e.Machine, e.Capability, e.Machine)
}

// Require returns m as capability C, or a MissingCapability error naming
// what (a description of C) for user.
func Require[C any](m Machine, user, what string) (C, error) {
	c, ok := m.(C)
	if !ok {
		var zero C
		return zero, &MissingCapability{Machine: m.Name(), User: user, Capability: what}
	}
	return c, nil
}

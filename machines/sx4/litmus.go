package sx4

import "github.com/msgsim/msgsim/machines"

// LitmusTraits are the SX-4's choices for litmus tests (package litmus):
// one node whose CPUs reach its one memory through the same crossbar, so a
// test runs as the SX-4 CPU's own processor model.
func (m *Machine) LitmusTraits() machines.LitmusTraits {
	return machines.LitmusTraits{
		Summary:  "each thread on a CPU of one node: non-coherent write-through scalar caches, stores to different lines drain out of order, the node's own costs",
		Head:     "SX-4",
		MaxUnits: MaxCPUs,
		Note:     " (the CPUs are alike: one memory through one crossbar)",
	}
}

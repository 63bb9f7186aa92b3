package challenge

import "github.com/msgsim/msgsim/machines"

// LitmusTraits are the Power Challenge's choices for litmus tests (package
// litmus): one memory, caches kept coherent by the bus, so a test runs as
// the Challenge CPU's own processor model.
func (m *Machine) LitmusTraits() machines.LitmusTraits {
	return machines.LitmusTraits{
		Summary:  "each thread on a CPU of one Power Challenge: coherent caches snooping one bus, no store buffer others see past (the R10000 as the Challenge used it is sequentially consistent): the sc model",
		Head:     "Power Challenge",
		MaxUnits: MaxCPUs,
		Note:     " (the CPUs are alike: one memory on one bus)",
	}
}

// Package runner loads and runs scenarios. Load resolves a scenario's
// series into workloads.Specs through a registry and checks them, every
// problem once, in file order, positioned in the scenario's file
// (InputErrors attributes an inherited param's error to the top level).
// Then the series run on one pool of simulation workers shared by every
// series (and the sweep points of a series, when tokens are free), each
// scenario under a wall-clock watchdog that
// abandons the run rather than change a result (Run); a suite of
// scenarios scheduled largest first on that pool (Suite); the rows that
// are not numbers dropped and reported as failures (DropNonFinite); and a
// run's rows checked against the scenario's claims (Claims). Outcomes
// come back in series order, the same whatever the parallelism.
//
// Layer: runner imports registry, scenarios, workloads, stacks, machines
// (its errors), report, sim and internal/strictyaml; cmd/simrun (and any
// program driving scenarios) imports it, nothing below does.
package runner

// Package runner runs the series of scenarios: one pool of simulation
// workers shared by every series (and the sweep points of a series, when
// tokens are free), each scenario under a wall-clock watchdog that
// abandons the run rather than change a result (Run); a suite of
// scenarios scheduled largest first on that pool (Suite); the rows that
// are not numbers dropped and reported as failures (DropNonFinite); and a
// run's rows checked against the scenario's claims (Claims). Outcomes
// come back in series order, the same whatever the parallelism.
//
// Layer: runner imports scenarios, workloads, report and sim; cmd/simrun
// (and any program driving scenarios) imports it. Resolving a scenario's
// series into workloads.Specs is the registry's and the caller's job.
package runner

// Package runner loads and runs scenarios, for simrun and any program
// that drives them:
//
//   - Load resolves a scenario's series into workloads.Specs through a
//     registry and checks them: every problem once, in file order,
//     positioned in the scenario's file (InputErrors attributes an
//     inherited param's error to the top level).
//   - Run runs the series on one pool of simulation workers shared by
//     every series (and the sweep points of a series, when tokens are
//     free), each scenario under a wall-clock watchdog that abandons the
//     run rather than change a result (WallError). Outcomes come back in
//     series order, the same whatever the parallelism.
//   - Suite schedules many scenarios on that pool, the largest first.
//   - DropNonFinite reports the rows that are not numbers as failures;
//     RunInputErrors finds the bad input a run met; Judge says what a
//     run's failures mean given what the scenario expects.
//   - Claims checks a run's rows against the scenario's claims;
//     SuiteClaims does it for a suite of scenarios.
//
// Layer: runner imports registry, scenarios, workloads, stacks, machines
// (its errors), report, sim and internal/strictyaml; cmd/simrun imports
// it, nothing below does.
package runner

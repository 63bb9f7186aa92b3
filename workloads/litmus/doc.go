// Package litmus is the litmus workload: the thin adapter that runs a
// litmus test of package litmus (the top-level one: parsers, CPU models,
// sampled runs and exhaustive search) as a scenario's series. Its params
// name a test and a CPU model; Run returns one "count" row per final state
// and the litmus7- or herd7-style output as notes.
//
//	workload: {name: litmus, params: {test: MP, model: pso, runs: 1000}}
//
// Layer: a workload: imports litmus, workloads, report, sim/mem and
// internal/strictyaml.
package litmus

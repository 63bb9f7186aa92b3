package litmus

// runEvents is about what one run of a test costs (TestSpeed: a few dozen
// events on a CPU model, a few hundred on a machine).
const runEvents = 300

// EstimateRuns forecasts the events of runs sampled runs of a test (simrun
// litmus --runs checks it against --max-events as run does a series).
func EstimateRuns(runs int) float64 { return float64(runs) * runEvents }

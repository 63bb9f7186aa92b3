package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// stepsScript is what one process of stepsRun does: rounds of runs of
// steps, each followed by a wait for a wake-up from the next process and
// the steps that waker has it sleep then, and callbacks planted from
// inside the runs for the times runs end.
type stepsScript struct {
	runs  [][]Steps
	after [][]Steps // the steps a waker has the woken process sleep
	plant []Time    // when each round's callback is planted, after its start
	at    []Time    // and for when, after its start
}

// stepsScripts draws procs scripts of rounds rounds with step times of a
// few picoseconds, so that ends of steps, of runs and planted events
// meet often.
func stepsScripts(seed uint64, procs, rounds int) []stepsScript {
	r := rand.New(rand.NewPCG(seed, 1))
	steps := func() []Steps {
		s := make([]Steps, 1+r.IntN(3))
		for i := range s {
			s[i] = Steps{N: r.IntN(4), D: Time(r.IntN(4))}
		}
		return s
	}
	out := make([]stepsScript, procs)
	for i := range out {
		for range rounds {
			out[i].runs = append(out[i].runs, steps())
			out[i].after = append(out[i].after, steps())
			out[i].plant = append(out[i].plant, Time(r.IntN(6)))
			out[i].at = append(out[i].at, Time(r.IntN(12)))
		}
	}
	return out
}

// stepsRun runs the scripts, with SleepSteps if merged, else each step a
// Sleep. Process i, each round, plants its callback, sleeps its run,
// logs, wakes process i+1 (if it waits, with its steps) and waits for
// process i-1's wake-up, unless it is the first. It returns who ran when,
// in order, the events and the coroutine resumptions.
func stepsRun(scripts []stepsScript, merged bool) ([]string, uint64, uint64) {
	e := NewEngine(1)
	var log []string
	procs := make([]*Proc, len(scripts))
	owed := make([][]Steps, len(scripts)) // a woken process's steps
	sleep := func(p *Proc, runs []Steps) {
		if merged {
			p.SleepSteps(runs...)
			return
		}
		for _, r := range runs {
			for range r.N {
				p.Sleep(r.D)
			}
		}
	}
	for i, sc := range scripts {
		procs[i] = e.Spawn(fmt.Sprint("p", i), func(p *Proc) {
			for k, runs := range sc.runs {
				start := p.Now()
				e.At(start+sc.plant[k], func() {
					e.At(start+sc.at[k], func() { log = append(log, fmt.Sprint("planted ", i, " ", e.Now())) })
				})
				sleep(p, runs)
				log = append(log, fmt.Sprint("p", i, " round ", k, " ", p.Now()))
				if next := (i + 1) % len(procs); next != i && procs[next].Blocked() && procs[next].Wake() {
					owed[next] = sc.after[k]
				}
				if i > 0 && k < len(sc.runs)-1 {
					blockFor(p, Time(5+i), "the previous process")
					sleep(p, owed[i])
					owed[i] = nil
					log = append(log, fmt.Sprint("p", i, " woken ", p.Now()))
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		panic(err)
	}
	return log, e.Events(), e.resumes
}

// TestSleepStepsMatchesSleeps: SleepSteps runs the same events, in the same order, as the steps slept one by one, with
// callbacks planted for the ends of runs from inside them and processes
// ending runs and steps at the same instants (ties everywhere); with
// fewer coroutine resumptions.
func TestSleepStepsMatchesSleeps(t *testing.T) {
	var resOne, resMerged uint64
	for seed := range uint64(40) {
		scripts := stepsScripts(seed, 2+int(seed%4), 6)
		one, evOne, r1 := stepsRun(scripts, false)
		merged, evMerged, rN := stepsRun(scripts, true)
		resOne, resMerged = resOne+r1, resMerged+rN
		if !slices.Equal(one, merged) {
			for i := range min(len(one), len(merged)) {
				if one[i] != merged[i] {
					t.Fatalf("seed %d, entry %d: one by one %q, merged %q\none by one %q\nmerged     %q", seed, i, one[i], merged[i], one, merged)
				}
			}
			t.Fatalf("seed %d: %d entries against %d", seed, len(one), len(merged))
		}
		if evOne != evMerged {
			t.Errorf("seed %d: events one by one %d, merged %d", seed, evOne, evMerged)
		}
	}
	if resMerged >= resOne {
		t.Errorf("resumptions: one by one %d, merged %d", resOne, resMerged)
	}
	t.Logf("resumptions: one by one %d, merged %d", resOne, resMerged)
}

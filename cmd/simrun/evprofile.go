package main

import (
	"encoding/csv"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/msgsim/msgsim/sim"
	"github.com/msgsim/msgsim/sim/evcount"
	"github.com/msgsim/msgsim/workloads"
)

// eventProfile collects the event counts (sim/evcount) of every engine
// a run's series create, for simrun run --eventprofile.
type eventProfile struct {
	mu     sync.Mutex
	series []string                     // in the scenario's order
	counts map[string][]*evcount.Counts // by series: one per engine
}

// watch makes every engine of the specs count its events.
func (ep *eventProfile) watch(specs []workloads.Spec) {
	ep.counts = map[string][]*evcount.Counts{}
	for i := range specs {
		series, prev := specs[i].Series, specs[i].Observe
		ep.series = append(ep.series, series)
		specs[i].Observe = func(e *sim.Engine) {
			c := evcount.Enable(e)
			ep.mu.Lock()
			ep.counts[series] = append(ep.counts[series], c)
			ep.mu.Unlock()
			if prev != nil {
				prev(e)
			}
		}
	}
}

// write writes the profile as CSV to w: series, what ran, events and the
// share of the series' events, most frequent first; the series "(all)"
// first, the scenario's series after it in order. Series that ran no
// engine (another shard's) are left out.
func (ep *eventProfile) write(w io.Writer) error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var all evcount.Counts
	per := make([]evcount.Counts, len(ep.series))
	for i, s := range ep.series {
		for _, c := range ep.counts[s] {
			per[i].Add(c)
		}
		all.Add(&per[i])
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"series", "what", "events", "share"})
	rows := func(series string, c *evcount.Counts) {
		total := c.Total()
		if total == 0 {
			return
		}
		for _, r := range c.Rows() {
			cw.Write([]string{series, r.What, strconv.FormatUint(r.N, 10), strconv.FormatFloat(float64(r.N)/float64(total), 'f', 4, 64)})
		}
	}
	rows("(all)", &all)
	for i, s := range ep.series {
		rows(s, &per[i])
	}
	cw.Flush()
	return cw.Error()
}

// watchEvents creates the event profile's file path and makes every
// engine of the specs count its events.
func watchEvents(path string, sp []workloads.Spec) (*eventProfile, *os.File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	ep := &eventProfile{}
	ep.watch(sp)
	return ep, f, nil
}

// writeEvents writes the event profile to f and closes it.
func writeEvents(ep *eventProfile, f *os.File) error {
	werr := ep.write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

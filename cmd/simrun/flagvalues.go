package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/msgsim/msgsim/runner"
)

// countValue is an integer flag refused at parse time below its least
// value (flag.Parse reports the flag's name and the reason).
type countValue struct {
	n, least int
	what     string // the unit, for the refusal: "series at once"
}

func (c *countValue) String() string {
	if c == nil {
		return ""
	}
	return strconv.Itoa(c.n)
}

func (c *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number of %s, got %q", c.what, s)
	}
	if n < c.least {
		return fmt.Errorf("want at least %d %s, got %d", c.least, c.what, n)
	}
	c.n = n
	return nil
}

// countFlag defines an integer flag on fs whose value must be at least
// least (def is kept as given, e.g. 0 for "not set: GOMAXPROCS").
func countFlag(fs *flag.FlagSet, name string, def, least int, what, usage string) *int {
	v := &countValue{n: def, least: least, what: what}
	fs.Var(v, name, usage)
	return &v.n
}

// jobsFlag defines -j: simulations at once, at least 1 (0, the default,
// means GOMAXPROCS).
func jobsFlag(fs *flag.FlagSet, usage string) *int {
	return countFlag(fs, "j", 0, 1, "simulations at once", usage)
}

// eventsValue is --max-events: a positive count of events (1e10 and
// 10000000000 alike) or -1 for no limit; NaN, infinities, 0 and other
// negatives are refused.
type eventsValue struct{ v float64 }

func (e *eventsValue) String() string {
	if e == nil {
		return ""
	}
	return strconv.FormatFloat(e.v, 'g', -1, 64)
}

func (e *eventsValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !math.IsInf(v, 0):
		return fmt.Errorf("want a count of events (e.g. 1e10) or -1 for no limit, got %q", s)
	case v == -1:
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 1:
		return fmt.Errorf("want a count of events of at least 1 (e.g. 1e10) or -1 for no limit, got %q", s)
	}
	e.v = v
	return nil
}

// maxEventsFlag defines --max-events on fs: the largest estimated size of
// a series that validate and run accept.
func maxEventsFlag(fs *flag.FlagSet) *float64 {
	v := &eventsValue{v: runner.DefaultMaxEvents}
	fs.Var(v, "max-events", "refuse a series whose workload estimates it at more than `N` events (a rough count: messages times their events); -1: no limit")
	return &v.v
}

// memoryValue is --max-memory: a positive number of GB, or -1 for no
// limit; 0 (not given) leaves the default to runner.DefaultMaxMemory.
type memoryValue struct{ bytes float64 }

func (m *memoryValue) String() string {
	if m == nil || m.bytes == 0 {
		return ""
	}
	if m.bytes < 0 {
		return "-1"
	}
	return strconv.FormatFloat(m.bytes/1e9, 'g', -1, 64)
}

func (m *memoryValue) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil && v == -1:
		m.bytes = -1
		return nil
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
		return fmt.Errorf("want a number of GB above 0 (e.g. 8 or 0.5) or -1 for no limit, got %q", s)
	}
	m.bytes = v * 1e9
	return nil
}

// maxMemoryFlag defines --max-memory on fs: the most memory, in bytes, a
// series' machine and stack may take to set up (0: the default).
func maxMemoryFlag(fs *flag.FlagSet) *float64 {
	v := &memoryValue{}
	fs.Var(v, "max-memory", "refuse a series whose machine and stack would take more than `GB` gigabytes to set up its largest point (default: 3/4 of the memory available now); -1: no limit")
	return &v.bytes
}

// memoryFromFlags is the --max-memory fs holds, in bytes (0 when fs has
// none or it was not given).
func memoryFromFlags(fs *flag.FlagSet) float64 {
	if f := fs.Lookup("max-memory"); f != nil {
		if m, ok := f.Value.(*memoryValue); ok {
			return m.bytes
		}
	}
	return 0
}

// Package sim is msgsim's discrete-event engine: integer-picosecond time, an
// event calendar ordered by (time, sequence), simulated processes run as
// coroutines one at a time, wait queues, a seeded random generator, limits,
// and deadlock/livelock reports. It imports nothing of the project.
package sim

import (
	"fmt"
	"math"
)

// Time is a simulated instant or duration in integer picoseconds.
type Time int64

// Units of simulated time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
	// Forever is later than any reachable simulated time.
	Forever Time = math.MaxInt64
)

// Micros returns t in microseconds.
func (t Time) Micros() float64 { return float64(t) / float64(Microsecond) }

// Nanos returns t in nanoseconds.
func (t Time) Nanos() float64 { return float64(t) / float64(Nanosecond) }

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// String formats t with a unit suited to its size.
func (t Time) String() string {
	a := t
	if a < 0 {
		a = -a
	}
	switch {
	case t == Forever:
		return "forever"
	case a >= Second:
		return fmt.Sprintf("%.6gs", t.Seconds())
	case a >= Millisecond:
		return fmt.Sprintf("%.6gms", float64(t)/float64(Millisecond))
	case a >= Microsecond:
		return fmt.Sprintf("%.6gus", t.Micros())
	case a >= Nanosecond:
		return fmt.Sprintf("%.6gns", t.Nanos())
	}
	return fmt.Sprintf("%dps", int64(t))
}

// Micro converts microseconds to Time, rounding to the nearest picosecond.
func Micro(us float64) Time { return Time(math.Round(us * float64(Microsecond))) }

// Nano converts nanoseconds to Time, rounding to the nearest picosecond.
func Nano(ns float64) Time { return Time(math.Round(ns * float64(Nanosecond))) }

// Clock is a processor or network clock: costs given in cycles become time.
type Clock struct {
	Period Time // one cycle
}

// ClockMHz returns the clock of the given frequency.
func ClockMHz(mhz float64) Clock {
	return Clock{Period: Time(math.Round(float64(Microsecond) / mhz))}
}

// Cycles returns the duration of n cycles.
func (c Clock) Cycles(n float64) Time { return Time(math.Round(n * float64(c.Period))) }

// TransferTime is the time to move n bytes at bytesPerSecond (0 bandwidth
// means instantaneous). It rounds up so that a transfer is never free.
func TransferTime(n int, bytesPerSecond float64) Time {
	if n <= 0 || bytesPerSecond <= 0 {
		return 0
	}
	return Time(math.Ceil(float64(n) * float64(Second) / bytesPerSecond))
}

// FromFloat converts v units (sim.Microsecond, sim.Nanosecond...) to Time,
// rejecting values that are not finite, are negative or do not fit: for
// parameters read from a scenario.
func FromFloat(v float64, unit Time) (Time, error) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("%g is not a finite number", v)
	case v < 0:
		return 0, fmt.Errorf("%g must not be negative", v)
	case v*float64(unit) >= float64(math.MaxInt64/2):
		return 0, fmt.Errorf("%g is too large (simulated time is limited to %v)", v, Time(math.MaxInt64/2))
	}
	return Time(math.Round(v * float64(unit))), nil
}

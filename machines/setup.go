package machines

import (
	"fmt"
	"math"
	"strings"
)

// Setup is the memory of the simulator's own heap that a machine or a
// stack takes to set up procs processes, before any message: its
// per-process state (CPUs, memories, adapters, devices) and its state per
// ordered pair of processes (counters, rings' bookkeeping, maps of
// peers). Simulated memory is not in it: it is allocated when touched.
// simrun validate and run add the machine's and the stack's Setup to the
// estimate of a series and refuse one above --max-memory before anything
// is built.
type Setup struct {
	PerProc float64 // bytes per process
	PerPair float64 // bytes per ordered pair of processes
	// What names the state, for the refusal ("t3d: CPU, memory and
	// router of each PE").
	What string
	// MaxProcs, if not 0, is the most processes the machine takes: a
	// larger number is the machine's to refuse (with its own reason),
	// not the memory check's.
	MaxProcs int
	// Attempts, if not nil, is the expected number of attempts a
	// transfer of n bytes takes under the machine's faults, when the
	// stack retries failed transfers (a machine's FaultSizer, kept only
	// for a stack that is a Retrier): the estimate multiplies a series'
	// events by it.
	Attempts func(n int) float64
}

// FaultSizer is implemented by the Params of a machine that injects
// faults a stack may retry after.
type FaultSizer interface {
	// ExpectedAttempts is the expected number of attempts until a write
	// of n bytes gets through with no fault.
	ExpectedAttempts(n int) float64
}

// Retrier is implemented by the Params of a stack that retries a
// transfer that failed (ScaMPI's checkpointed writes).
type Retrier interface {
	// RetryBytes is the largest transfer retried as a whole (a message
	// longer than it goes as several): 0 if the stack retries nothing.
	RetryBytes() int
}

// SetupSizer is implemented by the Params of a machine or a stack that
// states its set-up memory (every built-in one does).
type SetupSizer interface {
	SetupMemory() Setup
}

// Bytes is the set-up memory of procs processes.
func (s Setup) Bytes(procs int) float64 {
	n := float64(procs)
	return s.PerProc*n + s.PerPair*n*max(n-1, 0)
}

// Plus is the set-up memory of s and o together (a machine and the stack
// opened on it).
func (s Setup) Plus(o Setup) Setup {
	what := s.What
	if o.What != "" {
		if what != "" {
			what += "; "
		}
		what += o.What
	}
	att := s.Attempts
	if att == nil {
		att = o.Attempts
	}
	return Setup{PerProc: s.PerProc + o.PerProc, PerPair: s.PerPair + o.PerPair, What: what, MaxProcs: max(s.MaxProcs, o.MaxProcs), Attempts: att}
}

// Fit is the most processes whose set-up memory is within budget bytes
// (0 when not even one fits).
func (s Setup) Fit(budget float64) int {
	a, b := s.PerPair, s.PerProc-s.PerPair // a n^2 + b n <= budget
	var n float64
	switch {
	case a > 0:
		n = (-b + math.Sqrt(b*b+4*a*budget)) / (2 * a)
	case b > 0:
		n = budget / b
	default:
		return math.MaxInt32
	}
	k := int(math.Min(math.Floor(n), math.MaxInt32))
	for k > 0 && s.Bytes(k) > budget {
		k--
	}
	return k
}

// Describe says the per-process and per-pair figures in words.
func (s Setup) Describe() string {
	var parts []string
	if s.PerProc > 0 {
		parts = append(parts, Bytes(s.PerProc)+" a process")
	}
	if s.PerPair > 0 {
		parts = append(parts, Bytes(s.PerPair)+" a pair of processes")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " and ")
}

// Bytes says a number of bytes in the largest fitting unit ("2.3 GB").
func Bytes(b float64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.3g TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.3g GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.3g MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.3g KB", b/1e3)
	}
	return fmt.Sprintf("%.0f bytes", b)
}

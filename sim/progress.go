package sim

import (
	"fmt"
	"strings"
)

// DefaultNoProgress is how long, in simulated time, processes may keep
// retrying with no progress anywhere (Engine.Progress) before the run
// ends as a livelock, unless Limits.NoProgress says otherwise: one
// simulated second, thousands of times the longest transfer a retry
// repeats (a 16 KB ScaMPI chunk over SCI takes about 200 us), so a run
// that retries at a rate it can survive is never stopped by it.
const DefaultNoProgress = Second

// retrying is what one process retried since the last progress.
type retrying struct {
	p     *Proc
	what  string
	n     uint64
	first Time
}

// Progress tells the engine that the protocols moved forward: a message
// was delivered, a checkpoint completed. It restarts the livelock
// detector's clock (Retry).
func (e *Engine) Progress() {
	e.lastProgress = e.now
	e.retries = e.retries[:0]
}

// Retry tells the engine that p repeats a step after a failure (what
// says which: "a checkpointed write (Figure 1.2's loop)"). When
// processes keep retrying and nothing calls Progress for
// Limits.NoProgress of simulated time (DefaultNoProgress if 0), the run
// ends as a *LivelockError naming each process that retried, what, how
// often and since when.
func (e *Engine) Retry(p *Proc, what string) {
	found := false
	for i := range e.retries {
		if r := &e.retries[i]; r.p == p && r.what == what {
			r.n++
			found = true
			break
		}
	}
	if !found {
		e.retries = append(e.retries, retrying{p: p, what: what, n: 1, first: e.now})
	}
	window := e.limits.NoProgress
	if window == 0 {
		window = DefaultNoProgress
	}
	if window > 0 && e.now-e.lastProgress > window {
		e.Fail(e.retryLivelock(window))
	}
}

// retryLivelock is the report of retries without progress.
func (e *Engine) retryLivelock(window Time) *LivelockError {
	l := &LivelockError{At: e.now, NoProgressSince: e.lastProgress}
	for _, r := range e.retries {
		span := e.now - r.first
		rate := ""
		if span > 0 && r.n > 1 {
			rate = fmt.Sprintf(", every %v on average", span/Time(r.n-1))
		}
		l.Retries = append(l.Retries, fmt.Sprintf("%s retried %s %d times since %v%s", r.p.name, r.what, r.n, r.first, rate))
	}
	for _, p := range e.procs {
		if p.state != stateDone && !p.daemon {
			l.Waiting = append(l.Waiting, p.waiter())
		}
	}
	l.Window = window
	return l
}

// retryReport formats a LivelockError's retries, if any.
func (l *LivelockError) retryReport() string {
	if len(l.Retries) == 0 {
		return ""
	}
	return fmt.Sprintf("\nretries with no progress (no delivery, no completed checkpoint) since %v, longer than %v:\n  %s",
		l.NoProgressSince, l.Window, strings.Join(l.Retries, "\n  "))
}

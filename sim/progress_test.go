package sim

import (
	"errors"
	"strings"
	"testing"
)

// TestRetryLivelock: a process that retries with no progress for longer
// than Limits.NoProgress ends the run as a livelock naming it, what it
// retries and how often; one whose retries are interleaved with progress
// runs to its end.
func TestRetryLivelock(t *testing.T) {
	for _, c := range []struct {
		name       string
		progress   int // Progress every this many retries (0: never)
		window     Time
		wantLive   bool
		wantDetail string
	}{
		{"no progress", 0, 0, true, "p0 retried a write to rank 1"},
		{"no progress, short window", 0, Micro(1000), true, "every 10us on average"},
		{"progress", 5, 0, false, ""},
		{"no progress, detector off", 0, -1, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := NewEngine(1)
			e.SetLimits(Limits{NoProgress: c.window, MaxTime: 3 * Second})
			e.Spawn("p0", func(p *Proc) {
				for i := 1; i <= 200000; i++ {
					p.Sleep(Micro(10))
					if c.progress > 0 && i%c.progress == 0 {
						e.Progress()
						continue
					}
					e.Retry(p, "a write to rank 1")
				}
			})
			err := e.Run()
			var l *LivelockError
			if got := errors.As(err, &l); got != c.wantLive {
				t.Fatalf("livelock %v, want %v: %v", got, c.wantLive, err)
			}
			if c.wantLive {
				if len(l.Retries) != 1 || !strings.Contains(err.Error(), c.wantDetail) {
					t.Errorf("report %q lacks %q", err, c.wantDetail)
				}
				w := c.window
				if w == 0 {
					w = DefaultNoProgress
				}
				if l.At <= w || l.At > w+Micro(20) {
					t.Errorf("ended at %v, want just after %v", l.At, w)
				}
			} else if err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
}

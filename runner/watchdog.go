package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/msgsim/msgsim/report"
	"github.com/msgsim/msgsim/scenarios"
)

// DefaultWallSeconds bounds a run's wall-clock time when the scenario sets
// no limits.max_wall_seconds, so that no run hangs: an hour, since it
// bounds a whole run (all series and points) on a machine that may be
// shared, and abandons the run when it fires.
const DefaultWallSeconds = 3600

// Watchdog is a run's wall-clock bound (zero Limit: none).
type Watchdog struct {
	Limit   time.Duration
	Seconds float64 // Limit in seconds, as the scenario gives it
	Set     bool    // from the scenario (else the default)
}

// WallLimit is the watchdog of a run of s: limits.max_wall_seconds, or
// DefaultWallSeconds. It never decides a result: engines are bounded only
// in events and simulated time, which are the same on every machine; when
// the watchdog fires the whole run is abandoned (Run returns a
// *WallError) and nothing is written.
func WallLimit(s *scenarios.Scenario) Watchdog {
	if w := s.Limits.MaxWallSeconds; w > 0 {
		return Watchdog{Limit: seconds(w), Seconds: w, Set: true}
	}
	return Watchdog{Limit: seconds(DefaultWallSeconds), Seconds: DefaultWallSeconds}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// WallError is a run abandoned by its watchdog. It names what was running
// and what to change; it is never turned into a row or a failure of the
// results, which would then depend on the machine's load.
type WallError struct {
	Scenario string // in a run of many (a suite)
	Watchdog Watchdog
	Running  []string // "series S (last finished point: ...)", in series order
}

func (e *WallError) Error() string {
	what := "the default wall-time limit"
	knob := "set limits.max_wall_seconds"
	if e.Watchdog.Set {
		what, knob = "the wall-time limit (limits.max_wall_seconds)", "raise limits.max_wall_seconds"
	}
	at := "no series running"
	if len(e.Running) > 0 {
		at = strings.Join(e.Running, ", ")
	}
	if e.Scenario != "" {
		what = e.Scenario + ": " + what
	}
	return fmt.Sprintf("%s of %s s reached at %s; the run was abandoned and nothing was written (a wall-clock limit never decides a result); %s or run with fewer -j",
		what, report.FormatFloat(e.Watchdog.Seconds), at, knob)
}

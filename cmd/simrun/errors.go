package main

import (
	"fmt"
	"strings"

	"github.com/msgsim/msgsim/runner"
)

// joinLines formats errors one per line.
func joinLines(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// seriesError prefixes a run error with its series, unless the workload
// already named the series in it (runner.SeriesError).
func seriesError(series string, err error) string { return runner.SeriesError(series, err) }

package main

import (
	"fmt"
	"strings"
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
// already named the series in it.
func seriesError(series string, err error) string {
	msg := err.Error()
	if strings.Contains(msg, "series "+series+":") || strings.HasPrefix(msg, series+":") {
		return msg
	}
	return fmt.Sprintf("series %s: %s", series, msg)
}

package litmus

import (
	"bufio"
	"fmt"
	"io"
)

// Write prints the outcome in the style of litmus7: a header with the
// programs, every final state with its count ("*>" marks the states
// satisfying the condition), "Ok" if the condition was observed or "No",
// the witnesses, failed runs if any, and as last line
// "Observation TEST Never|Sometimes|Always POSITIVE NEGATIVE".
func Write(w io.Writer, o *Outcome) error {
	b := bufio.NewWriter(w)
	t := o.Test
	fmt.Fprintf(b, "Test %s on model %s: %d runs, seed %d\n", t.Name, o.Model, o.Opts.Runs, o.Opts.Seed)
	for _, line := range t.Program() {
		fmt.Fprintf(b, "  %s\n", line)
	}
	fmt.Fprintf(b, "Histogram (%d states)\n", len(o.States))
	for _, s := range o.States {
		mark := ":>"
		if s.Cond {
			mark = "*>"
		}
		fmt.Fprintf(b, "%-6d%s%s\n", s.Count, mark, s.Text)
	}
	if o.Observed() {
		fmt.Fprintln(b, "Ok")
	} else {
		fmt.Fprintln(b, "No")
	}
	fmt.Fprintln(b, "Witnesses")
	fmt.Fprintf(b, "Positive: %d, Negative: %d\n", o.Positive, o.Negative)
	verdict := "NOT validated"
	if o.Observed() {
		verdict = "validated"
	}
	fmt.Fprintf(b, "Condition exists (%s) is %s\n", t.CondString(), verdict)
	if o.Failed > 0 {
		fmt.Fprintf(b, "Failed runs: %d (no final state)\n", o.Failed)
		fmt.Fprintf(b, "First failure: %v\n", o.FirstFailure)
	}
	fmt.Fprintf(b, "Observation %s %s %d %d\n", t.Name, o.Observation(), o.Positive, o.Negative)
	return b.Flush()
}

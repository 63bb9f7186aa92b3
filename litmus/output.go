package litmus

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Write prints the outcome as herd7 (an exhaustive outcome) or litmus7 (a
// sampled one) print theirs, so that scripts reading their output read
// ours. First, as litmus7 does, comment lines starting with '%' give the
// model and how the states were found, and the programs. Then:
//
//	Test NAME Allowed|Forbidden|Required   (exists, ~exists, forall)
//	States N                  (herd7)  or  Histogram (N states) (litmus7)
//	<each final state>                      <count> *>|:> <state>
//	Ok|No
//	Witnesses
//	Positive: P Negative: N               Positive: P, Negative: N
//	Condition exists (...)                Condition exists (...) is validated
//	Observation NAME Never|Sometimes|Always P N
//	Observation NAME None 0 0 (no run finished)   (every run failed)
//
// "Ok" means the condition (exists, ~exists or forall) holds; P and N
// count the final states (herd7) or runs (litmus7) that satisfy the
// condition's proposition or not. Runs or paths that did not finish are
// reported on '%' lines before the last one.
func Write(w io.Writer, o *Outcome) error {
	b := bufio.NewWriter(w)
	t := o.Test
	how := fmt.Sprintf("sampled: %d runs, seed %d", o.Opts.Runs, o.Opts.Seed)
	if o.Exhaustive {
		how = fmt.Sprintf("exhaustive: %d states explored", o.Explored)
	}
	fmt.Fprintf(b, "%% Results for %s on model %s (%s)\n", t.Name, o.Model, how)
	for _, line := range t.Program() {
		fmt.Fprintf(b, "%%   %s\n", line)
	}
	kind := map[Quant]string{Exists: "Allowed", NotExists: "Forbidden", Forall: "Required"}[t.Cond.Quant]
	fmt.Fprintf(b, "Test %s %s\n", t.Name, kind)
	if o.Exhaustive {
		fmt.Fprintf(b, "States %d\n", len(o.States))
		for _, s := range o.States {
			fmt.Fprintln(b, s.Text)
		}
	} else {
		fmt.Fprintf(b, "Histogram (%d states)\n", len(o.States))
		for _, s := range o.States {
			mark := ":>"
			if s.Cond {
				mark = "*>"
			}
			fmt.Fprintf(b, "%-6d%s%s\n", s.Count, mark, s.Text)
		}
	}
	if o.Validated() {
		fmt.Fprintln(b, "Ok")
	} else {
		fmt.Fprintln(b, "No")
	}
	fmt.Fprintln(b, "Witnesses")
	cond := fmt.Sprintf("%s (%s)", t.Cond.Quant, t.CondString())
	if o.Exhaustive {
		fmt.Fprintf(b, "Positive: %d Negative: %d\n", o.Positive, o.Negative)
		fmt.Fprintf(b, "Condition %s\n", cond)
	} else {
		fmt.Fprintf(b, "Positive: %d, Negative: %d\n", o.Positive, o.Negative)
		verdict := "NOT validated"
		if o.Validated() {
			verdict = "validated"
		}
		fmt.Fprintf(b, "Condition %s is %s\n", cond, verdict)
	}
	if o.Filtered > 0 {
		fmt.Fprintf(b, "%% Filtered out: %d runs (filter %s)\n", o.Filtered, o.Test.Filter.format(o.Test, false))
	}
	if o.Failed > 0 {
		what := "runs"
		if o.Exhaustive {
			what = "paths"
		}
		fmt.Fprintf(b, "%% Failed %s: %d (no final state)\n", what, o.Failed)
		fmt.Fprintf(b, "%% First failure: %s\n", strings.ReplaceAll(o.FirstFailure.Error(), "\n", "\n% "))
	}
	fmt.Fprintf(b, "Observation %s %s %d %d", t.Name, o.Observation(), o.Positive, o.Negative)
	if o.Observation() == "None" {
		what := "run"
		if o.Exhaustive {
			what = "path"
		}
		fmt.Fprintf(b, " (no %s finished)", what)
	}
	fmt.Fprintln(b)
	return b.Flush()
}

// Validated reports whether the test's condition holds: exists, some state
// satisfies the proposition; ~exists, none does; forall, every one does.
func (o *Outcome) Validated() bool {
	if o.Positive+o.Negative == 0 {
		return o.Test.Cond.Quant == NotExists
	}
	return o.Test.Cond.Validated(o.Positive, o.Negative)
}

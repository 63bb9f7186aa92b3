package runner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/msgsim/msgsim/scenarios"
	"github.com/msgsim/msgsim/workloads"
)

type kindErr struct{ kind string }

func (e kindErr) Error() string       { return "s: recorded" }
func (e kindErr) FailureKind() string { return e.kind }

func TestJudge(t *testing.T) {
	failing := func(kind string) Outcome {
		return Outcome{Spec: workloads.Spec{Series: "s"}, Result: workloads.Result{Failures: []workloads.Failure{{Kind: kind, Detail: "series s: what"}}}}
	}
	expect := func(kind string) *scenarios.Scenario {
		return &scenarios.Scenario{Expect: &scenarios.Expect{Failure: kind, Why: " why "}}
	}
	for _, c := range []struct {
		name string
		s    *scenarios.Scenario
		runs []Outcome
		ok   bool
		msg  string
	}{
		{"clean", &scenarios.Scenario{}, []Outcome{{Spec: workloads.Spec{Series: "s"}}}, true, "ok"},
		{"failure", &scenarios.Scenario{}, []Outcome{failing("loss")}, false, "FAILED: 1 failure(s), see above"},
		{"expected", expect("loss"), []Outcome{failing("loss")}, true, "expected failure: loss — why"},
		{"expected and more", expect("loss"), []Outcome{failing("loss"), failing("corruption")}, false, "FAILED: the expected loss happened, but so did other failures"},
		{"expected missing", expect("loss"), []Outcome{{Spec: workloads.Spec{Series: "s"}}}, false, "FAILED: the scenario expects a loss (why), which did not happen"},
		{"recorded error", expect("deadlock"), []Outcome{{Spec: workloads.Spec{Series: "s"}, Err: kindErr{"deadlock"}}}, true, "expected failure: deadlock — why"},
	} {
		v := Judge(c.s, c.runs)
		if v.OK != c.ok || v.Message != c.msg {
			t.Errorf("%s: ok %v %q, want %v %q", c.name, v.OK, v.Message, c.ok, c.msg)
		}
	}
}

func TestFailureKindAndLine(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("x"), "error"},
		{fmt.Errorf("wrapped: %w", kindErr{"livelock"}), "livelock"},
	} {
		if got := FailureKind(c.err); got != c.want {
			t.Errorf("FailureKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if got := FailureLine("a", "loss", "series a: lost 1"); got != "series a: loss: lost 1" {
		t.Errorf("FailureLine: %q", got)
	}
}

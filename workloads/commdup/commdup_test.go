package commdup

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/stacks"
)

// TestLevel: the level a process asks for is the level param, by default
// single with one thread and multiple with two; two threads at another
// level, or an unknown level, are refused.
func TestLevel(t *testing.T) {
	for _, c := range []struct {
		threads int
		level   string
		want    stacks.ThreadLevel
		err     string
	}{
		{1, "", stacks.ThreadSingle, ""},
		{2, "", stacks.ThreadMultiple, ""},
		{1, "multiple", stacks.ThreadMultiple, ""},
		{1, "funneled", stacks.ThreadFunneled, ""},
		{2, "serialized", 0, "need multiple"},
		{1, "many", 0, "level must be"},
	} {
		p := DefaultParams()
		p.Threads, p.Level = c.threads, c.level
		err := p.validate()
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("threads %d level %q: %v, want %q", c.threads, c.level, err, c.err)
			}
		case err != nil:
			t.Errorf("threads %d level %q: %v", c.threads, c.level, err)
		case p.level() != c.want:
			t.Errorf("threads %d level %q: asks for %v, want %v", c.threads, c.level, p.level(), c.want)
		}
	}
}

// TestAverage: the average param is process (the default) or thread;
// anything else is refused, naming the field.
func TestAverage(t *testing.T) {
	for _, c := range []struct {
		average string
		err     string
	}{
		{AverageProcess, ""},
		{AverageThread, ""},
		{"rank", "average must be"},
	} {
		p := DefaultParams()
		p.Threads, p.Average = 2, c.average
		err := p.validate()
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("average %q: %v, want %q", c.average, err, c.err)
		}
	}
	if DefaultParams().Average != AverageProcess {
		t.Errorf("default average %q, want %q", DefaultParams().Average, AverageProcess)
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/paramdoc"
	"github.com/msgsim/msgsim/machines"
)

// TestParamsCommand: simrun params lists every machine, stack and
// workload, and for one its parameters with default, range and source.
func TestParamsCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"params"}, exitOK, []string{"machine   t3d", "stack     mpich", "workload  pingpong"}},
		{[]string{"params", "t3d"}, exitOK, []string{"  clock_mhz: 150   [1, 10000] MHz\n", "150 MHz DEC Alpha 21064 (EV4)", "  memcpy_mbps: 170"}},
		{[]string{"params", "sci"}, exitOK, []string{"  torus_h: 12   [1, 4096] nodes\n      see torus_w\n", "torus_w and torus_h are"}},
		{[]string{"params", "pingpong"}, exitOK, []string{"  mode: sync\n"}},
		{[]string{"params", "t3dd"}, exitUsage, []string{`no machine, stack or workload "t3dd"`}},
	} {
		code, stdout, stderr := simrun(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout+stderr, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, stdout+stderr)
			}
		}
	}
}

// TestEveryMachineParamDocumented: every parameter of every machine has
// a doc comment (where its default comes from), so simrun params never
// shows a bare value.
func TestEveryMachineParamDocumented(t *testing.T) {
	for _, m := range builtins().Machines() {
		code, stdout, _ := simrun(t, "params", m.Name)
		if code != exitOK {
			t.Fatalf("params %s: exit %d", m.Name, code)
		}
		lines := strings.Split(stdout, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "      ") && (i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "      ")) {
				t.Errorf("machine %s: parameter without documentation: %s", m.Name, strings.TrimSpace(l))
			}
		}
	}
}

func TestDocOf(t *testing.T) {
	order := []paramdoc.Field{
		{YAML: "torus_w", Go: "TorusW", Doc: "TorusW and TorusH are the torus; TorusWide is not TorusW."},
		{YAML: "torus_h", Go: "TorusH"},
	}
	if got, want := docOf(order[0], order), "torus_w and torus_h are the torus; TorusWide is not torus_w."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := docOf(order[1], order); got != "see torus_w" {
		t.Errorf("got %q", got)
	}
}

// TestEveryMachineStatesRanges: every machine's params state their
// plausible ranges (Ranges), which validate checks and simrun params
// prints.
func TestEveryMachineStatesRanges(t *testing.T) {
	for _, m := range builtins().Machines() {
		d, err := m.Defaults()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.(interface {
			Ranges() ([]machines.FloatRange, []machines.IntRange)
		}); !ok {
			t.Errorf("machine %s: its params have no Ranges method", m.Name)
		}
	}
}

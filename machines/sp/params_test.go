package sp

import (
	"strings"
	"testing"

	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
)

var (
	_ machines.Memory = (*Machine)(nil)
)

// TestParamsValidate: the defaults are valid; a value out of range or an
// unknown progress mode is an error naming its YAML field.
func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		set   func(*Params)
	}{
		{"adapter_mbps", func(p *Params) { p.AdapterMBps = 0 }},
		{"packet_bytes", func(p *Params) { p.PacketBytes = 1 }},
		{"progress", func(p *Params) { p.Progress = "sometimes" }},
		{"interrupt_us", func(p *Params) { p.InterruptUs = -1 }},
		{"switch_jitter_us", func(p *Params) { p.SwitchJitterUs = -1 }},
	} {
		p := DefaultParams()
		c.set(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
	if _, err := New(sim.NewEngine(1), 0, DefaultParams()); err == nil {
		t.Error("0 nodes accepted")
	}
}

package t3d_test

import (
	"errors"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/t3d"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"gopkg.in/yaml.v3"
)

// build decodes node as a scenario's machine.params (registry.Decode:
// strictly, over the defaults, validated) and builds a machine of procs
// processes, an error of New located at the params, as the registry does.
func build(file string, node *yaml.Node, procs int) (*t3d.Machine, error) {
	p, err := registry.Decode(t3d.DefaultParams)(file, "machine.params", node)
	if err != nil {
		return nil, err
	}
	m, err := t3d.New(sim.NewEngine(1), procs, p)
	if err != nil {
		return nil, machines.Locate(file, "machine.params", node, err)
	}
	return m, nil
}

// TestBadParams: values that once gave plausible wrong results or a crash
// (review finding P1), given as a scenario's machine.params, are errors
// naming the field, file and line.
func TestBadParams(t *testing.T) {
	for _, tc := range []struct {
		params string // the machine.params mapping, at line 3
		pes    int
		line   int
		field  string
	}{
		{"{hop_ns: 1e30, pes_per_node: 1}", 2, 3, "hop_ns"},
		{"{put_startup_ns: .inf}", 2, 3, "put_startup_ns"},
		{"{put_mbps: 1e-300}", 2, 3, "put_mbps"},
		{"{link_mbps: .nan}", 2, 3, "link_mbps"},
		{"{get_mbps: -.inf}", 2, 3, "get_mbps"},
		{"{clock_mhz: 0}", 2, 3, "clock_mhz"},
		{"{interface_ns: -1}", 2, 3, "interface_ns"},
		{"{barrier_ns: 1e300}", 2, 3, "barrier_ns"},
		{"{fence_cycles: .nan}", 2, 3, "fence_cycles"},
		{"{copy_startup_cycles: -3}", 2, 3, "copy_startup_cycles"},
		{"{cache_flush_cycles_per_line: 1e30}", 2, 3, "cache_flush_cycles_per_line"},
		{"{pes_per_node: 0}", 2, 3, "pes_per_node"},
		{"{pes_per_node: 1000000000}", 2, 3, "pes_per_node"},
		{"{memory_mb: 1000000000000}", 2, 3, "memory_mb"},
		{"{cache_line_bytes: 48}", 2, 3, "cache_line_bytes"},
		{"{cache_kb: 1000000}", 2, 3, "cache_kb"},
		{"{packet_header_bytes: -16}", 2, 3, "packet_header_bytes"},
		{"{torus_nodes: [2, 2]}", 2, 3, "torus_nodes"},
		{"{torus_nodes: [4, 0, 4]}", 2, 3, "torus_nodes[1]"},
		{"{torus_nodes: [100000, 100000, 100000]}", 2, 3, "torus_nodes[0]"},
		{"{torus_nodes: [64, 64, 64]}", 2, 3, "torus_nodes"},
		// a shape that does not hold the PEs: known only when building
		{"{torus_nodes: [2, 2, 2]}", 128, 3, "torus_nodes"},
	} {
		t.Run(tc.params, func(t *testing.T) {
			src := "machine:\n  name: t3d\n  params: " + tc.params + "\n"
			root, err := strictyaml.Parse("bad.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = build("bad.yaml", strictyaml.Find(root, "machine.params"), tc.pes)
			var se *strictyaml.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *strictyaml.Error", err)
			}
			if se.File != "bad.yaml" || se.Line != tc.line || se.Field != "machine.params."+tc.field {
				t.Errorf("error at %s:%d field %q, want bad.yaml:%d field machine.params.%s (%v)", se.File, se.Line, se.Field, tc.line, tc.field, err)
			}
		})
	}
}

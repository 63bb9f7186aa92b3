package sx4_test

import (
	"errors"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/machines/sx4"
	"github.com/msgsim/msgsim/registry"
	"github.com/msgsim/msgsim/sim"
	"gopkg.in/yaml.v3"
)

// build decodes node as a scenario's machine.params (registry.Decode:
// strictly, over the defaults, validated) and builds a machine of procs
// processes, an error of New located at the params, as the registry does.
func build(file string, node *yaml.Node, procs int) (*sx4.Machine, error) {
	p, err := registry.Decode(sx4.DefaultParams)(file, "machine.params", node)
	if err != nil {
		return nil, err
	}
	m, err := sx4.New(sim.NewEngine(1), procs, p)
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
		field  string
	}{
		{"{memcpy_mbps: 1e-300}", "memcpy_mbps"},
		{"{cache_flush_us: 1e30}", "cache_flush_us"},
		{"{shm_max_segment_mb: 1e30}", "shm_max_segment_mb"},
		{"{clock_mhz: .inf}", "clock_mhz"},
		{"{clock_mhz: .nan}", "clock_mhz"},
		{"{semop_us: -.inf}", "semop_us"},
		{"{semop_us: 1e300}", "semop_us"},
		{"{sync_ns: .nan}", "sync_ns"},
		{"{vector_startup_ns: -1}", "vector_startup_ns"},
		{"{shm_max_segment_mb: 0}", "shm_max_segment_mb"},
		{"{shm_max_segment_mb: 64, node_memory_mb: 32}", "shm_max_segment_mb"},
		{"{node_memory_mb: 0}", "node_memory_mb"},
		{"{node_memory_mb: 1000000000000}", "node_memory_mb"},
		{"{cache_kb: 0}", "cache_kb"},
		{"{cache_kb: 1000000}", "cache_kb"},
		{"{cache_line_bytes: 100}", "cache_line_bytes"},
		{"{cache_ways: 3}", "cache_kb"},
		{"{store_buffer_depth: -1}", "store_buffer_depth"},
		{"{store_buffer_depth: 1000000000}", "store_buffer_depth"},
	} {
		t.Run(tc.params, func(t *testing.T) {
			src := "machine:\n  name: sx4\n  params: " + tc.params + "\n"
			root, err := strictyaml.Parse("bad.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = build("bad.yaml", strictyaml.Find(root, "machine.params"), 2)
			var se *strictyaml.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *strictyaml.Error", err)
			}
			if se.File != "bad.yaml" || se.Line != 3 || se.Field != "machine.params."+tc.field {
				t.Errorf("error at %s:%d field %q, want bad.yaml:3 field machine.params.%s (%v)", se.File, se.Line, se.Field, tc.field, err)
			}
		})
	}
}

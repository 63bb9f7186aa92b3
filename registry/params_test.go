package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsim/msgsim/internal/strictyaml"
	"github.com/msgsim/msgsim/machines"
	"github.com/msgsim/msgsim/sim"
)

// TestBadMachineParams: values that once gave plausible wrong results or a
// crash, given as a scenario's machine.params, are errors naming the
// field, file and line, whether the decoder finds them (strictly, over the
// defaults, validated) or only building the machine does.
func TestBadMachineParams(t *testing.T) {
	r := Default()
	for _, tc := range []struct {
		machine string
		params  string // the machine.params mapping, at line 3
		procs   int
		field   string
	}{
		{"sx4", "{memcpy_mbps: 1e-300}", 2, "memcpy_mbps"},
		{"sx4", "{cache_flush_us: 1e30}", 2, "cache_flush_us"},
		{"sx4", "{shm_max_segment_mb: 1e30}", 2, "shm_max_segment_mb"},
		{"sx4", "{clock_mhz: .inf}", 2, "clock_mhz"},
		{"sx4", "{clock_mhz: .nan}", 2, "clock_mhz"},
		{"sx4", "{semop_us: -.inf}", 2, "semop_us"},
		{"sx4", "{semop_us: 1e300}", 2, "semop_us"},
		{"sx4", "{sync_ns: .nan}", 2, "sync_ns"},
		{"sx4", "{vector_startup_ns: -1}", 2, "vector_startup_ns"},
		{"sx4", "{shm_max_segment_mb: 0}", 2, "shm_max_segment_mb"},
		{"sx4", "{shm_max_segment_mb: 64, node_memory_mb: 32}", 2, "shm_max_segment_mb"},
		{"sx4", "{node_memory_mb: 0}", 2, "node_memory_mb"},
		{"sx4", "{node_memory_mb: 1000000000000}", 2, "node_memory_mb"},
		{"sx4", "{cache_kb: 0}", 2, "cache_kb"},
		{"sx4", "{cache_kb: 1000000}", 2, "cache_kb"},
		{"sx4", "{cache_line_bytes: 100}", 2, "cache_line_bytes"},
		{"sx4", "{cache_ways: 3}", 2, "cache_kb"},
		{"sx4", "{store_buffer_depth: -1}", 2, "store_buffer_depth"},
		{"sx4", "{store_buffer_depth: 1000000000}", 2, "store_buffer_depth"},
		{"challenge", "{bus_mbps: 1e-300}", 2, "bus_mbps"},
		{"challenge", "{bus_address_ns: .nan}", 2, "bus_address_ns"},
		{"challenge", "{memory_latency_ns: -1}", 2, "memory_latency_ns"},
		{"challenge", "{clock_mhz: .inf}", 2, "clock_mhz"},
		{"challenge", "{cache_ways: 3}", 2, "cache_kb"},
		{"challenge", "{cache_line_bytes: 100}", 2, "cache_line_bytes"},
		{"challenge", "{node_memory_mb: 1000000000000}", 2, "node_memory_mb"},
		{"challenge", "{semop_us: 1e300}", 2, "semop_us"},
		{"challenge", "{load_cycles: -1}", 2, "load_cycles"},
		{"t3d", "{hop_ns: 1e30, pes_per_node: 1}", 2, "hop_ns"},
		{"t3d", "{put_startup_ns: .inf}", 2, "put_startup_ns"},
		{"t3d", "{put_mbps: 1e-300}", 2, "put_mbps"},
		{"t3d", "{link_mbps: .nan}", 2, "link_mbps"},
		{"t3d", "{get_mbps: -.inf}", 2, "get_mbps"},
		{"t3d", "{clock_mhz: 0}", 2, "clock_mhz"},
		{"t3d", "{interface_ns: -1}", 2, "interface_ns"},
		{"t3d", "{barrier_ns: 1e300}", 2, "barrier_ns"},
		{"t3d", "{fence_cycles: .nan}", 2, "fence_cycles"},
		{"t3d", "{copy_startup_cycles: -3}", 2, "copy_startup_cycles"},
		{"t3d", "{cache_flush_cycles_per_line: 1e30}", 2, "cache_flush_cycles_per_line"},
		{"t3d", "{thread_switch_cycles: -1}", 2, "thread_switch_cycles"},
		{"t3d", "{icache_kb: 0}", 2, "icache_kb"},
		{"t3d", "{pes_per_node: 0}", 2, "pes_per_node"},
		{"t3d", "{pes_per_node: 1000000000}", 2, "pes_per_node"},
		{"t3d", "{memory_mb: 1000000000000}", 2, "memory_mb"},
		{"t3d", "{cache_line_bytes: 48}", 2, "cache_line_bytes"},
		{"t3d", "{cache_kb: 1000000}", 2, "cache_kb"},
		{"t3d", "{packet_header_bytes: -16}", 2, "packet_header_bytes"},
		{"t3d", "{torus_nodes: [2, 2]}", 2, "torus_nodes"},
		{"t3d", "{torus_nodes: [4, 0, 4]}", 2, "torus_nodes[1]"},
		{"t3d", "{torus_nodes: [100000, 100000, 100000]}", 2, "torus_nodes[0]"},
		{"t3d", "{torus_nodes: [64, 64, 64]}", 2, "torus_nodes"},
		// a shape that does not hold the PEs: known only when building
		{"t3d", "{torus_nodes: [2, 2, 2]}", 128, "torus_nodes"},
		// packet-only features on the flow network model: the error is at
		// the feature and names network_model too
		{"t3d", "{network_model: packets}", 2, "network_model"},
		{"t3d", "{network_model: flow, packet_mode: true}", 2, "packet_mode"},
		{"sci", "{network_model: flow, reorder_ns: 0, crc_error_rate: 0.01}", 2, "crc_error_rate"},
		{"sci", "{network_model: flow, reorder_ns: 0, unplug_at_us: 5}", 2, "unplug_at_us"},
		{"sci", "{network_model: flow}", 2, "reorder_ns"},
		{"sp", "{network_model: flow, switch_jitter_us: 40}", 2, "switch_jitter_us"},
	} {
		t.Run(tc.machine+tc.params, func(t *testing.T) {
			e, ok := r.LookupMachine(tc.machine)
			if !ok {
				t.Fatalf("no machine %s", tc.machine)
			}
			src := "machine:\n  name: " + tc.machine + "\n  params: " + tc.params + "\n"
			root, err := strictyaml.Parse("bad.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			node := strictyaml.Find(root, "machine.params")
			p, err := e.decode("bad.yaml", "machine.params", node)
			if err == nil {
				if _, err = e.build(sim.NewEngine(1), tc.procs, p); err != nil {
					err = machines.Locate("bad.yaml", "machine.params", node, err)
				}
			}
			var se *strictyaml.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *strictyaml.Error", err)
			}
			if se.File != "bad.yaml" || se.Line != 3 || se.Field != "machine.params."+tc.field {
				t.Errorf("error at %s:%d field %q, want bad.yaml:3 field machine.params.%s (%v)", se.File, se.Line, se.Field, tc.field, err)
			}
			if strings.Contains(tc.params, "network_model: flow") && !strings.Contains(err.Error(), "network_model") {
				t.Errorf("%v: does not name network_model", err)
			}
		})
	}
}

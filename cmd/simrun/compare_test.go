package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowModelDeterministic: a scenario on the flow network model gives
// byte-identical outputs when rerun (a contended all-to-all, reduced).
func TestFlowModelDeterministic(t *testing.T) {
	src := `name: flow-det
seed: 3
machine: {name: t3d, params: {network_model: flow}}
stack: {name: aclmpl}
workload: {name: alltoall, params: {pes: [8], bytes: [64, 8192], mode: sync}}
series:
  - name: aclmpl
  - name: shmem
    stack: {name: shmem}
`
	dir := t.TempDir()
	file := filepath.Join(dir, "flow.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	for i := range out {
		d := filepath.Join(dir, "out"+string(rune('a'+i)))
		if code, stdout, stderr := simrun(t, "run", file, "--out", d, "--quiet"); code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(d, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("reruns differ:\n%s\n%s", out[0], out[1])
	}
}

// TestCompareNetwork: --compare-network prints a row per series and the
// claims on both models; on 2 PEs (nothing contends) they agree.
func TestCompareNetwork(t *testing.T) {
	code, stdout, stderr := simrun(t, "run", "t3d-table1", "--compare-network")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"### t3d-table1", "| sync-aclmpl | 1 | 0.00 % |", "| sync-aclmpl-4.5us | holds", "Claims: units 4 of 4 hold; flow 4 of 4 hold."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if code, _, stderr := simrun(t, "run", "sx4-fig1", "--compare-network"); code != exitUsage || !strings.Contains(stderr, "no series runs on a machine with a network") {
		t.Errorf("sx4-fig1: exit %d, %s", code, stderr)
	}
}

// TestNetworksFromRegistry: --compare-network learns from the registry
// which machines have a network (their params implement
// machines.Networked) and which packet-only features their defaults turn
// on.
func TestNetworksFromRegistry(t *testing.T) {
	flow, off := networks(builtins())
	wantFlow := map[string]string{"t3d": "{network_model: flow}", "sp": "{network_model: flow}", "sci": "{network_model: flow}"}
	wantOff := map[string]string{"sci": "{reorder_ns: 0}"}
	if !maps.Equal(flow, wantFlow) || !maps.Equal(off, wantOff) {
		t.Errorf("networks: flow %v, packet-only off %v; want %v, %v", flow, off, wantFlow, wantOff)
	}
}
